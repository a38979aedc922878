package assignor

// forEachPlacement calls f for every task placement of subtopology si in
// partition order: the active owner, the warm-up and the standbys of each
// partition; key is member*numKinds+kind.
func (st *state) forEachPlacement(si int, f func(key int32, p int32)) {
	s := st.subs[si]
	off := st.subOffset[si]
	R := st.replicas
	standbys := R > 0 && s.Stateful && len(st.standby) > 0
	for p := int32(0); p < s.NumTasks; p++ {
		t := off + p
		f(st.owner[t]*int32(numKinds)+int32(ActiveTasks), p)
		if w := st.warm[t]; w >= 0 {
			f(w*int32(numKinds)+int32(WarmupTasks), p)
		}
		if standbys {
			for _, m := range st.standby[int(t)*R : int(t)*R+R] {
				if m >= 0 {
					f(m*int32(numKinds)+int32(StandbyTasks), p)
				}
			}
		}
	}
}

// output builds the flat Assignment: every member present, subtopologies
// and partitions ascending per (member, kind).
// A first pass counts the segments (subtopologies) and partitions of every
// (member, kind) key; prefix sums give each key a contiguous range of
// segments and of partitions, in key order; a second pass scatters the
// partitions, starting a segment whenever a key's subtopology changes
// (subtopologies are visited in order). One allocation holds all int32
// arrays of the result. Cost O(members + task placements).
func (st *state) output() *Assignment {
	nm := len(st.members)
	a := &Assignment{ids: make([]string, nm)}
	for m, ms := range st.members {
		a.ids[m] = ms.MemberID
	}
	if st.numTasks == 0 || nm == 0 {
		return a
	}
	a.subIDs = make([]string, len(st.subs))
	for i, s := range st.subs {
		a.subIDs[i] = s.ID
	}
	sc := &st.scratch
	K := nm * int(numKinds)
	segs := filled(sc.outCount, K, 0)   // segments per key, then next free segment
	parts := filled(sc.outCursor, K, 0) // partitions per key, then next free slot
	lastSub := filled(sc.outSub, K, -1)
	sc.outCount, sc.outCursor, sc.outSub = segs, parts, lastSub
	for si := range st.subs {
		st.forEachPlacement(si, func(k, _ int32) {
			parts[k]++
			if lastSub[k] != int32(si) {
				lastSub[k] = int32(si)
				segs[k]++
			}
		})
	}
	numSegs, total := int32(0), int32(0)
	for k := range K {
		ns, np := segs[k], parts[k]
		segs[k], parts[k] = numSegs, total
		numSegs += ns
		total += np
	}
	buf := make([]int32, (K+1)+int(numSegs)+(int(numSegs)+1)+int(total))
	segOff, buf := buf[:K+1:K+1], buf[K+1:]
	segSub, buf := buf[:numSegs:numSegs], buf[numSegs:]
	segStart, arena := buf[:numSegs+1:numSegs+1], buf[numSegs+1:]
	copy(segOff, segs)
	segOff[K] = numSegs
	segStart[numSegs] = total
	for k := range lastSub {
		lastSub[k] = -1
	}
	for si := range st.subs {
		st.forEachPlacement(si, func(k, p int32) {
			if lastSub[k] != int32(si) {
				lastSub[k] = int32(si)
				segSub[segs[k]] = int32(si)
				segStart[segs[k]] = parts[k]
				segs[k]++
			}
			arena[parts[k]] = p
			parts[k]++
		})
	}
	a.segOff, a.segSub, a.segStart, a.parts = segOff, segSub, segStart, arena
	return a
}
