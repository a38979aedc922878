package assignor

import "slices"

// rrQueue orders processes like procHeap when all processes have the same
// capacity, by (load, process), for the pattern of the last step of
// assignActive: take the top, then either drop it for good (pop) or raise
// its load (fixTop). It costs O(1) per operation instead of a heap's
// O(log processes), which matters for a round robin over thousands of
// processes: processes at the current minimum load L are taken in index
// order (cur), each moving to L+1 (promoted, again in index order); when
// cur runs out, the next minimum load's processes are the promoted ones
// merged with those of that load not reached yet (rest, sorted by (load,
// process)).
type rrQueue struct {
	st       *state
	load     int64    // load of cur
	cur      []uint64 // keys load<<32 | process of load L, ascending; cur[pos:] present
	pos      int
	promoted []uint64 // keys of load L+1, ascending
	rest     []uint64 // keys of processes not reached yet, ascending; rest[rpos:] present
	rpos     int
	size     int
}

// rrQueueBuf is the reusable storage of an rrQueue.
type rrQueueBuf struct{ cur, promoted, rest []uint64 }

func newRRQueue(st *state, buf *rrQueueBuf) rrQueue {
	q := rrQueue{st: st, cur: buf.cur[:0], promoted: buf.promoted[:0], rest: buf.rest[:0]}
	for p := int32(0); p < int32(st.numProcs); p++ {
		q.rest = append(q.rest, procKey(st.procLoad[p], p))
	}
	slices.Sort(q.rest)
	q.size = len(q.rest)
	q.refill()
	return q
}

func (q *rrQueue) release(buf *rrQueueBuf) {
	buf.cur, buf.promoted, buf.rest = q.cur, q.promoted, q.rest
}

func (q *rrQueue) len() int { return q.size }

// refill makes cur hold the processes of the next minimum load once it is
// exhausted.
func (q *rrQueue) refill() {
	if q.pos < len(q.cur) || q.size == 0 {
		return
	}
	// The next load is that of promoted (L+1) or of rest's first entry.
	next := q.load + 1
	if len(q.promoted) == 0 {
		next = int64(q.rest[q.rpos] >> 32)
	}
	// Merge promoted with rest's entries of load next (both ascending).
	merged := q.cur[:0]
	i := 0
	for q.rpos < len(q.rest) && int64(q.rest[q.rpos]>>32) == next {
		r := q.rest[q.rpos]
		for i < len(q.promoted) && q.promoted[i] < r {
			merged = append(merged, q.promoted[i])
			i++
		}
		merged = append(merged, r)
		q.rpos++
	}
	merged = append(merged, q.promoted[i:]...)
	q.cur, q.pos, q.load = merged, 0, next
	q.promoted = q.promoted[:0]
}

func (q *rrQueue) top() int32 { return int32(uint32(q.cur[q.pos])) }

// pop drops the top for good.
func (q *rrQueue) pop() int32 {
	p := q.top()
	q.pos++
	q.size--
	q.refill()
	return p
}

// fixTop moves the top after its load grew.
func (q *rrQueue) fixTop() {
	p := q.top()
	q.pos++
	k := procKey(q.st.procLoad[p], p)
	switch l := int64(k >> 32); {
	case l == q.load+1:
		q.promoted = append(q.promoted, k)
	case l <= q.load:
		// Did not grow (not used by the callers): back among cur.
		i, _ := slices.BinarySearch(q.cur[q.pos:], k)
		q.cur = slices.Insert(q.cur, q.pos+i, k)
	default:
		// Grew by more than one: keep rest sorted (not used by the callers).
		i, _ := slices.BinarySearch(q.rest[q.rpos:], k)
		q.rest = slices.Insert(q.rest, q.rpos+i, k)
	}
	q.refill()
}
