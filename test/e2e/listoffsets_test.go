package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// TestListOffsetsByTimestampCompressed: a real kgo producer writes one
// compressed batch per codec; ListOffsets by timestamp and max-timestamp
// (what consumer-groups --reset-offsets --to-datetime/--by-duration use)
// find the record inside the batch, not the batch's first offset.
func TestListOffsetsByTimestampCompressed(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
		bits  int16
	}{
		{"none", kgo.NoCompression(), 0},
		{"gzip", kgo.GzipCompression(), 1},
		{"snappy", kgo.SnappyCompression(), 2},
		{"lz4", kgo.Lz4Compression(), 3},
		{"zstd", kgo.ZstdCompression(), 4},
	}
	base := time.UnixMilli(1_700_000_000_000)
	const n = 50
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			topic := "ts-" + c.name
			if r, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
				t.Fatal(err, r.Err)
			}
			// ManualFlushing: every record goes into one batch.
			prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.ManualFlushing(),
				kgo.ProducerBatchCompression(c.codec))
			for i := 0; i < n; i++ {
				r := &kgo.Record{Value: []byte(strings.Repeat(fmt.Sprint(i), 40)), Timestamp: base.Add(time.Duration(i) * time.Second)}
				prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
					if err != nil {
						t.Errorf("produce: %v", err)
					}
				})
			}
			if err := prod.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			// The log holds multi-record batches with the codec's bits
			// (ManualFlushing usually makes it one batch).
			fr := kmsg.NewPtrFetchRequest()
			fr.Version, fr.MaxBytes, fr.SessionEpoch = 11, 10<<20, -1
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic = topic
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 10<<20, -1
			ft.Partitions = append(ft.Partitions, fp)
			fr.Topics = append(fr.Topics, ft)
			raw := b.Plane().Fetch(ctx, fr).Topics[0].Partitions[0].RecordBatches
			batches, records, coded := 0, int32(0), 0
			for len(raw) > 0 {
				var rb kmsg.RecordBatch
				// franz-go sends a batch uncompressed when compressing does not shrink it.
				if err := rb.ReadFrom(raw); err != nil || (rb.Attributes&7 != c.bits && rb.Attributes&7 != 0) {
					t.Fatalf("stored batch %d: %v, attributes %x", batches, err, rb.Attributes)
				}
				if rb.Attributes&7 == c.bits {
					coded++
				}
				batches++
				records += rb.NumRecords
				raw = raw[rb.Length+12:]
			}
			if records != n || batches > n/4 || coded == 0 {
				t.Fatalf("%d records in %d batches, %d with codec bits %d", records, batches, coded, c.bits)
			}

			for _, want := range []int64{0, 1, 17, 49} {
				ms := base.Add(time.Duration(want)*time.Second).UnixMilli() - 500 // between want-1 and want
				if want == 0 {
					ms = base.UnixMilli()
				}
				lo, err := adm.ListOffsetsAfterMilli(ctx, ms, topic)
				if err != nil {
					t.Fatal(err)
				}
				o, _ := lo.Lookup(topic, 0)
				if o.Err != nil || o.Offset != want || o.Timestamp != base.Add(time.Duration(want)*time.Second).UnixMilli() {
					t.Errorf("after %d: offset %d ts %d err %v, want offset %d", ms, o.Offset, o.Timestamp, o.Err, want)
				}
			}
			mx, err := adm.ListMaxTimestampOffsets(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			if o, _ := mx.Lookup(topic, 0); o.Err != nil || o.Offset != n-1 {
				t.Errorf("max timestamp: offset %d err %v, want %d", o.Offset, o.Err, n-1)
			}
		})
	}
}
