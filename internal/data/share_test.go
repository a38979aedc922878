package data

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestShareReads: what share fetches read of a partition: its offsets, the batches holding an
// offset range (from a batch's base or from inside it, at least one batch whatever maxBytes says,
// nothing at or past the high watermark), a watch woken by produces, and the offset of a
// timestamp.
func TestShareReads(t *testing.T) {
	e := newEnv(t)
	info := e.createTopic("sq", 1, nil)
	for i := 0; i < 3; i++ { // batches 0-4, 5-9, 10-14
		e.produce("sq", 0, makeBatch(batchOpts{n: 5, valSize: 10, ts: 1000 + int64(i)*100}))
	}
	if ls, hw, err := e.p.PartitionOffsets(info.ID, 0); err != nil || ls != 0 || hw != 15 {
		t.Fatalf("offsets: %d %d %v", ls, hw, err)
	}
	if _, _, err := e.p.PartitionOffsets([16]byte{9}, 0); !errors.Is(err, kerr.UnknownTopicID) {
		t.Errorf("unknown topic: %v", err)
	}
	if _, _, err := e.p.PartitionOffsets(info.ID, 3); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown partition: %v", err)
	}
	bases := func(b []byte) []int64 {
		var out []int64
		for _, rb := range decodeBatches(t, b) {
			out = append(out, rb.FirstOffset)
		}
		return out
	}
	for _, c := range []struct {
		from, to int64
		max      int
		want     []int64
	}{
		{5, 9, 1 << 20, []int64{5}},
		{7, 12, 1 << 20, []int64{5, 10}},
		{0, 100, 1 << 20, []int64{0, 5, 10}},
		{0, 14, 1, []int64{0}}, // the first batch whatever the budget
		{15, 20, 1 << 20, nil},
	} {
		b, err := e.p.ReadRange(info.ID, 0, c.from, c.to, c.max)
		if err != nil {
			t.Fatal(err)
		}
		if got := bases(b); len(got) != len(c.want) || (len(got) > 0 && (got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1])) {
			t.Errorf("ReadRange(%d, %d, %d) = batches %v, want %v", c.from, c.to, c.max, got, c.want)
		}
	}
	ch := make(chan struct{}, 1)
	cancel := e.p.WatchPartition(info.ID, 0, ch)
	e.produce("sq", 0, makeBatch(batchOpts{n: 1, valSize: 1, ts: 2000}))
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up on produce")
	}
	cancel()
	if off, err := e.p.OffsetForTimestamp(info.ID, 0, 1150); err != nil || off != 10 {
		t.Errorf("offset for timestamp: %d %v", off, err)
	}
	if off, err := e.p.OffsetForTimestamp(info.ID, 0, 9999); err != nil || off != 16 {
		t.Errorf("offset for a future timestamp: %d %v, want the high watermark", off, err)
	}
}
