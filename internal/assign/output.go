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
				if maps[m] == nil {
					maps[m] = make(map[TopicID][]int32, min(len(b.subs[m]), 8))
				}
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
