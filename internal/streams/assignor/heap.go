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
// process's load, so that comparisons read contiguous memory: while a
// process is in the heap only the top's load may change, and the caller
// then calls fixTop. When all processes have the same capacity (the common
// case, e.g. one member each) the order is that of load<<32 | process, and
// entries are just that integer key (u); otherwise they are procEntry (h).
type procHeap struct {
	st      *state
	uniform bool
	u       []uint64
	h       []procEntry
}

type procEntry struct {
	load, cap int64
	p         int32
}

func procKey(load int64, p int32) uint64 { return uint64(load)<<32 | uint64(uint32(p)) }

func (st *state) procEntry(p int32) procEntry {
	return procEntry{load: st.procLoad[p], cap: st.procCap[p], p: p}
}

// newProcHeap returns a heap of all processes on the storage of buf.
func newProcHeap(st *state, buf *procHeapBuf) procHeap {
	ph := procHeap{st: st, uniform: st.uniformCap, u: buf.u[:0], h: buf.h[:0]}
	for p := int32(0); p < int32(st.numProcs); p++ {
		if ph.uniform {
			ph.u = append(ph.u, procKey(st.procLoad[p], p))
		} else {
			ph.h = append(ph.h, st.procEntry(p))
		}
	}
	for i := st.numProcs/2 - 1; i >= 0; i-- {
		ph.down(i)
	}
	return ph
}

// procHeapBuf is the reusable storage of a procHeap.
type procHeapBuf struct {
	u []uint64
	h []procEntry
}

// release hands the heap's storage back to buf.
func (ph *procHeap) release(buf *procHeapBuf) { buf.u, buf.h = ph.u, ph.h }

func procLess(a, b *procEntry) bool {
	x := a.load * b.cap
	y := b.load * a.cap
	return x < y || (x == y && a.p < b.p)
}

func (ph *procHeap) len() int {
	if ph.uniform {
		return len(ph.u)
	}
	return len(ph.h)
}

// top returns the least-loaded process; after its load grows, call fixTop.
func (ph *procHeap) top() int32 {
	if ph.uniform {
		return int32(uint32(ph.u[0]))
	}
	return ph.h[0].p
}

// fixTop restores the heap order after the top process's load changed.
func (ph *procHeap) fixTop() {
	p := ph.top()
	if ph.uniform {
		ph.u[0] = procKey(ph.st.procLoad[p], p)
	} else {
		ph.h[0].load = ph.st.procLoad[p]
	}
	ph.down(0)
}

// second returns the heap position of the second least-loaded process
// (the smaller child of the top), or -1 if there is none.
func (ph *procHeap) second() int {
	switch n := ph.len(); {
	case n < 2:
		return -1
	case n == 2:
		return 1
	case ph.uniform:
		if ph.u[2] < ph.u[1] {
			return 2
		}
	case procLess(&ph.h[2], &ph.h[1]):
		return 2
	}
	return 1
}

// at returns the process at heap position i.
func (ph *procHeap) at(i int) int32 {
	if ph.uniform {
		return int32(uint32(ph.u[i]))
	}
	return ph.h[i].p
}

// fixAt restores the heap order after the load of the process at position
// i grew.
func (ph *procHeap) fixAt(i int) {
	p := ph.at(i)
	if ph.uniform {
		ph.u[i] = procKey(ph.st.procLoad[p], p)
	} else {
		ph.h[i].load = ph.st.procLoad[p]
	}
	ph.down(i)
}

func (ph *procHeap) pop() int32 {
	top := ph.top()
	if ph.uniform {
		n := len(ph.u) - 1
		ph.u[0] = ph.u[n]
		ph.u = ph.u[:n]
	} else {
		n := len(ph.h) - 1
		ph.h[0] = ph.h[n]
		ph.h = ph.h[:n]
	}
	if ph.len() > 0 {
		ph.down(0)
	}
	return top
}

func (ph *procHeap) push(p int32) {
	if ph.uniform {
		ph.u = append(ph.u, procKey(ph.st.procLoad[p], p))
		u := ph.u
		for i := len(u) - 1; i > 0; {
			parent := (i - 1) / 2
			if u[i] >= u[parent] {
				break
			}
			u[i], u[parent] = u[parent], u[i]
			i = parent
		}
		return
	}
	ph.h = append(ph.h, ph.st.procEntry(p))
	h := ph.h
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !procLess(&h[i], &h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// down restores the heap order below i after entry i grew. It is the
// bottom-up variant: the hole walks down to a leaf along the smaller
// children (one comparison per level), then the entry rises from there,
// which is short because a grown entry belongs near the bottom. The order
// of entries is strict (ties broken by process), so any valid heap yields
// the same sequence of tops.
func (ph *procHeap) down(i int) {
	if ph.uniform {
		downKeys(ph.u, i)
		return
	}
	h := ph.h
	n := len(h)
	x := h[i]
	start := i
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && procLess(&h[r], &h[l]) {
			c = r
		}
		h[i] = h[c]
		i = c
	}
	for i > start {
		parent := (i - 1) / 2
		if !procLess(&x, &h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = x
}

// downKeys is down for integer keys; the child choice compiles to a
// conditional move, which matters as it is unpredictable.
func downKeys(u []uint64, i int) {
	n := len(u)
	x := u[i]
	start := i
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n {
			if u[r] < u[l] {
				c = r
			}
		}
		u[i] = u[c]
		i = c
	}
	for i > start {
		parent := (i - 1) / 2
		if x >= u[parent] {
			break
		}
		u[i] = u[parent]
		i = parent
	}
	u[i] = x
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
