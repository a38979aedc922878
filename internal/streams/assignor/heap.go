package assignor

// memberHeaps keeps, per process, a min-heap of its members by (load, member
// index), so that the least-loaded member of a process is found in O(1) and
// kept up to date in O(log members-per-process) on every load change.
// Entries are keys load<<32 | member, so that comparing two is one integer
// comparison (loads are never negative).
type memberHeaps struct {
	st   *state
	heap []uint64 // process p's heap is heap[procStart[p]:procStart[p+1]]
	pos  []int32  // member -> position in its process heap
}

func memberKey(load, m int32) uint64 { return uint64(uint32(load))<<32 | uint64(uint32(m)) }

func (h *memberHeaps) init(st *state) {
	h.st = st
	// Members are ascending per process and all loads are equal: already heaps.
	h.heap = grow(h.heap, len(st.procList))
	for i, m := range st.procList {
		h.heap[i] = memberKey(st.load[m], m)
	}
	h.pos = grow(h.pos, len(st.members))
	for p := 0; p < st.numProcs; p++ {
		for i, m := range st.procMembers(int32(p)) {
			h.pos[m] = int32(i)
		}
	}
}

// min returns the least-loaded member of process p.
func (h *memberHeaps) min(p int32) int32 { return int32(uint32(h.heap[h.st.procStart[p]])) }

// fix restores the heap order after member m's load changed.
func (h *memberHeaps) fix(m int32) {
	st := h.st
	p := st.proc[m]
	hp := h.heap[st.procStart[p]:st.procStart[p+1]]
	i := int(h.pos[m])
	k := memberKey(st.load[m], m)
	hp[i] = k
	if len(hp) == 1 {
		return
	}
	// up
	for i > 0 {
		parent := (i - 1) / 2
		if hp[parent] <= k {
			break
		}
		hp[i] = hp[parent]
		h.pos[int32(uint32(hp[i]))] = int32(i)
		i = parent
	}
	// down
	n := len(hp)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && hp[r] < hp[l] {
			c = r
		}
		if hp[c] >= k {
			break
		}
		hp[i] = hp[c]
		h.pos[int32(uint32(hp[i]))] = int32(i)
		i = c
	}
	hp[i] = k
	h.pos[m] = int32(i)
}

// procHeap is a min-heap of processes by load per member (load/capacity,
// compared exactly), ties by process index. Entries carry a copy of their
// process's load and capacity, so that comparisons read contiguous memory:
// while a process is in the heap only the top's load may change, and the
// caller then calls fixTop.
type procHeap struct {
	st *state
	h  []procEntry
}

type procEntry struct {
	load, cap int64
	p         int32
}

func (st *state) procEntry(p int32) procEntry {
	return procEntry{load: st.procLoad[p], cap: st.procCap[p], p: p}
}

// newProcHeap returns a heap of all processes on storage buf.
func newProcHeap(st *state, buf []procEntry) procHeap {
	ph := procHeap{st: st, h: buf[:0]}
	for p := 0; p < st.numProcs; p++ {
		ph.h = append(ph.h, st.procEntry(int32(p)))
	}
	for i := len(ph.h)/2 - 1; i >= 0; i-- {
		ph.down(i)
	}
	return ph
}

func procLess(a, b *procEntry) bool {
	x := a.load * b.cap
	y := b.load * a.cap
	return x < y || (x == y && a.p < b.p)
}

func (ph *procHeap) len() int { return len(ph.h) }

// top returns the least-loaded process; after its load grows, call fixTop.
func (ph *procHeap) top() int32 { return ph.h[0].p }

// fixTop restores the heap order after the top process's load changed.
func (ph *procHeap) fixTop() {
	ph.h[0].load = ph.st.procLoad[ph.h[0].p]
	ph.down(0)
}

func (ph *procHeap) pop() int32 {
	top := ph.h[0].p
	n := len(ph.h) - 1
	ph.h[0] = ph.h[n]
	ph.h = ph.h[:n]
	if n > 0 {
		ph.down(0)
	}
	return top
}

func (ph *procHeap) push(p int32) {
	ph.h = append(ph.h, ph.st.procEntry(p))
	i := len(ph.h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !procLess(&ph.h[i], &ph.h[parent]) {
			break
		}
		ph.h[i], ph.h[parent] = ph.h[parent], ph.h[i]
		i = parent
	}
}

func (ph *procHeap) down(i int) {
	h := ph.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && procLess(&h[r], &h[l]) {
			c = r
		}
		if !procLess(&h[c], &h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// quota caps every member at base tasks, or base+1 for at most extra members,
// where base and extra are the quotient and remainder of units/members: an
// assignment within the quota is balanced within one task per member.
type quota struct {
	base, extra, used int64
}

// setQuota starts a pass distributing units tasks (counting the tasks the
// members already hold in st.load).
func (st *state) setQuota(units int64) {
	n := int64(len(st.members))
	st.q = quota{base: units / n, extra: units % n}
	for _, l := range st.load {
		if int64(l) > st.q.base {
			st.q.used++
		}
	}
}

// eligible reports whether member m may take one more task within the quota.
func (st *state) eligible(m int32) bool {
	l := int64(st.load[m])
	return l < st.q.base || (l == st.q.base && st.q.used < st.q.extra)
}

// take gives member m one more task of the current pass.
func (st *state) take(m int32) {
	if int64(st.load[m]) == st.q.base {
		st.q.used++
	}
	st.add(m, 1)
}
