package assign

import "strings"

// Assignment is a computed target assignment: for every member of the
// GroupSpec, its partitions grouped by topic. A member's topics are in
// ascending topic id order, each with its partitions ascending and at least
// one of them; a member with nothing assigned has no topics.
//
// It is stored flat (no map per member): members are numbered 0..Len()-1 in
// the assignor's internal order; Index finds a member by id. Partition lists
// returned by Topic share one backing array and are capacity-limited; callers
// must not modify them (copy to keep or change). Map builds the nested-map
// form. A zero Assignment has no members.
type Assignment struct {
	ids      []string  // member ids, by member number
	byID     []int32   // member numbers ordered by member id; nil when ids are sorted
	segOff   []int32   // member m's topics are segments segOff[m]..segOff[m+1]-1; len Len()+1
	segTopic []TopicID // per segment: topic id
	segStart []int32   // per segment: first index in parts; one extra entry = len(parts)
	parts    []int32   // partitions of all segments
}

// AssignmentMap is an assignment as nested maps: member id -> topic id ->
// ascending partitions. Every member has an entry (possibly an empty map);
// topics with no partition for a member are absent from its map.
type AssignmentMap map[string]map[TopicID][]int32

// Len returns the number of members.
func (a *Assignment) Len() int { return len(a.ids) }

// MemberID returns the id of member number i (0 <= i < Len()).
func (a *Assignment) MemberID(i int) string { return a.ids[i] }

// Index returns the member number of memberID, or -1 when it is not a member.
// Cost O(log Len()) string comparisons.
func (a *Assignment) Index(memberID string) int {
	n := len(a.ids)
	at := func(k int) string {
		if a.byID == nil {
			return a.ids[k]
		}
		return a.ids[a.byID[k]]
	}
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if strings.Compare(at(mid), memberID) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < n && at(lo) == memberID {
		if a.byID == nil {
			return lo
		}
		return int(a.byID[lo])
	}
	return -1
}

// Topics returns the number of topics assigned to member number i.
func (a *Assignment) Topics(i int) int { return int(a.segOff[i+1] - a.segOff[i]) }

// Topic returns the k-th topic (0 <= k < Topics(i)) of member number i and
// its ascending partitions (read-only, see Assignment).
func (a *Assignment) Topic(i, k int) (TopicID, []int32) {
	s := a.segOff[i] + int32(k)
	lo, hi := a.segStart[s], a.segStart[s+1]
	return a.segTopic[s], a.parts[lo:hi:hi]
}

// Partitions returns the number of partitions assigned to member number i.
func (a *Assignment) Partitions(i int) int {
	return int(a.segStart[a.segOff[i+1]] - a.segStart[a.segOff[i]])
}

// Map returns the assignment as nested maps (one map per member; the
// partition lists share the Assignment's backing array).
func (a *Assignment) Map() AssignmentMap {
	out := make(AssignmentMap, len(a.ids))
	for i, id := range a.ids {
		mp := make(map[TopicID][]int32, a.Topics(i))
		for k := range a.Topics(i) {
			t, ps := a.Topic(i, k)
			mp[t] = ps
		}
		out[id] = mp
	}
	return out
}
