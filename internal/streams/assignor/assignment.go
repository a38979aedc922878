package assignor

import "strings"

// TaskKind selects the active, standby or warm-up tasks of a member in an
// Assignment.
type TaskKind int

// Task kinds of an Assignment.
const (
	ActiveTasks TaskKind = iota
	StandbyTasks
	WarmupTasks
	numKinds
)

// Assignment is a computed target assignment: for every member of the
// GroupSpec and every TaskKind, its tasks grouped by subtopology. Within a
// (member, kind) the subtopologies are in ascending ID order, each with its
// partitions ascending and at least one of them.
//
// It is stored flat (no map per member): members are numbered 0..Len()-1 in
// ascending MemberID order; Index finds a member by id. Partition lists
// returned by Tasks share one backing array and are capacity-limited;
// callers must not modify them (copy to keep or change). Map builds the
// nested-map form. A zero Assignment has no members.
type Assignment struct {
	ids      []string // member ids, ascending, by member number
	subIDs   []string // subtopology ids, ascending, by subtopology number
	segOff   []int32  // (member m, kind k): segments segOff[m*numKinds+k]..segOff[m*numKinds+k+1]-1
	segSub   []int32  // per segment: subtopology number
	segStart []int32  // per segment: first index in parts; one extra entry = len(parts)
	parts    []int32  // partitions of all segments
}

// AssignmentMap is an assignment as maps: member id -> its tasks. Every
// member of the GroupSpec has an entry; empty task sets are nil.
type AssignmentMap map[string]MemberAssignment

// Len returns the number of members.
func (a *Assignment) Len() int { return len(a.ids) }

// MemberID returns the id of member number i (0 <= i < Len()).
func (a *Assignment) MemberID(i int) string { return a.ids[i] }

// Index returns the member number of memberID, or -1 when it is not a
// member. Cost O(log Len()) string comparisons.
func (a *Assignment) Index(memberID string) int {
	lo, hi := 0, len(a.ids)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if strings.Compare(a.ids[mid], memberID) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(a.ids) && a.ids[lo] == memberID {
		return lo
	}
	return -1
}

// Subtopologies returns the number of subtopologies of which member number
// i has tasks of the given kind.
func (a *Assignment) Subtopologies(i int, kind TaskKind) int {
	if a.segOff == nil {
		return 0
	}
	k := i*int(numKinds) + int(kind)
	return int(a.segOff[k+1] - a.segOff[k])
}

// Tasks returns the j-th subtopology (0 <= j < Subtopologies(i, kind)) of
// member number i's tasks of the given kind, and its ascending partitions
// (read-only, see Assignment).
func (a *Assignment) Tasks(i int, kind TaskKind, j int) (subtopology string, partitions []int32) {
	s := a.segOff[i*int(numKinds)+int(kind)] + int32(j)
	lo, hi := a.segStart[s], a.segStart[s+1]
	return a.subIDs[a.segSub[s]], a.parts[lo:hi:hi]
}

// Count returns the number of tasks of the given kind of member number i.
func (a *Assignment) Count(i int, kind TaskKind) int {
	if a.segOff == nil {
		return 0
	}
	k := i*int(numKinds) + int(kind)
	return int(a.segStart[a.segOff[k+1]] - a.segStart[a.segOff[k]])
}

// TaskSet returns member number i's tasks of the given kind as a TaskSet,
// nil when it has none (the partition lists share the Assignment's backing
// array).
func (a *Assignment) TaskSet(i int, kind TaskKind) TaskSet {
	n := a.Subtopologies(i, kind)
	if n == 0 {
		return nil
	}
	ts := make(TaskSet, n)
	for j := range n {
		s, ps := a.Tasks(i, kind, j)
		ts[s] = ps
	}
	return ts
}

// Member returns the tasks of member number i as TaskSets.
func (a *Assignment) Member(i int) MemberAssignment {
	return MemberAssignment{
		Active:  a.TaskSet(i, ActiveTasks),
		Standby: a.TaskSet(i, StandbyTasks),
		Warmup:  a.TaskSet(i, WarmupTasks),
	}
}

// Map returns the assignment as maps (the partition lists share the
// Assignment's backing array).
func (a *Assignment) Map() AssignmentMap {
	out := make(AssignmentMap, len(a.ids))
	for i, id := range a.ids {
		out[id] = a.Member(i)
	}
	return out
}
