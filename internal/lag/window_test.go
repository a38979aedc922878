package lag

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refWindow is the plain model of a window: every observation kept, oldest first.
type refWindow []Observation

func (r *refWindow) add(o Observation, size int, minDistanceMs int64) {
	if n := len(*r); n > 0 {
		last := (*r)[n-1]
		if o.At < last.At {
			return
		}
		if o.At-last.At < minDistanceMs {
			(*r)[n-1] = o
			return
		}
	}
	*r = append(*r, o)
	if len(*r) > size {
		*r = slices.Clone((*r)[len(*r)-size:])
	}
}

// TestWindowMatchesModel: the packed window holds exactly what a plain list of the last size
// observations would, whatever the offsets (rewinds, jumps to the int64 limits), lags (unknown
// -1) and times (late commits, commits within the min distance), for window sizes around the
// decode buffer's.
func TestWindowMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{2, 3, 10, maxWindow, maxWindow + 5, 40} {
		for round := 0; round < 200; round++ {
			var w window
			var ref refWindow
			o := Observation{Offset: rng.Int64N(1 << 40), Lag: rng.Int64N(1000) - 1, At: 1_800_000_000_000}
			for i := 0; i < 60; i++ {
				switch rng.IntN(8) {
				case 0:
					o.Offset -= rng.Int64N(1000) // rewind
				case 1:
					o.Offset = []int64{math.MaxInt64, math.MinInt64, 0, -1}[rng.IntN(4)]
				default:
					o.Offset += rng.Int64N(5000)
				}
				o.Lag = []int64{-1, 0, rng.Int64N(1 << 20), math.MaxInt64}[rng.IntN(4)]
				switch rng.IntN(6) {
				case 0:
					o.At -= rng.Int64N(3000) // late
				case 1:
					o.At += rng.Int64N(500) // within the min distance
				default:
					o.At += rng.Int64N(60_000)
				}
				base := int64(1_800_000_000_000 - 5000*(round%3))
				w.add(o, size, 1000, base)
				ref.add(o, size, 1000)
				if got := w.appendTo(nil, base); !slices.Equal(got, ref) {
					t.Fatalf("size %d, step %d: window %v, want %v", size, i, got, ref)
				}
				if l, ok := w.last(base); !ok || l != ref[len(ref)-1] {
					t.Fatalf("size %d: last %v %v, want %v", size, l, ok, ref[len(ref)-1])
				}
			}
		}
	}
}

// A tracker keeps a group's windows by topic and partition number, dense or (a partition number
// far beyond the rest) sparse; retainSorted drops what is not kept and a group left with nothing.
func TestTrackerLayout(t *testing.T) {
	tr := NewTracker(TrackerConfig{Intervals: 3}, nil)
	o := func(off int64) Observation { return Observation{Offset: off, Lag: -1, At: off * 10_000} }
	tps := []TopicPartition{{"a", 0}, {"a", 7}, {"a", 1 << 30}, {"a", -5}, {"b", 2}}
	for i, tp := range tps {
		tr.add("g", tp, o(int64(i+1)))
		tr.add("g", tp, o(int64(i+100)))
	}
	for i, tp := range tps {
		if got := tr.Window("g", tp); len(got) != 2 || got[0].Offset != int64(i+1) || got[1].Offset != int64(i+100) {
			t.Fatalf("%v: %v", tp, got)
		}
	}
	if got := tr.Window("g", TopicPartition{"a", 3}); got != nil {
		t.Fatalf("untracked partition: %v", got)
	}
	tr.retainSorted("g", []Committed{{"a", 1 << 30, 0}, {"b", 2, 0}})
	for _, tp := range tps {
		kept := tp == TopicPartition{"a", 1 << 30} || tp == TopicPartition{"b", 2}
		if got := tr.Window("g", tp); (got != nil) != kept {
			t.Fatalf("after retainSorted %v: %v", tp, got)
		}
	}
	tr.retainSorted("g", nil)
	if g := tr.Groups(); len(g) != 0 {
		t.Fatalf("groups after retaining nothing: %v", g)
	}
}
