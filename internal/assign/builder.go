package assign

import (
	"cmp"
	"slices"
	"sync"
)

// topicInfo is one subscribed topic with a known partition count.
type topicInfo struct {
	id  TopicID
	n   int32 // partition count
	off int32 // index of partition 0 in the builder's flat partition arrays
}

// builder holds the state shared by the assignors. Partitions are numbered
// globally: partition p of topic t is gp = topics[t].off + p.
type builder struct {
	members  []*MemberSpec // sorted by the assignor's member order
	topics   []topicInfo   // sorted by topic id
	topicIdx map[TopicID]int32
	total    int // number of partitions over all topics

	subs        [][]int32 // per member: sorted topic indices it subscribes to
	homogeneous bool      // all members subscribe to the same topics
	subscribers [][]int32 // per topic: ascending member indices (heterogeneous groups only)

	// owner[gp] is the member index owning gp, -1 when unassigned, and
	// -(m+2) when unassigned but previously held by member m (give-back hint).
	owner []int32

	racks rackInfo

	// scratch for fill
	left      []int32
	rackQueue [][]int32
	rackCur   []int
	matchPos  []int32
	order     []int32
}

// grow returns (*buf)[:n], reallocating *buf when its capacity is short.
func grow(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n, n+n/4)
	}
	return (*buf)[:n]
}

// newBuilder validates spec and prepares the shared state; members are sorted
// by order, or by member id when order is nil.
func newBuilder(spec *GroupSpec, md TopicMetadata, order func(a, b *MemberSpec) int) (*builder, error) {
	if spec == nil {
		return nil, errorf("nil group spec")
	}
	if md == nil {
		return nil, errorf("nil topic metadata")
	}
	b := &builder{members: make([]*MemberSpec, len(spec.Members))}
	for i := range spec.Members {
		if spec.Members[i].MemberID == "" {
			return nil, errorf("member %d has an empty member id", i)
		}
		b.members[i] = &spec.Members[i]
	}
	if order == nil {
		sortByMemberID(b.members)
	} else {
		slices.SortFunc(b.members, order)
	}
	for i := 1; i < len(b.members); i++ {
		if b.members[i].MemberID == b.members[i-1].MemberID {
			return nil, errorf("duplicate member id %q", b.members[i].MemberID)
		}
	}
	if len(b.members) == 0 {
		return b, nil
	}

	// Known topics, each looked up once.
	counts := make(map[TopicID]int32)
	type sliceKey struct {
		p *TopicID
		n int
	}
	seen := map[sliceKey]bool{}
	for i, m := range b.members {
		if len(m.Subscribed) == 0 || i > 0 && sameTopics(m.Subscribed, b.members[i-1].Subscribed) {
			continue
		}
		key := sliceKey{&m.Subscribed[0], len(m.Subscribed)}
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, id := range m.Subscribed {
			if _, ok := counts[id]; ok {
				continue
			}
			n := md.Partitions(id)
			if n < -1 {
				return nil, errorf("topic %x has invalid partition count %d", id, n)
			}
			counts[id] = n
		}
	}
	for id, n := range counts {
		if n >= 0 {
			b.topics = append(b.topics, topicInfo{id: id, n: n})
		}
	}
	slices.SortFunc(b.topics, func(x, y topicInfo) int { return compareTopicID(x.id, y.id) })
	b.topicIdx = make(map[TopicID]int32, len(b.topics))
	for t := range b.topics {
		b.topics[t].off = int32(b.total)
		b.total += int(b.topics[t].n)
		if b.total > 1<<31-2 {
			return nil, errorf("too many partitions")
		}
		b.topicIdx[b.topics[t].id] = int32(t)
	}

	// Subscriptions as sorted, de-duplicated topic indices.
	b.subs = make([][]int32, len(b.members))
	b.homogeneous = true
	// Members sharing one Subscribed slice (same array, same length) are
	// resolved once: coordinators typically share identical subscriptions.
	resolved := map[sliceKey][]int32{}
	for m, ms := range b.members {
		if m > 0 && sameTopics(ms.Subscribed, b.members[m-1].Subscribed) {
			b.subs[m] = b.subs[m-1] // homogeneity unchanged
			continue
		}
		var key sliceKey
		if len(ms.Subscribed) > 0 {
			key = sliceKey{&ms.Subscribed[0], len(ms.Subscribed)}
			if s, ok := resolved[key]; ok {
				b.subs[m] = s
				if m > 0 && !sameInts(s, b.subs[0]) {
					b.homogeneous = false
				}
				continue
			}
		}
		s := make([]int32, 0, len(ms.Subscribed))
		for _, id := range ms.Subscribed {
			if t, ok := b.topicIdx[id]; ok {
				s = append(s, t)
			}
		}
		slices.Sort(s)
		s = slices.Compact(s)
		if key.p != nil {
			resolved[key] = s
		}
		b.subs[m] = s
		if m > 0 && !sameInts(s, b.subs[0]) {
			b.homogeneous = false
		}
	}
	if !b.homogeneous {
		// Counted first, then filled into one flat array.
		off := make([]int32, len(b.topics)+1)
		for _, s := range b.subs {
			for _, t := range s {
				off[t+1]++
			}
		}
		for t := range b.topics {
			off[t+1] += off[t]
		}
		flat := make([]int32, off[len(b.topics)])
		b.subscribers = make([][]int32, len(b.topics))
		for t := range b.subscribers {
			b.subscribers[t] = flat[off[t]:off[t]:off[t+1]]
		}
		for m, s := range b.subs {
			for _, t := range s {
				b.subscribers[t] = append(b.subscribers[t], int32(m))
			}
		}
	}

	b.owner = getOwner(b.total)
	b.racks.load(b, md)
	return b, nil
}

