package assign

// output builds the Assignment from the owner array: for each topic, each
// member's partitions in ascending order, sliced from one shared backing
// array. Cost O(members + partitions + member-topic pairs).
func (b *builder) output() Assignment {
	out := make(Assignment, len(b.members))
	maps := make([]map[TopicID][]int32, len(b.members))
	if b.total > 0 {
		backing := make([]int32, b.total)
		lists := make([][]int32, len(b.members))
		cnt := make([]int32, len(b.members))
		var touched []int32
		// First pass: number of topics per member, to size the maps.
		ntop := make([]int32, len(b.members))
		for _, t := range b.topics {
			for _, m := range b.owner[t.off : t.off+t.n] {
				if m >= 0 && cnt[m] == 0 {
					cnt[m] = 1
					touched = append(touched, m)
				}
			}
			for _, m := range touched {
				cnt[m] = 0
				ntop[m]++
			}
			touched = touched[:0]
		}
		for m, n := range ntop {
			if n > 0 {
				maps[m] = make(map[TopicID][]int32, n)
			}
		}
		pos := 0
		for _, t := range b.topics {
			seg := b.owner[t.off : t.off+t.n]
			for _, m := range seg {
				if m < 0 {
					continue // cannot happen after a successful assignment
				}
				if cnt[m] == 0 {
					touched = append(touched, m)
				}
				cnt[m]++
			}
			for _, m := range touched {
				lists[m] = backing[pos : pos : pos+int(cnt[m])]
				pos += int(cnt[m])
			}
			for p, m := range seg {
				if m >= 0 {
					lists[m] = append(lists[m], int32(p))
				}
			}
			for _, m := range touched {
				maps[m][t.id] = lists[m]
				cnt[m] = 0
			}
			touched = touched[:0]
		}
	}
	for m, ms := range b.members {
		if maps[m] == nil {
			maps[m] = map[TopicID][]int32{}
		}
		out[ms.MemberID] = maps[m]
	}
	return out
}
