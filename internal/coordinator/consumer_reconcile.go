package coordinator

// reconcile moves a member's current assignment towards its target assignment (Kafka's
// CurrentAssignmentBuilder). owned is what the member reports owning (nil = not reported). The
// rules: partitions leaving the target are first revoked (state UNREVOKED_PARTITIONS, epoch
// unchanged) and the member keeps them pending revocation until it stops reporting them; new
// partitions are given only once no other member owns them (UNRELEASED_PARTITIONS while some
// are still held); a member owning exactly its target at the target epoch is STABLE.
func (g *ConsumerGroup) reconcile(mid string, cur *consumerCurrent, targetEpoch int32, target topicPartitions, owned topicPartitions) *consumerCurrent {
	switch cur.state {
	case MemberStable:
		if cur.epoch == targetEpoch {
			return cur
		}
		return g.nextAssignment(mid, cur, targetEpoch, target, owned)
	case MemberUnrevokedPartitions:
		if ownsAny(owned, cur.pending) {
			return cur
		}
		return g.nextAssignment(mid, cur, targetEpoch, target, owned)
	default: // UNRELEASED_PARTITIONS
		if g.stillUnreleased(mid, cur, targetEpoch, target) {
			return cur
		}
		return g.nextAssignment(mid, cur, targetEpoch, target, owned)
	}
}

// stillUnreleased reports whether nextAssignment would return an assignment equal to cur (so
// the heartbeat of a member waiting for partitions changes nothing): cur is UNRELEASED_PARTITIONS
// at the target epoch with previous epoch equal to it, owns only target partitions (nothing to
// revoke), each with a known assignment epoch and no other, and every target partition it lacks
// is still owned by another member. O(target partitions) lookups, no allocation, instead of
// rebuilding the assignment on every heartbeat while another member revokes.
func (g *ConsumerGroup) stillUnreleased(mid string, cur *consumerCurrent, targetEpoch int32, target topicPartitions) bool {
	if cur.epoch != targetEpoch || cur.prevEpoch != cur.epoch || len(cur.pending) != 0 {
		return false
	}
	n := 0
	for t, ps := range cur.assigned {
		if len(ps) == 0 {
			return false
		}
		tgt := target[t]
		for _, p := range ps {
			if !containsPartition(tgt, p) {
				return false
			}
			if _, ok := cur.epochs.get(t, p); !ok {
				return false
			}
			n++
		}
	}
	if cur.epochs.len() != n {
		return false
	}
	waiting := false
	for t, ps := range target {
		have := cur.assigned[t]
		for _, p := range ps {
			if containsPartition(have, p) {
				continue
			}
			if o := g.owner(t, p); o == "" || o == mid {
				return false // it would be given now
			}
			waiting = true
		}
	}
	return waiting
}

// ownsAny reports whether the member still owns one of the partitions; an unreported owned set
// counts as owning them.
func ownsAny(owned, parts topicPartitions) bool {
	if owned == nil {
		return true
	}
	for t, ps := range owned {
		rev := parts[t]
		if len(rev) == 0 {
			continue
		}
		for _, p := range ps {
			if containsPartition(rev, p) {
				return true
			}
		}
	}
	return false
}

func (g *ConsumerGroup) nextAssignment(mid string, cur *consumerCurrent, targetEpoch int32, target topicPartitions, owned topicPartitions) *consumerCurrent {
	keep := topicPartitions{}
	revoke := topicPartitions{}
	add := topicPartitions{}
	unreleased := false
	for t, ps := range cur.assigned {
		tgt := target[t]
		for _, p := range ps {
			if containsPartition(tgt, p) {
				keep[t] = append(keep[t], p)
			} else {
				revoke[t] = append(revoke[t], p)
			}
		}
	}
	for _, t := range sortedTopicIDs(target) {
		have := cur.assigned[t]
		for _, p := range target[t] {
			if containsPartition(have, p) {
				continue
			}
			if o := g.owner(t, p); o != "" && o != mid {
				unreleased = true
				continue
			}
			add[t] = append(add[t], p)
		}
	}
	keep, revoke, add = normalizeTP(keep), normalizeTP(revoke), normalizeTP(add)
	if len(revoke) > 0 && ownsAny(owned, revoke) {
		return &consumerCurrent{epoch: cur.epoch, prevEpoch: cur.prevEpoch, state: MemberUnrevokedPartitions,
			assigned: keep, pending: revoke, epochs: cur.epochs.restrict(cur.assigned)}
	}
	next := &consumerCurrent{epoch: targetEpoch, prevEpoch: cur.epoch, state: MemberStable, pending: topicPartitions{}}
	next.epochs = cur.epochs.restrict(keep)
	if cur.epoch > 0 {
		// A kept partition of unknown assignment epoch (a value version 0 record) was assigned
		// at or before the member's epoch: record that bound (conservative for KIP-1251).
		for t, ps := range keep {
			for _, p := range ps {
				if _, ok := next.epochs.get(t, p); !ok {
					next.epochs.set(t, p, cur.epoch)
				}
			}
		}
	}
	for t, ps := range add {
		keep[t] = append(keep[t], ps...)
		for _, p := range ps {
			next.epochs.set(t, p, targetEpoch)
		}
	}
	next.assigned = normalizeTP(keep)
	if unreleased {
		next.state = MemberUnreleasedPartitions
	}
	return next
}

func equalCurrent(a, b *consumerCurrent) bool {
	return a.epoch == b.epoch && a.prevEpoch == b.prevEpoch && a.state == b.state &&
		equalTP(a.assigned, b.assigned) && equalTP(a.pending, b.pending) && a.epochs.equal(b.epochs)
}
