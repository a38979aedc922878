package assignor

import (
	"math/rand/v2"
	"testing"
)

// bucketQueue must behave like the general procHeap (as heapQueue) for
// processes of equal capacity under any sequence of the standby step's
// operations: top, second, raising either by one, pop and push.
func TestBucketQueueMatchesProcHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for round := 0; round < 500; round++ {
		n := 1 + r.IntN(150)
		a, b := pairedStates(r, n, 5, 2)
		hq := heapQueue{procHeap: newProcHeap(a, &procHeapBuf{})}
		bq, ok := newBucketQueue(b, &bucketQueueBuf{}, int64(r.IntN(8)))
		if !ok {
			t.Fatal("bucket queue refused a small range")
		}
		var out []int32 // popped, not yet pushed back
		for step := 0; step < 600; step++ {
			if bq.len() != hq.len() {
				t.Fatalf("round %d step %d: len %d, heap %d", round, step, bq.len(), hq.len())
			}
			if hq.len() > 0 && bq.top() != hq.top() {
				t.Fatalf("round %d step %d: top %d, heap %d", round, step, bq.top(), hq.top())
			}
			switch k := r.IntN(10); {
			case k < 2 && hq.len() > 0:
				out = append(out, hq.pop())
				if p := bq.pop(); p != out[len(out)-1] {
					t.Fatalf("round %d step %d: pop %d, heap %d", round, step, p, out[len(out)-1])
				}
			case k < 4 && len(out) > 0:
				i := r.IntN(len(out))
				p := out[i]
				out = append(out[:i], out[i+1:]...)
				d := int64(r.IntN(3))
				a.procLoad[p] += d
				b.procLoad[p] += d
				hq.push(p)
				bq.push(p)
			case k < 7 && hq.len() > 0:
				p := hq.top()
				a.procLoad[p]++
				b.procLoad[p]++
				hq.raiseTop()
				bq.raiseTop()
			case hq.len() > 0:
				q1, q2 := hq.second(), bq.second()
				if q1 != q2 {
					t.Fatalf("round %d step %d: second %d, heap %d", round, step, q2, q1)
				}
				if q1 >= 0 {
					a.procLoad[q1]++
					b.procLoad[q1]++
					hq.raiseSecond(q1)
					bq.raiseSecond(q1)
				}
			}
		}
	}
}
