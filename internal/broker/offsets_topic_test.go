package broker

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/store"
)

// A data dir whose coordinator records were written before __consumer_offsets existed gets
// them in the topic (each in its shard's partition) when a broker first starts on it, before
// the coordinator writes anything new; a later start adds nothing.
func TestOffsetsTopicFilledFromAnOlderDataDir(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: pebble.DefaultLogger})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenPebble(db, 4)
	if err != nil {
		t.Fatal(err)
	}
	const group = "old-group"
	shard := coordinator.ShardFor(group, 4)
	sh, err := st.Acquire(context.Background(), shard)
	if err != nil {
		t.Fatal(err)
	}
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: "t", Partition: 0}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42, LeaderEpoch: -1, CommitTimestamp: 1}).AppendTo(nil)
	if err := sh.Append(context.Background(), []store.Record{{Key: key, Value: val}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	start := func() *Broker {
		b, err := Start(Options{Listen: "127.0.0.1:0", DataDir: dir, Config: config.Defaults("offsets.topic.num.partitions=4"), Log: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	read := func(b *Broker) []kmsg.Record {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxBytes = 12, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = data.GroupMetadataTopic
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = shard, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		raw := b.Plane().Fetch(context.Background(), req).Topics[0].Partitions[0].RecordBatches
		var out []kmsg.Record
		for len(raw) > 0 {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			out = append(out, readRecords(t, rb)...)
			raw = raw[rb.Length+12:]
		}
		return out
	}
	b := start()
	recs := read(b)
	if len(recs) != 1 || string(recs[0].Key) != string(key) || string(recs[0].Value) != string(val) {
		t.Fatalf("records after the first start: %+v", recs)
	}
	b.Close()
	b = start()
	defer b.Close()
	if recs := read(b); len(recs) != 1 {
		t.Fatalf("records after a second start: %d", len(recs))
	}
}

func readRecords(t *testing.T, rb kmsg.RecordBatch) []kmsg.Record {
	t.Helper()
	var out []kmsg.Record
	rest := rb.Records
	for i := int32(0); i < rb.NumRecords; i++ {
		var r kmsg.Record
		n, used := binary.Varint(rest)
		if err := r.ReadFrom(rest[:used+int(n)]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
		rest = rest[used+int(n):]
	}
	return out
}
