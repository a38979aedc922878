package data

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// decodeFetched decodes the record batches of a fetch (checking each CRC-32C) into records.
func decodeFetched(t *testing.T, raw []byte) (offsets []int64, recs []Record) {
	t.Helper()
	for len(raw) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		n := int(b.Length) + 12
		if got := crc32.Checksum(raw[21:n], crc32.MakeTable(crc32.Castagnoli)); got != uint32(b.CRC) {
			t.Fatalf("batch at %d: bad CRC", b.FirstOffset)
		}
		if b.Magic != 2 || b.ProducerID != -1 || b.Attributes&^attrCompressionMask != 0 || b.NumRecords != b.LastOffsetDelta+1 {
			t.Fatalf("batch header: %+v", b)
		}
		rest, err := decompress(b.Attributes&attrCompressionMask, b.Records, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for i := int32(0); i < b.NumRecords; i++ {
			l, used := binary.Varint(rest)
			var r kmsg.Record
			if err := r.ReadFrom(rest[:used+int(l)]); err != nil {
				t.Fatal(err)
			}
			rest = rest[used+int(l):]
			offsets = append(offsets, b.FirstOffset+int64(r.OffsetDelta))
			recs = append(recs, Record{Key: r.Key, Value: r.Value})
		}
		raw = raw[n:]
	}
	return offsets, recs
}

// TestGroupMetadataTopic: __consumer_offsets is created with one partition per shard and
// Kafka's configs, replaces an ordinary topic of the name, and takes the coordinator's records
// inside the caller's Pebble batch: consecutive offsets, tombstones as null values, nothing
// visible before the commit, a gap (never a half record) for a failed commit, the offsets kept
// across a restart.
func TestGroupMetadataTopic(t *testing.T) {
	e := newEnv(t)
	e.createTopic(GroupMetadataTopic, 1, nil) // what a client's Metadata request used to auto-create
	if created, err := e.p.EnsureGroupMetadataTopic(4, 1<<20, 0); err != nil || !created {
		t.Fatalf("ensure: %v %v", created, err)
	}
	ti, _ := e.p.Topic(GroupMetadataTopic)
	if ti.Partitions != 4 || !ti.Internal || ti.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("topic: %+v", ti)
	}
	if created, err := e.p.EnsureGroupMetadataTopic(4, 1<<20, 0); err != nil || created {
		t.Fatalf("ensure again: %v %v", created, err)
	}
	appendRecs := func(recs []Record, commit bool) {
		before := e.fetch(GroupMetadataTopic, 2, 0).HighWatermark
		b := e.db.NewBatch()
		done := e.p.AppendGroupMetadata(2, recs, b)
		if hw := e.fetch(GroupMetadataTopic, 2, 0).HighWatermark; hw != before {
			t.Fatalf("high watermark %d before the commit, was %d", hw, before)
		}
		if commit {
			if err := b.Commit(pebble.Sync); err != nil {
				t.Fatal(err)
			}
		}
		b.Close()
		done(commit)
	}
	appendRecs([]Record{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2"), Value: nil}}, true)
	appendRecs([]Record{{Key: []byte("lost"), Value: []byte("x")}}, false)
	appendRecs([]Record{{Key: []byte("k1"), Value: []byte("v2")}}, true)
	check := func() {
		t.Helper()
		f := e.fetch(GroupMetadataTopic, 2, 0)
		offs, recs := decodeFetched(t, f.RecordBatches)
		if f.HighWatermark != 4 || len(recs) != 3 || offs[0] != 0 || offs[1] != 1 || offs[2] != 3 ||
			string(recs[0].Value) != "v1" || recs[1].Value != nil || string(recs[2].Key) != "k1" || string(recs[2].Value) != "v2" {
			t.Fatalf("hw %d offsets %v records %q", f.HighWatermark, offs, recs)
		}
	}
	check()
	e.restart()
	check()
	if end := e.p.GroupMetadataEnd(2); end != 4 {
		t.Fatalf("end %d, want 4", end)
	}
	for from, want := range map[int64]string{0: "k1=v1 k2=<nil> k1=v2 ", 1: "k2=<nil> k1=v2 ", 3: "k1=v2 ", 4: ""} {
		got := ""
		if err := e.p.ReadGroupMetadata(context.Background(), 2, from, func(k, v []byte) error {
			if v == nil {
				got += string(k) + "=<nil> "
			} else {
				got += string(k) + "=" + string(v) + " "
			}
			return nil
		}); err != nil || got != want {
			t.Fatalf("read from %d: %q %v, want %q", from, got, err, want)
		}
	}
	if created, err := e.p.EnsureGroupMetadataTopic(4, 1<<20, 0); err != nil || created {
		t.Fatalf("ensure after restart: %v %v", created, err)
	}
	if done := e.p.AppendGroupMetadata(9, []Record{{Key: []byte("k")}}, e.db.NewBatch()); done == nil {
		t.Fatal("no done for a partition out of range")
	}
}

// TestGroupMetadataTopicCompressed: offsets.topic.compression.codec compresses the batches.
func TestGroupMetadataTopicCompressed(t *testing.T) {
	e := newEnv(t)
	if _, err := e.p.EnsureGroupMetadataTopic(2, 1<<20, 9); err == nil {
		t.Fatal("codec 9 accepted")
	}
	if _, err := e.p.EnsureGroupMetadataTopic(2, 1<<20, codecLz4); err != nil {
		t.Fatal(err)
	}
	b := e.db.NewBatch()
	done := e.p.AppendGroupMetadata(1, []Record{{Key: []byte("k"), Value: []byte("vvvvvvvvvvvvvvvvvvvv")}, {Key: []byte("k2")}}, b)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	done(true)
	f := e.fetch(GroupMetadataTopic, 1, 0)
	if f.RecordBatches[offAttributes+1]&attrCompressionMask != codecLz4 {
		t.Fatalf("batch not lz4: attributes %x", f.RecordBatches[offAttributes:offAttributes+2])
	}
	offs, recs := decodeFetched(t, f.RecordBatches)
	if len(recs) != 2 || offs[1] != 1 || string(recs[0].Value) != "vvvvvvvvvvvvvvvvvvvv" || recs[1].Value != nil {
		t.Fatalf("records %v %q", offs, recs)
	}
	var read []Record
	if err := e.p.ReadGroupMetadata(context.Background(), 1, 0, func(k, v []byte) error {
		read = append(read, Record{Key: append([]byte(nil), k...), Value: append([]byte(nil), v...)})
		return nil
	}); err != nil || len(read) != 2 || string(read[0].Value) != "vvvvvvvvvvvvvvvvvvvv" || len(read[1].Value) != 0 {
		t.Fatalf("read back compressed: %q %v", read, err)
	}
}
