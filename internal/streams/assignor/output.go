package assignor

// output builds the Assignment: every member present, partitions ascending.
// The partitions of all members share one backing array.
func (st *state) output() Assignment {
	out := make(Assignment, len(st.members))
	if st.numTasks == 0 || len(st.members) == 0 {
		for _, m := range st.members {
			out[m.MemberID] = MemberAssignment{}
		}
		return out
	}
	res := make([][3]TaskSet, len(st.members))
	sizes := make([][3]int32, len(st.members))
	R := st.replicas
	// Per subtopology: collect each member's partitions, then publish them.
	const (
		active = iota
		standby
		warmup
	)
	type key struct {
		m    int32
		kind int8
	}
	arena := make([]int32, 0, st.numTasks+len(st.standby)+min(st.spec.NumWarmupReplicas, st.numSF))
	bufs := make([][3][]int32, len(st.members))
	var touched []key
	type entry struct {
		k          key
		sub        int32
		start, end int32 // in arena
	}
	entries := make([]entry, 0, cap(arena))
	note := func(m int32, kind int8, p int32) {
		if len(bufs[m][kind]) == 0 {
			touched = append(touched, key{m, kind})
		}
		bufs[m][kind] = append(bufs[m][kind], p)
	}
	for si, s := range st.subs {
		off := st.subOffset[si]
		for p := int32(0); p < s.NumTasks; p++ {
			t := off + p
			note(st.owner[t], active, p)
			if w := st.warm[t]; w >= 0 {
				note(w, warmup, p)
			}
			if R > 0 && s.Stateful {
				for _, m := range st.standby[int(t)*R : int(t)*R+R] {
					if m >= 0 {
						note(m, standby, p)
					}
				}
			}
		}
		for _, k := range touched {
			b := bufs[k.m][k.kind]
			start := len(arena)
			arena = append(arena, b...)
			entries = append(entries, entry{k, int32(si), int32(start), int32(len(arena))})
			sizes[k.m][k.kind]++
			bufs[k.m][k.kind] = b[:0]
		}
		touched = touched[:0]
	}
	// Maps sized up front: growing them dominated the cost otherwise.
	for _, e := range entries {
		ts := &res[e.k.m][e.k.kind]
		if *ts == nil {
			*ts = make(TaskSet, sizes[e.k.m][e.k.kind])
		}
		(*ts)[st.subs[e.sub].ID] = arena[e.start:e.end:e.end]
	}
	for m, ms := range st.members {
		out[ms.MemberID] = MemberAssignment{Active: res[m][active], Standby: res[m][standby], Warmup: res[m][warmup]}
	}
	return out
}