// ownerPool recycles owner arrays between assignments: they are scratch
// (never part of an Assignment) and the largest allocation of an assignment.
var ownerPool sync.Pool // of *[]int32

// getOwner returns an owner array of n entries, all -1 (unassigned).
func getOwner(n int) []int32 {
	var o []int32
	if p, ok := ownerPool.Get().(*[]int32); ok && cap(*p) >= n {
		o = (*p)[:n]
	} else {
		o = make([]int32, n)
	}
	for i := range o {
		o[i] = -1
	}
	return o
}

// release returns the builder's scratch to its pools; b must not be used
// afterwards.
func (b *builder) release() {
	if b.owner != nil {
		o := b.owner
		b.owner = nil
		ownerPool.Put(&o)
	}
}

// curTopic is one known topic of a member's current assignment.
type curTopic struct {
	t  int32   // topic index
	ps []int32 // the member's current partitions of it, as given
}

// currentTopics returns the known topics of member m's current assignment,
// by topic index, in buf.
func (b *builder) currentTopics(m int, buf []curTopic) []curTopic {
	buf = buf[:0]
	for id, ps := range b.members[m].Current {
		if t, ok := b.topicIdx[id]; ok {
			buf = append(buf, curTopic{t, ps})
		}
	}
	slices.SortFunc(buf, func(x, y curTopic) int { return cmp.Compare(x.t, y.t) })
	return buf
}

// claimable reports whether member m may keep partition p of topic t from its
// current assignment. A partition it may not keep only because of a rack
// mismatch is marked with a give-back hint for m.
func (b *builder) claimable(m int, t int32, p int32) bool {
	if p < 0 || p >= b.topics[t].n {
		return false
	}
	gp := b.topics[t].off + p
	if b.owner[gp] >= 0 {
		return false // held by a member earlier in the order (duplicate input)
	}
	if !b.racks.keepMismatched && b.racks.mismatch(m, gp) {
		if b.owner[gp] == -1 {
			b.owner[gp] = -int32(m) - 2
		}
		return false
	}
	return true
}

