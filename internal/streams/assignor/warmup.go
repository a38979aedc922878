package assignor

// assignWarmups keeps moved stateful tasks on their caught-up previous owner
// while the new owner warms up (see "Warm-up tasks" in the package doc).
// Warm-ups the new owner already had come first, then the other moves, each
// in task order, up to NumWarmupReplicas in the group.
func (st *state) assignWarmups() {
	budget := st.spec.NumWarmupReplicas
	if budget == 0 {
		return
	}
	for _, continuing := range [2]bool{true, false} {
		for si, s := range st.subs {
			if !s.Stateful {
				continue
			}
			off := st.subOffset[si]
			for t := off; t < off+s.NumTasks; t++ {
				if budget == 0 {
					return
				}
				if st.warm[t] >= 0 {
					continue
				}
				n, p := st.owner[t], st.prevActive[t]
				if p < 0 || n == p || st.proc[n] == st.proc[p] || !st.reportsLags[n] {
					continue
				}
				wasWarmup, caughtUp := false, false
				for _, c := range st.candidates(t) {
					if c.member == n {
						wasWarmup = c.kind == kindWarmup
						caughtUp = c.hasLag && c.lag <= st.spec.AcceptableRecoveryLag
						break
					}
				}
				if caughtUp || wasWarmup != continuing {
					continue
				}
				st.owner[t] = p
				st.add(p, 1)
				st.add(n, -1)
				st.warm[t] = n
				budget--
			}
		}
	}
}
