package bench

// tracker follows a join storm's members incrementally so that the members' side of "settled"
// (settle.go) is an O(1) check: every member at one epoch (generation) above 0, every partition
// of the topic owned by exactly one member, and every member owning a balanced share. Not safe
// for concurrent use (callers hold their own lock).
type tracker struct {
	n          int
	epoch      []int32   // per member; 0 = not joined / rejoining
	parts      [][]int32 // per member, the partitions it owns
	cover      []int32   // per partition, how many members own it
	zero       int       // partitions owned by no member
	multi      int       // partitions owned by more than one member
	lo, hi     int       // a balanced share: lo or hi partitions
	unbalanced int       // members whose share is not balanced
	byEpoch    map[int32]int
}

func newTracker(members int, partitions int32) *tracker {
	t := &tracker{n: members, epoch: make([]int32, members), parts: make([][]int32, members),
		cover: make([]int32, partitions), zero: int(partitions), byEpoch: map[int32]int{0: members}}
	t.lo, t.hi = balance(members, partitions)
	if t.lo > 0 {
		t.unbalanced = members // everyone owns nothing yet
	}
	return t
}

func (t *tracker) balanced(owned int) bool { return owned >= t.lo && owned <= t.hi }

// setEpoch records member m's epoch.
func (t *tracker) setEpoch(m int, e int32) {
	old := t.epoch[m]
	if old == e {
		return
	}
	if t.byEpoch[old]--; t.byEpoch[old] == 0 {
		delete(t.byEpoch, old)
	}
	t.byEpoch[e]++
	t.epoch[m] = e
}

// setParts replaces member m's owned partitions (partitions outside the topic are ignored).
func (t *tracker) setParts(m int, ps []int32) {
	if !t.balanced(len(t.parts[m])) {
		t.unbalanced--
	}
	if !t.balanced(len(ps)) {
		t.unbalanced++
	}
	for _, p := range t.parts[m] {
		t.adjust(p, -1)
	}
	t.parts[m] = ps
	for _, p := range ps {
		t.adjust(p, 1)
	}
}

func (t *tracker) adjust(p int32, d int32) {
	if p < 0 || int(p) >= len(t.cover) {
		return
	}
	before := t.cover[p]
	after := before + d
	t.cover[p] = after
	if before == 0 {
		t.zero--
	}
	if after == 0 {
		t.zero++
	}
	if before > 1 && after <= 1 {
		t.multi--
	}
	if before <= 1 && after > 1 {
		t.multi++
	}
}

// settled reports whether, as the members see it, every member is at one epoch above 0 (which
// it returns), every partition is owned exactly once and every member owns a balanced share.
func (t *tracker) settled() (int32, bool) {
	if t.zero != 0 || t.multi != 0 || t.unbalanced != 0 || len(t.byEpoch) != 1 {
		return 0, false
	}
	for e, c := range t.byEpoch {
		return e, e > 0 && c == t.n
	}
	return 0, false
}
