package assign

import (
	"slices"
	"strings"
)

// output builds the Assignment from the owner array: for each member, its
// topics in topic order, each with its partitions ascending.
// Cost O(members + partitions) (plus sorting the member ids when the member
// order is not by id, as in range with static members).
//
// Two passes over the owner array: (1) per member, the number of partitions
// and of topics (topics are visited in order, so a member starts a new topic
// exactly when its last-seen topic changes); (2) a counting-sort scatter of
// the partition numbers, ascending per member, recording where each of the
// member's topics starts.
func (b *builder) output() *Assignment {
	nm := len(b.members)
	a := &Assignment{ids: make([]string, nm)}
	for m, ms := range b.members {
		a.ids[m] = ms.MemberID
	}
	if !slices.IsSorted(a.ids) {
		a.byID = make([]int32, nm)
		for m := range a.byID {
			a.byID[m] = int32(m)
		}
		slices.SortFunc(a.byID, func(x, y int32) int { return strings.Compare(a.ids[x], a.ids[y]) })
	}
	if b.total == 0 {
		a.segOff = make([]int32, nm+1)
		a.segStart = []int32{0}
		return a
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
	// Per member-topic segment: topic and start in backing (plus the end).
	segTopic := make([]TopicID, segOff[nm])
	segStart := make([]int32, segOff[nm]+1)
	segStart[segOff[nm]] = start[nm]
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
					segTopic[seg[m]] = ti.id
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
	a.segOff = segOff
	a.segTopic = segTopic
	a.segStart = segStart
	a.parts = backing
	return a
}
