package assign

// output builds the Assignment from the owner array: for each member, a map
// with one entry per topic it received, holding its partitions in ascending
// order. All lists are sub-slices (capacity-limited) of one backing array.
// Cost O(members + partitions), plus one map entry per member-topic pair.
//
// Two passes over the owner array: (1) per member, the number of partitions
// and of topics (topics are visited in order, so a member starts a new topic
// exactly when its last-seen topic changes); (2) a counting-sort scatter of
// the partition numbers, ascending per member, recording where each of the
// member's topics starts.
func (b *builder) output() Assignment {
	nm := len(b.members)
	out := make(Assignment, nm)
	if b.total == 0 {
		for _, ms := range b.members {
			out[ms.MemberID] = map[TopicID][]int32{}
		}
		return out
	}
	// Per member: start/segOff (prefix sums, nm+1 each), last topic seen
	// (topic index + 1; 0 = none), and the scatter cursors pos and seg.
	scratch := make([]int32, 5*nm+2)
	start, segOff := scratch[:nm+1], scratch[nm+1:2*nm+2]
	last, pos, seg := scratch[2*nm+2:3*nm+2], scratch[3*nm+2:4*nm+2], scratch[4*nm+2:]
	// Both passes walk runs of partitions with the same owner (long in
	// homogeneous groups: members receive contiguous ranges).
	for t, ti := range b.topics {
		tt := int32(t) + 1
		own := b.owner[ti.off : ti.off+ti.n]
		for i := 0; i < len(own); {
			m := own[i]
			j := i + 1
			for j < len(own) && own[j] == m {
				j++
			}
			if m >= 0 { // always after a successful assignment
				start[m+1] += int32(j - i)
				if last[m] != tt {
					last[m] = tt
					segOff[m+1]++
				}
			}
			i = j
		}
	}
	for m := 0; m < nm; m++ {
		start[m+1] += start[m]
		segOff[m+1] += segOff[m]
		pos[m], seg[m], last[m] = start[m], segOff[m], 0
	}
	backing := make([]int32, start[nm])
	// Per member-topic segment: topic index and start in backing.
	segTopic := make([]int32, 2*segOff[nm])
	segStart := segTopic[segOff[nm]:]
	for t, ti := range b.topics {
		tt := int32(t) + 1
		own := b.owner[ti.off : ti.off+ti.n]
		for i := 0; i < len(own); {
			m := own[i]
			j := i + 1
			for j < len(own) && own[j] == m {
				j++
			}
			if m >= 0 {
				if last[m] != tt {
					last[m] = tt
					segTopic[seg[m]] = int32(t)
					segStart[seg[m]] = pos[m]
					seg[m]++
				}
				dst := backing[pos[m] : pos[m]+int32(j-i)]
				for k := range dst {
					dst[k] = int32(i + k)
				}
				pos[m] += int32(j - i)
			}
			i = j
		}
	}
	for m, ms := range b.members {
		lo, hi := segOff[m], segOff[m+1]
		mp := make(map[TopicID][]int32, hi-lo)
		for k := lo; k < hi; k++ {
			end := start[m+1]
			if k+1 < hi {
				end = segStart[k+1]
			}
			mp[b.topics[segTopic[k]].id] = backing[segStart[k]:end:end]
		}
		out[ms.MemberID] = mp
	}
	return out
}
