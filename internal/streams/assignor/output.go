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
	res := make([]MemberAssignment, len(st.members))
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
	arena := make([]int32, 0, st.numTasks+len(st.standby))
	bufs := make([][3][]int32, len(st.members))
	var touched []key
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
			parts := arena[start:len(arena):len(arena)]
			var ts *TaskSet
			switch k.kind {
			case active:
				ts = &res[k.m].Active
			case standby:
				ts = &res[k.m].Standby
			default:
				ts = &res[k.m].Warmup
			}
			if *ts == nil {
				*ts = make(TaskSet)
			}
			(*ts)[s.ID] = parts
			bufs[k.m][k.kind] = b[:0]
		}
		touched = touched[:0]
	}
	for m, ms := range st.members {
		out[ms.MemberID] = res[m]
	}
	return out
}
