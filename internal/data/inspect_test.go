package data

import "testing"

// TestBatchTimestampAndTopicStats: the timestamp of the batch holding an offset (lag in time)
// and the per-partition offsets and sizes the console shows.
func TestBatchTimestampAndTopicStats(t *testing.T) {
	e := newEnv(t)
	e.createTopic("ts", 2, nil)
	for i, ts := range []int64{1000, 2000, 3000} { // offsets 0-2, 3-5, 6-8
		if r := e.produce("ts", 0, makeBatch(batchOpts{n: 3, ts: ts})); r.ErrorCode != 0 || r.BaseOffset != int64(3*i) {
			t.Fatalf("produce: %+v", r)
		}
	}
	for _, c := range []struct {
		offset int64
		ts     int64
		ok     bool
	}{{0, 1000, true}, {2, 1000, true}, {3, 2000, true}, {8, 3000, true}, {9, 0, false}, {-1, 0, false}} {
		ts, ok := e.p.BatchTimestamp("ts", 0, c.offset)
		if ok != c.ok || (ok && ts != c.ts) {
			t.Errorf("offset %d: (%d, %v), want (%d, %v)", c.offset, ts, ok, c.ts, c.ok)
		}
	}
	if _, ok := e.p.BatchTimestamp("nope", 0, 0); ok {
		t.Error("unknown topic has a timestamp")
	}
	st, ok := e.p.TopicStats("ts")
	if !ok || len(st) != 2 {
		t.Fatalf("stats: %+v %v", st, ok)
	}
	if st[0].HighWatermark != 9 || st[0].LogStart != 0 || st[0].Bytes <= 0 || st[1].HighWatermark != 0 || st[1].Bytes != 0 {
		t.Errorf("stats: %+v", st)
	}
}
