package assignor

import (
	"math/rand/v2"
	"testing"
)

// rrQueue must yield the same tops as the general procHeap for processes of
// equal capacity under any sequence of pops and load increments of the top.
func TestRRQueueMatchesProcHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for round := 0; round < 500; round++ {
		n := 1 + r.IntN(60)
		a, b := pairedStates(r, n, 4, 3)
		ph := newProcHeap(a, &procHeapBuf{})
		q := newRRQueue(b, &rrQueueBuf{})
		for step := 0; ph.len() > 0; step++ {
			if q.len() != ph.len() {
				t.Fatalf("round %d step %d: len %d, heap %d", round, step, q.len(), ph.len())
			}
			if q.top() != ph.top() {
				t.Fatalf("round %d step %d: top %d, heap %d", round, step, q.top(), ph.top())
			}
			p := ph.top()
			switch k := r.IntN(10); {
			case k == 0:
				ph.pop()
				q.pop()
			default:
				d := int64(1)
				if k == 1 {
					d = int64(r.IntN(3)) // rarely not +1
				}
				a.procLoad[p] += d
				b.procLoad[p] += d
				ph.fixTop()
				q.fixTop()
			}
			if step > 400 {
				break
			}
		}
	}
}

// pairedStates returns two states of n processes with the same random loads (below maxLoad) and
// capacity: a is the reference (the general heap on exact ratios), b has uniform capacity.
func pairedStates(r *rand.Rand, n, maxLoad int, capacity int64) (a, b *state) {
	mk := func(uniform bool) *state {
		return &state{numProcs: n, uniformCap: uniform, procLoad: make([]int64, n), procCap: make([]int64, n)}
	}
	a, b = mk(false), mk(true)
	for p := 0; p < n; p++ {
		l := int64(r.IntN(maxLoad))
		a.procLoad[p], b.procLoad[p] = l, l
		a.procCap[p], b.procCap[p] = capacity, capacity
	}
	return a, b
}
