package assign

// uniformHomogeneous assigns when every member subscribes to the same topics
// (Kafka: UniformHomogeneousAssignmentBuilder). Each member's quota is
// floor(total/members); total%members members get one more. Members keep
// their current partitions up to quota+1; the extra slots go first to members
// already holding quota+1 partitions (in member order), the others give one
// back. Unassigned partitions are then handed to members with room.
func (b *builder) uniformHomogeneous() error {
	nm := int32(len(b.members))
	minQ := int32(b.total) / nm
	extra := int32(b.total) % nm
	maxKeep := minQ
	if extra > 0 {
		maxKeep++
	}

	cnt := make([]int32, nm)
	lastGP := make([]int32, nm) // the last partition each member kept
	var buf []curTopic
	own := b.owner
	racks := b.racks.aware && !b.racks.keepMismatched
	for m := range b.members {
		if len(b.members[m].Current) == 0 || maxKeep == 0 {
			continue
		}
		buf = b.currentTopics(m, buf)
		c, last := int32(0), int32(0)
	topics:
		for _, ct := range buf {
			t := ct.t
			ti := b.topics[t]
			for _, p := range ct.ps {
				if c == maxKeep {
					break topics
				}
				// claimable, inlined for this hot loop.
				if p < 0 || p >= ti.n || own[ti.off+p] >= 0 {
					continue
				}
				gp := ti.off + p
				if racks && !b.claimable(m, t, p) {
					continue
				}
				own[gp] = int32(m)
				c++
				last = gp
			}
		}
		cnt[m], lastGP[m] = c, last
	}

	// Quotas: extra slots to members already at minQ+1, then in member order.
	rem := make([]int32, nm)
	slots := extra
	for m := range cnt {
		rem[m] = -1
		if extra > 0 && cnt[m] == maxKeep {
			if slots > 0 {
				slots--
				rem[m] = 0
			} else {
				b.owner[lastGP[m]] = -1
				cnt[m]--
			}
		}
	}
	for m := range cnt {
		if rem[m] >= 0 {
			continue
		}
		q := minQ
		if slots > 0 {
			slots--
			q++
		}
		rem[m] = q - cnt[m]
	}

	if !b.racks.aware {
		// No rack preferences and hence no give-back hints: fill is a walk
		// over the unassigned partitions in order, handing each to the first
		// member with room. Done in place, without collecting them.
		gp, own := 0, b.owner
		for m, r := range rem {
			for ; r > 0 && gp < len(own); gp++ {
				if own[gp] < 0 {
					own[gp] = int32(m)
					r--
				}
			}
		}
		for ; gp < len(own); gp++ {
			if own[gp] < 0 {
				return errUnassigned
			}
		}
		return nil
	}
	unassigned := make([]int32, 0, b.total-int(sum(cnt)))
	for gp, o := range b.owner {
		if o < 0 {
			unassigned = append(unassigned, int32(gp))
		}
	}
	cands := make([]int32, nm)
	for m := range cands {
		cands[m] = int32(m)
	}
	return b.fill(unassigned, cands, rem, true)
}

func sum(xs []int32) int64 {
	var s int64
	for _, x := range xs {
		s += int64(x)
	}
	return s
}
