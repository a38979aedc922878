package coordinator_test

import (
	"testing"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// TestReplayEquivalenceProperty is the randomized replay-equivalence property for every group
// type, for classic↔consumer migration and for transactional offsets with half-finished
// transactions (coordtest.RandomWorkload): after every step of a
// random sequence of operations, a fresh shard replaying the records written so far holds the
// live shard's durable state, committed offsets included; the shard is also restarted from its
// records every 25 steps.
func TestReplayEquivalenceProperty(t *testing.T) {
	runs, steps := 40, 150
	if testing.Short() {
		runs = 8
	}
	for _, w := range []coordtest.Workload{coordtest.Classic, coordtest.Consumer, coordtest.Streams, coordtest.Migration, coordtest.Share, coordtest.Transactional} {
		t.Run(w.String(), func(t *testing.T) {
			for seed := int64(1); seed <= int64(runs); seed++ {
				if diff := coordtest.RandomWorkload(w, seed, steps); diff != "" {
					t.Fatal(diff)
				}
			}
		})
	}
}
