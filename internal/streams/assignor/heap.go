package assignor

// memberHeaps keeps, per process, a min-heap of its members by (load, member
// index), so that the least-loaded member of a process is found in O(1) and
// kept up to date in O(log members-per-process) on every load change.
type memberHeaps struct {
	st    *state
	heaps [][]int32 // process -> heap of members
	pos   []int32   // member -> position in its process heap
}

func (h *memberHeaps) init(st *state) {
	h.st = st
	h.heaps = make([][]int32, len(st.procMembers))
	h.pos = make([]int32, len(st.members))
	for p, ms := range st.procMembers {
		// Members are ascending and all loads are equal: already a heap.
		h.heaps[p] = append([]int32(nil), ms...)
		for i, m := range ms {
			h.pos[m] = int32(i)
		}
	}
}

func (h *memberHeaps) less(a, b int32) bool {
	la, lb := h.st.load[a], h.st.load[b]
	return la < lb || (la == lb && a < b)
}

// min returns the least-loaded member of process p.
func (h *memberHeaps) min(p int32) int32 { return h.heaps[p][0] }

// fix restores the heap order after member m's load changed.
func (h *memberHeaps) fix(m int32) {
	hp := h.heaps[h.st.proc[m]]
	i := int(h.pos[m])
	// up
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(hp[i], hp[parent]) {
			break
		}
		h.swap(hp, i, parent)
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
		if r := l + 1; r < n && h.less(hp[r], hp[l]) {
			c = r
		}
		if !h.less(hp[c], hp[i]) {
			break
		}
		h.swap(hp, i, c)
		i = c
	}
}

func (h *memberHeaps) swap(hp []int32, i, j int) {
	hp[i], hp[j] = hp[j], hp[i]
	h.pos[hp[i]] = int32(i)
	h.pos[hp[j]] = int32(j)
}

// procHeap is a min-heap of processes by load per member (load/capacity,
// compared exactly), ties by process index.
type procHeap struct {
	st *state
	h  []int32
}

func newProcHeap(st *state) *procHeap {
	ph := &procHeap{st: st, h: make([]int32, 0, len(st.procMembers))}
	for p := range st.procMembers {
		ph.h = append(ph.h, int32(p))
	}
	for i := len(ph.h)/2 - 1; i >= 0; i-- {
		ph.down(i)
	}
	return ph
}

func (ph *procHeap) less(a, b int32) bool {
	st := ph.st
	x := st.procLoad[a] * int64(len(st.procMembers[b]))
	y := st.procLoad[b] * int64(len(st.procMembers[a]))
	return x < y || (x == y && a < b)
}

func (ph *procHeap) len() int { return len(ph.h) }

// top returns the least-loaded process; after its load grows, call down(0).
func (ph *procHeap) top() int32 { return ph.h[0] }

func (ph *procHeap) pop() int32 {
	top := ph.h[0]
	n := len(ph.h) - 1
	ph.h[0] = ph.h[n]
	ph.h = ph.h[:n]
	if n > 0 {
		ph.down(0)
	}
	return top
}

func (ph *procHeap) push(p int32) {
	ph.h = append(ph.h, p)
	i := len(ph.h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !ph.less(ph.h[i], ph.h[parent]) {
			break
		}
		ph.h[i], ph.h[parent] = ph.h[parent], ph.h[i]
		i = parent
	}
}

func (ph *procHeap) down(i int) {
	n := len(ph.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && ph.less(ph.h[r], ph.h[l]) {
			c = r
		}
		if !ph.less(ph.h[c], ph.h[i]) {
			return
		}
		ph.h[i], ph.h[c] = ph.h[c], ph.h[i]
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
