package assignor

import (
	"fmt"
	"slices"
)

// passTasks returns the tasks of the stateful or stateless subtopologies,
// ordered by partition, then subtopology. With range-like previous
// assignments this order makes a member over its quota keep the same
// partitions of all its subtopologies (as Kafka's sticky assignor does).
func (st *state) passTasks(stateful bool) []int32 {
	maxP := int32(0)
	n := 0
	for _, s := range st.subs {
		if s.Stateful == stateful {
			maxP = max(maxP, s.NumTasks)
			n += int(s.NumTasks)
		}
	}
	start := filled(st.scratch.passStart, int(maxP)+1, 0)
	st.scratch.passStart = start
	for _, s := range st.subs {
		if s.Stateful == stateful {
			for p := int32(0); p < s.NumTasks; p++ {
				start[p+1]++
			}
		}
	}
	for p := int32(0); p < maxP; p++ {
		start[p+1] += start[p]
	}
	out := grow(st.scratch.passTasks, n)
	st.scratch.passTasks = out
	for i, s := range st.subs {
		if s.Stateful == stateful {
			off := st.subOffset[i]
			for p := int32(0); p < s.NumTasks; p++ {
				out[start[p]] = off + p
				start[p]++
			}
		}
	}
	return out
}

// assignActive places the active tasks of one flavor. The stateful pass runs
// first with a quota on stateful tasks per member; the stateless pass then
// fills up to the quota on all active tasks per member.
func (st *state) assignActive(stateful bool) error {
	tasks := st.passTasks(stateful)
	if len(tasks) == 0 {
		return nil
	}
	if stateful {
		st.setQuota(int64(len(tasks)))
	} else {
		st.setQuota(int64(st.numTasks))
	}
	assign := func(t, m int32) {
		st.owner[t] = m
		st.take(m)
	}

	// 1. The previous active owner keeps the task while under quota.
	pending := tasks[:0]
	for _, t := range tasks {
		if m := st.prevActive[t]; m >= 0 && st.eligible(m) {
			assign(t, m)
		} else {
			pending = append(pending, t)
		}
	}
	// 2. Another member of the previous owner's process (same local state).
	rest := pending[:0]
	for _, t := range pending {
		if m := st.prevActive[t]; m >= 0 {
			if mm := st.mh.min(st.proc[m]); st.eligible(mm) {
				assign(t, mm)
				continue
			}
		}
		rest = append(rest, t)
	}
	pending = rest
	// 3. The best-ranked holder of the task's state, or a member of its process.
	left := 0
	for _, t := range pending {
		if m := st.pickHolder(t, nil); m >= 0 {
			assign(t, m)
			continue
		}
		left++
	}
	if left == 0 {
		return nil
	}
	// 4. The rest, in subtopology then partition order, to the least-loaded
	// process and its least-loaded member.
	if st.uniformCap {
		q := newRRQueue(st, &st.scratch.rr)
		defer q.release(&st.scratch.rr)
		return st.assignRest(stateful, &q)
	}
	ph := newProcHeap(st, &st.scratch.heapA)
	defer ph.release(&st.scratch.heapA)
	return st.assignRest(stateful, &ph)
}

// leastLoaded is a queue of processes by load per member (procHeap, or
// rrQueue when all processes have the same capacity).
type leastLoaded interface {
	len() int
	top() int32
	pop() int32
	fixTop()
}

// assignRest gives the unassigned tasks of a pass, in subtopology then
// partition order, to the least-loaded process and its least-loaded member.
func (st *state) assignRest(stateful bool, q leastLoaded) error {
	for si, s := range st.subs {
		if s.Stateful != stateful {
			continue
		}
		off := st.subOffset[si]
		for t := off; t < off+s.NumTasks; t++ {
			if st.owner[t] >= 0 {
				continue
			}
			for {
				if q.len() == 0 {
					return fmt.Errorf("streams assignor: no member has capacity for active task %s", st.taskName(t))
				}
				m := st.mh.min(q.top())
				if !st.eligible(m) {
					// Loads only grow during the pass, so the process stays full.
					q.pop()
					continue
				}
				st.owner[t] = m
				st.take(m)
				q.fixTop()
				break
			}
		}
	}
	return nil
}

// pickHolder returns the best-ranked state holder of t under quota whose
// process is allowed by ok (nil allows all), falling back to the
// least-loaded member of that holder's process; -1 if none.
func (st *state) pickHolder(t int32, ok func(p int32) bool) int32 {
	for _, c := range st.candidates(t) {
		p := st.proc[c.member]
		if ok != nil && !ok(p) {
			continue
		}
		if st.eligible(c.member) {
			return c.member
		}
		if mm := st.mh.min(p); st.eligible(mm) {
			return mm
		}
	}
	return -1
}

func (st *state) taskName(t int32) string {
	s, _ := slices.BinarySearch(st.subOffset, t+1)
	s--
	return fmt.Sprintf("%s_%d", st.subs[s].ID, t-st.subOffset[s])
}
