package assignor

// Task kinds of the output, as offsets of a (member, kind) key m*numKinds+kind.
const (
	outActive = iota
	outStandby
	outWarmup
	numKinds
)

// forEachPlacement calls f for every task placement of subtopology si in
// partition order: the active owner, the warm-up and the standbys of each
// partition.
func (st *state) forEachPlacement(si int, f func(key int32, p int32)) {
	s := st.subs[si]
	off := st.subOffset[si]
	R := st.replicas
	standbys := R > 0 && s.Stateful && len(st.standby) > 0
	for p := int32(0); p < s.NumTasks; p++ {
		t := off + p
		f(st.owner[t]*numKinds+outActive, p)
		if w := st.warm[t]; w >= 0 {
			f(w*numKinds+outWarmup, p)
		}
		if standbys {
			for _, m := range st.standby[int(t)*R : int(t)*R+R] {
				if m >= 0 {
					f(m*numKinds+outStandby, p)
				}
			}
		}
	}
}

// output builds the Assignment: every member present, partitions ascending.
// A first pass counts the subtopologies and partitions of every (member,
// kind), so that every TaskSet map is allocated at its final size and all
// partitions go to one exactly sized array, each (member, kind) owning a
// contiguous region of it; a second pass fills them.
func (st *state) output() Assignment {
	out := make(Assignment, len(st.members))
	if st.numTasks == 0 || len(st.members) == 0 {
		for _, m := range st.members {
			out[m.MemberID] = MemberAssignment{}
		}
		return out
	}
	sc := &st.scratch
	K := len(st.members) * numKinds
	entries := filled(sc.outCount, K, 0) // subtopologies per key
	parts := filled(sc.outCursor, K, 0)  // partitions per key, then next free slot
	lastSub := filled(sc.outSub, K, -1)
	sc.outCount, sc.outCursor, sc.outSub = entries, parts, lastSub
	for si := range st.subs {
		st.forEachPlacement(si, func(k, _ int32) {
			parts[k]++
			if lastSub[k] != int32(si) {
				lastSub[k] = int32(si)
				entries[k]++
			}
		})
	}
	total := int32(0)
	for k, n := range parts {
		parts[k] = total
		total += n
	}
	arena := make([]int32, total)
	maps := grow(sc.maps, K)
	sc.maps = maps
	for k, n := range entries {
		maps[k] = nil
		if n > 0 {
			maps[k] = make(TaskSet, n)
		}
	}
	start := grow(sc.outStart, K)
	sc.outStart = start
	touched := sc.touched[:0]
	for k := range lastSub {
		lastSub[k] = -1
	}
	for si := range st.subs {
		st.forEachPlacement(si, func(k, p int32) {
			if lastSub[k] != int32(si) {
				lastSub[k] = int32(si)
				start[k] = parts[k]
				touched = append(touched, k)
			}
			arena[parts[k]] = p
			parts[k]++
		})
		id := st.subs[si].ID
		for _, k := range touched {
			maps[k][id] = arena[start[k]:parts[k]:parts[k]]
		}
		touched = touched[:0]
	}
	sc.touched = touched
	for m, ms := range st.members {
		k := m * numKinds
		out[ms.MemberID] = MemberAssignment{Active: maps[k+outActive], Standby: maps[k+outStandby], Warmup: maps[k+outWarmup]}
	}
	return out
}
