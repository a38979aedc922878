package lag

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// benchSource is a coordinator with groups × parts committed offsets of one topic: partition p
// of every group at offset 7p.
type benchSource struct {
	groups, parts int
	committed     map[string][]Committed // built once: the benchmark prices the monitor
}

func (s *benchSource) Committed(_ context.Context, groups []string, fn func(string, []Committed)) error {
	if s.committed == nil {
		s.committed = make(map[string][]Committed, s.groups)
		for g := 0; g < s.groups; g++ {
			cs := make([]Committed, s.parts)
			for p := range cs {
				cs[p] = Committed{Topic: "bench-load", Partition: int32(p), Offset: int64(p) * 7}
			}
			s.committed["group-"+strconv.Itoa(g)] = cs
		}
	}
	for _, g := range groups {
		if cs := s.committed[g]; cs != nil {
			fn(g, cs)
		}
	}
	return nil
}

func (s *benchSource) ListGroups(context.Context) ([]GroupInfo, error) {
	out := make([]GroupInfo, s.groups)
	for g := range out {
		out[g] = GroupInfo{ID: "group-" + strconv.Itoa(g), Type: "classic", State: "Empty"}
	}
	return out, nil
}

// benchLog is a topic whose every partition ends at 1000 (so the first partitions lag) and
// whose batches are a minute old.
type benchLog struct{ nowMs int64 }

func (benchLog) Offsets(string, int32) (int64, int64, bool) { return 0, 1000, true }
func (l benchLog) BatchTimestamp(string, int32, int64) (int64, bool) {
	return l.nowMs - 60_000, true
}

// BenchmarkSample is one sample of 1,000 groups × 1,000 partitions (1M committed offsets), the
// windows already seeded by an earlier sample: CPU time per sample, and the heap the published
// snapshot keeps (bytes per committed offset). The source's offsets are built once, so it
// prices the monitor, not the coordinator's reads.
func BenchmarkSample(b *testing.B) {
	const groups, parts = 1000, 1000
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	log := benchLog{nowMs: now.UnixMilli()}
	m := NewMonitor(MonitorConfig{Interval: time.Second}, NewTracker(TrackerConfig{}, log), &benchSource{groups: groups, parts: parts}, log, clock)
	ctx := context.Background()
	if _, err := m.Sample(ctx); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Second)
		if _, err := m.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&before)
	m.snap.Store(&Snapshot{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(before.HeapAlloc)-int64(after.HeapAlloc))/(groups*parts), "snapshot-bytes/offset")
	runtime.KeepAlive(m)
}
