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
// kind); a second puts all partitions into one exactly sized array, each
// (member, kind) owning a contiguous region of it in subtopology then
// partition order (with the subtopology of each slot alongside); then every
// TaskSet map is allocated at its final size and filled from its region in
// one go, which keeps the map being filled in cache.
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
	base := grow(sc.outStart, K+1) // region of key k: base[k]:base[k+1]
	sc.outStart = base
	total := int32(0)
	for k, n := range parts {
		base[k], parts[k] = total, total
		total += n
	}
	base[K] = total
	arena := make([]int32, total)
	slotSub := grow(sc.slotSub, int(total))
	sc.slotSub = slotSub
	for si := range st.subs {
		st.forEachPlacement(si, func(k, p int32) {
			arena[parts[k]] = p
			slotSub[parts[k]] = int32(si)
			parts[k]++
		})
	}
	for m, ms := range st.members {
		var ts [numKinds]TaskSet
		for kind := range ts {
			k := m*numKinds + kind
			if entries[k] == 0 {
				continue
			}
			mp := make(TaskSet, entries[k])
			for i, end := base[k], base[k+1]; i < end; {
				si := slotSub[i]
				j := i + 1
				for j < end && slotSub[j] == si {
					j++
				}
				mp[st.subs[si].ID] = arena[i:j:j]
				i = j
			}
			ts[kind] = mp
		}
		out[ms.MemberID] = MemberAssignment{Active: ts[outActive], Standby: ts[outStandby], Warmup: ts[outWarmup]}
	}
	return out
}
