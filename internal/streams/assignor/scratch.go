package assignor

import "sync"

// statePool recycles the working state (and with it every scratch array) of
// assignments: an assignment of 10 000 tasks needs about 1 MB of them, which
// would otherwise be garbage after every call. Nothing that the returned
// Assignment references lives in pooled memory.
var statePool = sync.Pool{New: func() any { return new(state) }}

// scratch holds the buffers of single steps, kept for reuse.
type scratch struct {
	byID, order []int32        // indexMembers
	pids        []string       // indexMembers
	keys        []strKey       // indexMembers
	last        []int32        // indexPrevious
	recs        []rec          // indexPrevious
	passTasks   []int32        // assignActive
	passStart   []int32        // assignActive
	deferred    []int32        // assignStandbys
	popped      []int32        // assignStandbys
	poppedFull  []int32        // assignStandbys
	heapA       procHeapBuf    // procHeap storage
	heapB       procHeapBuf    // procHeap storage
	rr          rrQueueBuf     // rrQueue storage
	bq          bucketQueueBuf // bucketQueue storage
	outCount    []int32        // output: (member, kind) -> segments, then next segment
	outSub      []int32        // output: (member, kind) -> last subtopology seen
	outCursor   []int32        // output: (member, kind) -> partitions, then next slot
}

// rec is one candidate record of indexPrevious, before the CSR layout.
type rec struct {
	t int32
	c cand
}

// getState takes a state from the pool and indexes spec into it.
func getState(spec *GroupSpec) (*state, error) {
	st := statePool.Get().(*state)
	if err := st.reset(spec); err != nil {
		st.release()
		return nil, err
	}
	return st, nil
}

// release drops the references to caller data and returns st to the pool.
func (st *state) release() {
	st.spec = nil
	clear(st.members)
	clear(st.scratch.pids)
	clear(st.subs)
	statePool.Put(st)
}

// grow returns s with length n, reusing its backing array when it is large
// enough. The contents are unspecified.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/8)
}

// filled returns s with length n and every element set to v.
func filled[T any](s []T, n int, v T) []T {
	s = grow(s, n)
	for i := range s {
		s[i] = v
	}
	return s
}
