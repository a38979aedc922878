package coordinator

import "sort"

// ShareAssignorName is the name of the share group assignor (Kafka's SimpleAssignor).
const ShareAssignorName = "simple"

// computeTargetAssignment runs the simple share assignor (KIP-932: a partition may be assigned
// to several members) over the current members and writes the target of every member whose
// target changed, then the target assignment metadata at epoch.
//
// Per subscribed topic with n partitions and s subscribers, every partition is shared by
// ceil(s/n) members and the members get the resulting slots as evenly as possible (the first
// subscribers in member id order take the larger shares). The assignment is sticky: a member
// keeps the partitions it was given as long as that stays balanced; only the excess moves.
func (g *ShareGroup) computeTargetAssignment(st *State, epoch int32) {
	next := shareAssign(st, g)
	for _, mid := range sortedKeys(g.members) {
		a := next[mid]
		if old, ok := g.targets[mid]; !ok || !equalTP(old, a) {
			g.writeTarget(st, mid, a)
		}
	}
	g.writeTargetMeta(st, epoch)
}

// shareAssign computes every member's target.
func shareAssign(st *State, g *ShareGroup) map[string]topicPartitions {
	out := make(map[string]topicPartitions, len(g.members))
	for mid := range g.members {
		out[mid] = topicPartitions{}
	}
	if st.Image == nil {
		return out
	}
	subs := map[string][]string{} // topic → subscribers, sorted
	for _, mid := range sortedKeys(g.members) {
		for _, t := range g.members[mid].subscribed {
			subs[t] = append(subs[t], mid)
		}
	}
	for _, topic := range sortedKeys(subs) {
		id, n, ok := st.Image.TopicID(topic)
		if !ok || n <= 0 {
			continue
		}
		members := subs[topic]
		sharing := (len(members) + int(n) - 1) / int(n)
		slots := sharing * int(n)
		desired := make(map[string]int, len(members))
		cum := 0
		for i, mid := range members {
			upto := ((i+1)*slots + len(members) - 1) / len(members)
			desired[mid] = upto - cum
			cum = upto
		}
		// Start from the current targets that are still valid.
		holders := make([][]string, n) // partition → members, in member order
		have := map[string][]int32{}
		for _, mid := range members {
			var kept []int32
			for _, p := range g.targets[mid][id] {
				if p < n && len(kept) < desired[mid] {
					kept = append(kept, p)
				}
			}
			have[mid] = kept
			for _, p := range kept {
				holders[p] = append(holders[p], mid)
			}
		}
		// A partition shared by more members than it should be loses its excess holders, those
		// over their share first.
		for p := int32(0); p < n; p++ {
			for len(holders[p]) > sharing {
				hs := holders[p]
				drop := 0
				for i := 1; i < len(hs); i++ {
					if len(have[hs[i]])-desired[hs[i]] > len(have[hs[drop]])-desired[hs[drop]] {
						drop = i
					}
				}
				mid := hs[drop]
				holders[p] = append(hs[:drop:drop], hs[drop+1:]...)
				have[mid] = removeInt32(have[mid], p)
			}
		}
		// Fill partitions below their share with members below theirs, round robin.
		var under []string
		for _, mid := range members {
			if len(have[mid]) < desired[mid] {
				under = append(under, mid)
			}
		}
		next := 0
		for p := int32(0); p < n && len(under) > 0; p++ {
			for len(holders[p]) < sharing && len(under) > 0 {
				placed := false
				for k := 0; k < len(under); k++ {
					i := (next + k) % len(under)
					mid := under[i]
					if containsString(holders[p], mid) {
						continue
					}
					holders[p] = append(holders[p], mid)
					have[mid] = append(have[mid], p)
					if len(have[mid]) >= desired[mid] {
						under = append(under[:i:i], under[i+1:]...)
						if len(under) > 0 {
							next = i % len(under)
						}
					} else {
						next = (i + 1) % len(under)
					}
					placed = true
					break
				}
				if !placed {
					break
				}
			}
		}
		for _, mid := range members {
			if ps := have[mid]; len(ps) > 0 {
				ps = append([]int32(nil), ps...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				out[mid][id] = ps
			}
		}
	}
	return out
}

func removeInt32(xs []int32, x int32) []int32 {
	out := xs[:0:0]
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
