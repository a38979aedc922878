package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/store"
)

// offsetsTopic makes __consumer_offsets readable: every batch of records a coordinator shard
// commits is appended, in Kafka's own record format (coordinator.KafkaRecord), to the topic's
// partition of that shard, inside the same Pebble batch (store.Mirror), so a consumer of the
// topic (Burrow, kminion, kafka-console-consumer's offsets formatter) sees exactly the committed
// records, in commit order, at offsets that survive restarts. The topic is compacted like
// Kafka's; the log cleaner keeps the latest record of every key.
type offsetsTopic struct {
	plane *data.Plane
	log   *slog.Logger
	// skipped counts records that could not be converted (corrupt); logged, never fatal.
	skipped atomic.Int64
}

// Stage implements store.Mirror.
func (o *offsetsTopic) Stage(shard int32, recs []store.Record, b *pebble.Batch) func(bool) {
	out := make([]data.Record, 0, len(recs))
	for _, r := range recs {
		if coordinator.KafkaVerbatim(r.Key) {
			out = append(out, data.Record(r))
			continue
		}
		k, v, err := coordinator.KafkaRecord(r.Key, r.Value)
		if errors.Is(err, coordinator.ErrNotKafkaRecord) {
			continue // muster's own records (rebalance history, share-partition state, pending transactional offsets: the OffsetCommit records of their commit follow)
		}
		if err != nil {
			if o.skipped.Add(1) <= 10 {
				o.log.Warn("coordinator record left out of __consumer_offsets", "shard", shard, "err", err)
			}
			continue
		}
		out = append(out, data.Record{Key: k, Value: v})
	}
	return o.plane.AppendGroupMetadata(shard, out, b)
}

// Verbatim implements store.MirrorLog: OffsetCommit and GroupMetadata records are in the
// topic exactly as the store holds them (coordinator.KafkaRecord leaves them unchanged).
func (o *offsetsTopic) Verbatim(key []byte) bool { return coordinator.KafkaVerbatim(key) }

// End implements store.MirrorLog.
func (o *offsetsTopic) End(shard int32) int64 { return o.plane.GroupMetadataEnd(shard) }

// Read implements store.MirrorLog.
func (o *offsetsTopic) Read(ctx context.Context, shard int32, from int64, fn func(key, value []byte) error) error {
	return o.plane.ReadGroupMetadata(ctx, shard, from, fn)
}

// fill appends every shard's current records to a new __consumer_offsets (a data dir written
// before the topic existed), before the coordinator starts writing to it.
func (o *offsetsTopic) fill(ctx context.Context, db *pebble.DB, st *store.Pebble) error {
	start, total := time.Now(), 0
	for shard := int32(0); shard < st.Config().Shards; shard++ {
		var chunk []store.Record
		flush := func() error {
			if len(chunk) == 0 {
				return nil
			}
			b := db.NewBatch()
			defer b.Close()
			done := o.Stage(shard, chunk, b)
			err := b.Commit(pebble.Sync)
			done(err == nil)
			total += len(chunk)
			chunk = chunk[:0]
			return err
		}
		err := st.Scan(ctx, shard, func(r store.Record) error {
			chunk = append(chunk, r)
			if len(chunk) == 1024 {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("filling %s partition %d: %w", data.GroupMetadataTopic, shard, err)
		}
	}
	if total > 0 {
		o.log.Info("filled __consumer_offsets with the coordinator's records", "records", total, "took", time.Since(start))
	}
	return nil
}
