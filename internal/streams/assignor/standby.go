package assignor

// assignStandbys places NumStandbyReplicas standby tasks per stateful task,
// each on a distinct process that holds the task neither as active nor as
// warm-up, balancing active plus standby tasks per member.
func (st *state) assignStandbys() {
	R := st.replicas
	st.standby = filled(st.standby, st.numTasks*R, -1)
	st.setQuota(int64(st.numTasks) + int64(st.numSF)*int64(R))

	deferred := st.scratch.deferred[:0]
	defer func() { st.scratch.deferred = deferred }()
	for si, s := range st.subs {
		if !s.Stateful {
			continue
		}
		off := st.subOffset[si]
		for t := off; t < off+s.NumTasks; t++ {
			free := func(p int32) bool { return !st.holds(t, p) }
			i := 0
			// The previous active owner, if it is not the active owner now.
			if m := st.prevActive[t]; m >= 0 && m != st.owner[t] && free(st.proc[m]) {
				if st.eligible(m) {
					st.placeStandby(t, i, m)
					i++
				} else if mm := st.mh.min(st.proc[m]); st.eligible(mm) {
					st.placeStandby(t, i, mm)
					i++
				}
			}
			// Previous standby/warm-up holders and lag reporters.
			for ; i < R; i++ {
				m := st.pickHolder(t, free)
				if m < 0 {
					break
				}
				st.placeStandby(t, i, m)
			}
			if i < R {
				deferred = append(deferred, t)
			}
		}
	}
	if len(deferred) == 0 {
		return
	}

	// The rest go to the least-loaded process not holding the task yet whose
	// least-loaded member is under quota; failing that (the exclusions left
	// no such process), to the least-loaded process not holding the task.
	// Processes found full stay full for the pass and move to a second heap.
	// Only a few processes hold a task, so few pops are needed per standby.
	// With many processes of equal capacity the open processes are in a
	// bucket queue (same order, no sifting), else in a heap (cheap for few).
	full := procHeap{st: st, uniform: st.uniformCap, u: st.scratch.heapB.u[:0], h: st.scratch.heapB.h[:0]}
	defer full.release(&st.scratch.heapB)
	if st.uniformCap && st.numProcs >= minBucketProcs {
		// Open processes are under quota: at most their capacity times the
		// quota's base+1 (a bound for the buckets; the queue grows past it).
		hi := (st.procCap[0]) * (st.q.base + 1)
		if bq, ok := newBucketQueue(st, &st.scratch.bq, hi); ok {
			defer bq.release(&st.scratch.bq)
			placeDeferred(st, deferred, &bq, &full)
			return
		}
	}
	ph := heapQueue{procHeap: newProcHeap(st, &st.scratch.heapA)}
	defer ph.release(&st.scratch.heapA)
	placeDeferred(st, deferred, &ph, &full)
}

// standbyQueue is the queue of open processes of the standby step, in
// (load per member, process) order: procHeap (as heapQueue) or bucketQueue.
type standbyQueue interface {
	len() int
	top() int32
	// second returns the process after the top, or -1.
	second() int32
	// raiseTop and raiseSecond reorder the top, or the process second
	// returned, after its load grew by one.
	raiseTop()
	raiseSecond(p int32)
	pop() int32
	push(p int32)
}

// heapQueue is a procHeap as a standbyQueue.
type heapQueue struct {
	procHeap
	j int // heap position of the last second
}

func (h *heapQueue) second() int32 {
	if h.j = h.procHeap.second(); h.j < 0 {
		return -1
	}
	return h.at(h.j)
}

func (h *heapQueue) raiseTop()         { h.fixTop() }
func (h *heapQueue) raiseSecond(int32) { h.fixAt(h.j) }

// placeDeferred places the standbys of the deferred tasks (see
// assignStandbys).
func placeDeferred[Q standbyQueue](st *state, deferred []int32, open Q, full *procHeap) {
	R := st.replicas
	popped, poppedFull := st.scratch.popped[:0], st.scratch.poppedFull[:0]
	defer func() { st.scratch.popped, st.scratch.poppedFull = popped, poppedFull }()
	for _, t := range deferred {
		for i := 0; i < R; i++ {
			if st.standby[int(t)*R+i] >= 0 {
				continue
			}
			// Fast paths: the least-loaded open process takes it, or, when
			// that one is under quota but holds the task, the second
			// least-loaded (which is what popping the first would find).
			if open.len() > 0 {
				if p := open.top(); st.eligible(st.mh.min(p)) {
					if !st.holds(t, p) {
						st.placeStandby(t, i, st.mh.min(p))
						open.raiseTop()
						continue
					}
					if q := open.second(); q >= 0 && st.eligible(st.mh.min(q)) && !st.holds(t, q) {
						st.placeStandby(t, i, st.mh.min(q))
						open.raiseSecond(q)
						continue
					}
				}
			}
			target := int32(-1)
			popped, poppedFull = popped[:0], poppedFull[:0]
			for open.len() > 0 {
				p := open.pop()
				if !st.eligible(st.mh.min(p)) {
					full.push(p)
					continue
				}
				popped = append(popped, p)
				if !st.holds(t, p) {
					target = p
					break
				}
			}
			if target < 0 {
				for full.len() > 0 {
					p := full.pop()
					poppedFull = append(poppedFull, p)
					if !st.holds(t, p) {
						target = p
						break
					}
				}
			}
			if target >= 0 {
				st.placeStandby(t, i, st.mh.min(target))
			}
			for _, p := range popped {
				open.push(p)
			}
			for _, p := range poppedFull {
				full.push(p)
			}
			if target < 0 {
				break // too few processes for more standbys of t
			}
		}
	}
}

// holds reports whether process p holds task t as active, warm-up or standby.
func (st *state) holds(t, p int32) bool {
	if st.proc[st.owner[t]] == p {
		return true
	}
	if w := st.warm[t]; w >= 0 && st.proc[w] == p {
		return true
	}
	R := st.replicas
	for _, m := range st.standby[int(t)*R : int(t)*R+R] {
		if m >= 0 && st.proc[m] == p {
			return true
		}
	}
	return false
}

func (st *state) placeStandby(t int32, i int, m int32) {
	st.standby[int(t)*st.replicas+i] = m
	st.take(m)
}
