package assignor

import "math/bits"

// bucketQueue orders processes like procHeap when all processes have the
// same capacity, by (load, process), for the standby step: top, second
// (the next process in that order), raising the load of either by one,
// pop and push, each O(1) plus a scan of bitset words instead of a heap's
// O(log processes) sifting. Bucket b holds, as a bitset over process
// indexes, the processes present with load base+b; minB is at or below the
// lowest non-empty bucket.
type bucketQueue struct {
	st    *state
	words int      // bitset words per bucket
	base  int64    // load of bucket 0
	bits  []uint64 // bucket b is bits[b*words : (b+1)*words]
	count []int32  // processes per bucket
	minB  int
	size  int
}

// maxBucketWords bounds the bitset storage of a bucketQueue; newBucketQueue
// reports false (use procHeap) when the expected load range needs more.
const maxBucketWords = 1 << 16

// minBucketProcs is the number of processes from which the standby step
// uses a bucketQueue: below it a heap is only a few levels deep.
const minBucketProcs = 128

// bucketQueueBuf is the reusable storage of a bucketQueue.
type bucketQueueBuf struct {
	bits  []uint64
	count []int32
}

// newBucketQueue returns a queue of all processes, or false when the loads
// the queue may see (up to hiLoad) span too many buckets.
func newBucketQueue(st *state, buf *bucketQueueBuf, hiLoad int64) (bucketQueue, bool) {
	n := st.numProcs
	lo, hi := int64(-1), hiLoad
	for p := 0; p < n; p++ {
		l := st.procLoad[p]
		if lo < 0 || l < lo {
			lo = l
		}
		hi = max(hi, l)
	}
	words := (n + 63) / 64
	nb := int(hi-lo) + 2
	if n == 0 || int64(nb)*int64(words) > maxBucketWords {
		return bucketQueue{}, false
	}
	q := bucketQueue{st: st, words: words, base: lo}
	q.bits = filled(buf.bits, nb*words, 0)
	q.count = filled(buf.count, nb, 0)
	for p := int32(0); p < int32(n); p++ {
		q.add(p, st.procLoad[p])
	}
	q.size = n
	q.minB = 0
	return q, true
}

func (q *bucketQueue) release(buf *bucketQueueBuf) { buf.bits, buf.count = q.bits, q.count }

func (q *bucketQueue) len() int { return q.size }

// add sets process p in the bucket of load l, growing the buckets if needed.
func (q *bucketQueue) add(p int32, l int64) {
	b := int(l - q.base)
	for b >= len(q.count) {
		q.count = append(q.count, 0)
		for range q.words {
			q.bits = append(q.bits, 0)
		}
	}
	q.bits[b*q.words+int(p>>6)] |= 1 << (uint(p) & 63)
	q.count[b]++
	q.minB = min(q.minB, b)
}

// remove clears process p from the bucket of load l.
func (q *bucketQueue) remove(p int32, l int64) {
	b := int(l - q.base)
	q.bits[b*q.words+int(p>>6)] &^= 1 << (uint(p) & 63)
	q.count[b]--
}

// next returns the first process at or after (bucket b, process p) in
// (load, process) order, or -1.
func (q *bucketQueue) next(b int, p int32) int32 {
	for ; b < len(q.count); b, p = b+1, 0 {
		if q.count[b] == 0 {
			continue
		}
		ws := q.bits[b*q.words : (b+1)*q.words]
		w := int(p >> 6)
		if w >= len(ws) {
			continue
		}
		if x := ws[w] &^ (1<<(uint(p)&63) - 1); x != 0 {
			return int32(w*64 + bits.TrailingZeros64(x))
		}
		for w++; w < len(ws); w++ {
			if ws[w] != 0 {
				return int32(w*64 + bits.TrailingZeros64(ws[w]))
			}
		}
	}
	return -1
}

// top returns the least-loaded process (lowest index among equals).
func (q *bucketQueue) top() int32 {
	for q.count[q.minB] == 0 {
		q.minB++
	}
	return q.next(q.minB, 0)
}

// second returns the process after the top in (load, process) order, or -1.
func (q *bucketQueue) second() int32 {
	if q.size < 2 {
		return -1
	}
	t := q.top()
	return q.next(int(q.st.procLoad[t]-q.base), t+1)
}

// raiseTop moves the top after its load grew by one.
func (q *bucketQueue) raiseTop() {
	p := q.top()
	q.raised(p, q.st.procLoad[p]-1)
}

// raiseSecond moves process p, the second (see second), after its load
// grew by one.
func (q *bucketQueue) raiseSecond(p int32) { q.raised(p, q.st.procLoad[p]-1) }

// raised moves process p, present with load old, to its current load.
func (q *bucketQueue) raised(p int32, old int64) {
	q.remove(p, old)
	q.add(p, q.st.procLoad[p])
}

func (q *bucketQueue) pop() int32 {
	p := q.top()
	q.remove(p, q.st.procLoad[p])
	q.size--
	return p
}

func (q *bucketQueue) push(p int32) {
	q.add(p, q.st.procLoad[p])
	q.size++
}
