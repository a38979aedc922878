package lag

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

type fixedEnds struct{}

func (fixedEnds) Offsets(string, int32) (int64, int64, bool) { return 0, 1000, true }

// BenchmarkTrackerMemory measures the heap a tracked partition costs: 100 groups × 1,000
// partitions, each with a window of 1 commit (a partition committed once, held in its slot) or
// a full window of 10 (Burrow's default intervals, spilled), and 10 log end samples. It reports
// bytes per tracked partition.
func BenchmarkTrackerMemory(b *testing.B) {
	for _, commits := range []int{1, 10} {
		b.Run("commits="+strconv.Itoa(commits), func(b *testing.B) { benchTrackerMemory(b, commits) })
	}
}

func benchTrackerMemory(b *testing.B, commits int) {
	const groups, parts = 100, 1000
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t := NewTracker(TrackerConfig{Intervals: 10}, fixedEnds{})
		at := time.Unix(1_800_000_000, 0)
		for c := 0; c < commits; c++ {
			for g := 0; g < groups; g++ {
				gid := "group-" + strconv.Itoa(g)
				for p := 0; p < parts; p++ {
					t.Observe(gid, "topic-"+strconv.Itoa(p%10), int32(p/10), int64(c*10), at.Add(time.Duration(c)*time.Second))
				}
			}
		}
		for c := 0; c < 10; c++ {
			for p := 0; p < parts; p++ {
				t.addEnd(TopicPartition{"topic-" + strconv.Itoa(p%10), int32(p / 10)}, int64(1000+c))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(groups*parts), "bytes/partition")
		runtime.KeepAlive(t)
	}
}

// BenchmarkObserve is the commit path's cost per committed partition.
func BenchmarkObserve(b *testing.B) {
	t := NewTracker(TrackerConfig{Intervals: 10, MinDistance: time.Second}, fixedEnds{})
	at := time.Unix(1_800_000_000, 0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t.Observe("group", "topic", int32(i%64), int64(i), at.Add(time.Duration(i)*time.Millisecond))
		i++
	}
}
