package assign

import "slices"

// rangeAssign implements the range assignor (Kafka: RangeAssignor). For each
// topic, its subscribers in member order (static members first by instance
// id, then by member id) have a quota of n/s partitions, the first n%s of
// them one more. Members keep their lowest-numbered current partitions up to
// the quota (a member holding more than the quota keeps one extra while extra
// slots remain, in member order); the other partitions are handed out in
// ascending order to members with room, so a fresh group gets contiguous
// ranges and co-partitioned topics (same subscribers, same partition count)
// get identical partition numbers per member.
func (b *builder) rangeAssign() error {
	coPartitioned := b.homogeneous && len(b.topics) > 1
	for _, t := range b.topics[1:] {
		if t.n != b.topics[0].n {
			coPartitioned = false
			break
		}
	}
	if coPartitioned {
		b.racks.intersectCoPartitioned(b)
	}

	nm := len(b.members)
	var all []int32
	if b.homogeneous {
		all = make([]int32, nm)
		for m := range all {
			all[m] = int32(m)
		}
	}
	rem := make([]int32, nm)
	cnt := make([]int32, nm)
	hasExtra := make([]bool, nm)
	// Members with a current assignment, and per topic how many of its
	// subscribers have one: topics with none take the fast path below.
	hasCur := make([]bool, nm)
	curSubs := make([]int32, len(b.topics))
	for m, ms := range b.members {
		if len(ms.Current) > 0 {
			hasCur[m] = true
			for _, t := range b.subs[m] {
				curSubs[t]++
			}
		}
	}
	var cur, unassigned []int32
	for t := range b.topics {
		ti := b.topics[t]
		subs := all
		if !b.homogeneous {
			subs = b.subscribers[t]
		}
		if len(subs) == 0 || ti.n == 0 {
			continue
		}
		minQ := ti.n / int32(len(subs))
		extra := ti.n % int32(len(subs))
		if curSubs[t] == 0 && !b.racks.aware {
			// Nothing to keep and no rack preference: what the quota and
			// fill steps below compute is contiguous ranges in member
			// order, the first extra members one partition more. Only the
			// members that receive partitions are visited.
			gp := ti.off
			for i, m := range subs {
				q := minQ
				if int32(i) < extra {
					q++
				}
				if q == 0 {
					break
				}
				for end := gp + q; gp < end; gp++ {
					b.owner[gp] = m
				}
			}
			continue
		}
		for _, m := range subs {
			if !hasCur[m] {
				continue // nothing to keep; cnt[m] is 0
			}
			cur = b.validCurrent(int(m), int32(t), cur)
			keep := min(int32(len(cur)), minQ)
			if int32(len(cur)) > minQ && extra > 0 {
				keep++
				extra--
				hasExtra[m] = true
			}
			for _, p := range cur[:keep] {
				b.owner[ti.off+p] = m
			}
			cnt[m] = keep
		}
		for _, m := range subs {
			q := minQ
			if hasExtra[m] {
				q++
				hasExtra[m] = false
			} else if extra > 0 {
				q++
				extra--
			}
			rem[m] = q - cnt[m]
			cnt[m] = 0
		}
		unassigned = unassigned[:0]
		for gp := ti.off; gp < ti.off+ti.n; gp++ {
			if b.owner[gp] < 0 {
				unassigned = append(unassigned, gp)
			}
		}
		if err := b.fill(unassigned, subs, rem, false); err != nil {
			return err
		}
	}
	return nil
}

// validCurrent returns member m's current partitions of topic t that it may
// keep, ascending and de-duplicated, in buf.
func (b *builder) validCurrent(m int, t int32, buf []int32) []int32 {
	buf = buf[:0]
	ps := b.members[m].Current[b.topics[t].id]
	if len(ps) == 0 {
		return buf
	}
	for _, p := range ps {
		if b.claimable(m, t, p) {
			buf = append(buf, p)
		}
	}
	if !slices.IsSorted(buf) {
		slices.Sort(buf)
	}
	return slices.Compact(buf)
}
