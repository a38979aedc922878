package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/coordinator"
)

// dedupe keeps the last record of every key in the order keys were first written, across
// reuses of the shard's index.
func TestDedupeKeepsTheLastRecordPerKey(t *testing.T) {
	s := &shard[*fakeShard]{}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		n := rng.IntN(60)
		if round%50 == 0 {
			n = 5000 // past the reused index's bound
		}
		var recs []coordinator.Record
		var order []string
		last := map[string]string{}
		for i := 0; i < n; i++ {
			k := fmt.Sprint("k", rng.IntN(n/2+1))
			v := fmt.Sprint(round, "-", i)
			if _, ok := last[k]; !ok {
				order = append(order, k)
			}
			last[k] = v
			recs = append(recs, coordinator.Record{Key: []byte(k), Value: []byte(v)})
		}
		out := s.dedupe(recs)
		if len(out) != len(order) {
			t.Fatalf("round %d: %d records, want %d", round, len(out), len(order))
		}
		for i, r := range out {
			if string(r.Key) != order[i] || string(r.Value) != last[order[i]] {
				t.Fatalf("round %d: record %d = %s=%s, want %s=%s", round, i, r.Key, r.Value, order[i], last[order[i]])
			}
		}
	}
}

// fakeShard satisfies Shard for the type parameter only.
type fakeShard struct{ coordinator.Effects }

func (*fakeShard) Replay(coordinator.Record) error         { return nil }
func (*fakeShard) ReplayBorrowed(coordinator.Record) error { return nil }
func (*fakeShard) OnLoaded(time.Time)                      {}
func (*fakeShard) SetNow(time.Time)                        {}
func (*fakeShard) FireTimers(time.Time)                    {}
func (*fakeShard) NextDeadline() (time.Time, bool)         { return time.Time{}, false }
func (f *fakeShard) TakeEffects() coordinator.Effects      { return f.Effects }