// fill gives every partition in parts (global numbers, unassigned) to a member
// of cands (in order) with remaining quota rem[m] > 0, decrementing rem.
// The sum of rem over cands must be at least len(parts).
//
// With rack awareness, partitions first go to members on a rack holding one
// of their replicas (fewest matching racks first when byMatchCount, else in
// the order given); the rest go back to their previous owner when it has room
// (give-back hint), then to the first members in cands with room.
func (b *builder) fill(parts []int32, cands []int32, rem []int32, byMatchCount bool) error {
	left := append(b.left[:0], parts...)
	if b.racks.aware {
		left = b.fillRackAware(left, cands, rem, byMatchCount)
	}
	// Give back to the previous owner.
	k := 0
	for _, gp := range left {
		if o := b.owner[gp]; o <= -2 {
			if h := -o - 2; rem[h] > 0 {
				b.owner[gp] = h
				rem[h]--
				continue
			}
		}
		left[k] = gp
		k++
	}
	left = left[:k]
	ci := 0
	for _, gp := range left {
		for ci < len(cands) && rem[cands[ci]] <= 0 {
			ci++
		}
		if ci == len(cands) {
			b.left = left
			return errUnassigned
		}
		b.owner[gp] = cands[ci]
		rem[cands[ci]]--
	}
	b.left = left
	return nil
}

// fillRackAware assigns the partitions of left that have a replica on the
// rack of a candidate with room, and returns the others (reusing left).
func (b *builder) fillRackAware(left []int32, cands []int32, rem []int32, byMatchCount bool) []int32 {
	r := &b.racks
	if b.rackQueue == nil {
		b.rackQueue = make([][]int32, len(r.names))
		b.rackCur = make([]int, len(r.names))
	}
	any := false
	for i := range b.rackQueue {
		b.rackQueue[i] = b.rackQueue[i][:0]
		b.rackCur[i] = 0
	}
	for _, m := range cands {
		if rem[m] > 0 && r.member[m] >= 0 {
			b.rackQueue[r.member[m]] = append(b.rackQueue[r.member[m]], m)
			any = true
		}
	}
	if !any {
		return left
	}
	var order []int32
	if byMatchCount {
		// Counting sort by number of matching racks (stable); 0-match
		// partitions are not candidates here and stay in left, in order.
		nc := len(r.names) + 1
		if cap(b.matchPos) < nc+1 {
			b.matchPos = make([]int32, nc+1)
		}
		pos := b.matchPos[:nc+1]
		clear(pos)
		for _, gp := range left {
			pos[r.count(gp)+1]++
		}
		pos[1] = 0 // order holds matching partitions only
		for c := 2; c <= nc; c++ {
			pos[c] += pos[c-1]
		}
		order = grow(&b.order, int(pos[nc]))
		k := 0
		for _, gp := range left {
			if c := r.count(gp); c == 0 {
				left[k] = gp
				k++
			} else {
				order[pos[c]] = gp
				pos[c]++
			}
		}
		left = left[:k]
	} else {
		order = append(grow(&b.order, 0), left...)
		b.order = order
		left = left[:0]
	}
	for _, gp := range order {
		done := false
		for _, rk := range r.of(gp) {
			q, c := b.rackQueue[rk], b.rackCur[rk]
			for c < len(q) && rem[q[c]] <= 0 {
				c++
			}
			b.rackCur[rk] = c
			if c < len(q) {
				b.owner[gp] = q[c]
				rem[q[c]]--
				done = true
				break
			}
		}
		if !done {
			left = append(left, gp)
		}
	}
	return left
}

// sameTopics reports whether a and b list the same topics in the same order
// (a shortcut for members sharing or repeating one subscription).
func sameTopics(a, b []TopicID) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}

// sameInts is slices.Equal with a shortcut for the same backing array.
func sameInts(a, b []int32) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}
