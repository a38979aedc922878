package coordinator

import "sort"

const expiryTimerKey = "GROUP_EXPIRATION"

// ExpiryVeto lets a group type keep an Empty group whose offsets are all gone (KIP-1331: a
// streams group with a stored topology description is kept until the plugin deleted it).
type ExpiryVeto interface {
	KeepOnExpiry(st *State) bool
}

func scheduleExpiry(st *State) {
	if st.Cfg.Offsets.RetentionCheck <= 0 {
		return
	}
	st.Timers.Schedule(expiryTimerKey, st.Now.Add(st.Cfg.Offsets.RetentionCheck), func(st *State) {
		ExpireOffsets(st)
		scheduleExpiry(st)
	})
}

// ExpireOffsets runs one retention sweep (Kafka's GroupCoordinatorShard.cleanupGroupMetadata): for
// every group, offsets of topics it is not subscribed to expire when now ≥ expire timestamp (v2–v4
// commits) or now − base ≥ offsets.retention; a group left with no offsets that is Empty is
// deleted. It returns the number of offsets expired.
func ExpireOffsets(st *State) int {
	expired := 0
	var due []topicPartition
	for _, id := range sortedKeys(st.Groups) {
		g := st.Groups[id]
		// Read every offset (in topic and partition order: the records are deterministic), then
		// write the tombstones of the expired ones.
		due = due[:0]
		subscribed, last := false, ""
		st.Offsets.Each(id, func(topic string, v *OffsetValue) bool {
			if topic != last {
				subscribed, last = g.IsSubscribedToTopic(topic), topic
			}
			if !subscribed && !st.TxnOffsets.HasPartition(id, topic, v.Partition) && offsetExpired(st, g, v) {
				// (never expired while a transaction holds pending offsets for it)
				due = append(due, topicPartition{topic, v.Partition})
			}
			return true
		})
		for _, tp := range due {
			st.WriteOffsetTombstone(id, tp.topic, tp.partition)
			expired++
			st.Metrics.OffsetExpirations++
		}
		if !st.hasAnyOffsets(id) && g.IsEmpty() {
			if veto, ok := g.(ExpiryVeto); ok && veto.KeepOnExpiry(st) {
				continue
			}
			st.Log.Info("deleting empty group whose offsets all expired", "group", id)
			g.WriteTombstones(st)
			delete(st.Groups, id)
			st.deleteHistory(id)
		}
	}
	return expired
}

// offsetExpired is Kafka's OffsetExpirationConditionImpl.isOffsetExpired, reached only when the
// group has an expiration condition at all: a group whose offsets must not expire now (e.g. a
// Stable classic group of another protocol type) keeps even offsets with an explicit expire
// timestamp.
func offsetExpired(st *State, g Group, v *OffsetValue) bool {
	base, ok := g.OffsetExpiryBase(v.CommitTime())
	if !ok {
		return false
	}
	if v.ExpireMs != 0 {
		return !st.Now.Before(v.ExpireTime())
	}
	return st.Now.Sub(base) >= st.Cfg.Offsets.Retention
}

// DeleteTopicOffsets tombstones every committed and pending transactional offset of the named
// topics (topic deletion).
func DeleteTopicOffsets(topics []string) func(st *State, c *Call[Ack]) {
	return func(st *State, c *Call[Ack]) {
		set := map[string]bool{}
		for _, t := range topics {
			set[t] = true
		}
		for _, id := range st.Offsets.GroupIDs() {
			for _, t := range st.Offsets.Topics(id) {
				if !set[t] {
					continue
				}
				for _, p := range st.Offsets.Partitions(id, t) {
					st.WriteOffsetTombstone(id, t, p)
					st.deletePending(id, t, p)
				}
			}
		}
		for _, pid := range st.TxnOffsets.ProducerIDs() {
			keys := make([]txnOffsetKey, 0)
			for k := range st.TxnOffsets.byProducer[pid] {
				if set[k.topic] {
					keys = append(keys, k)
				}
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].group != keys[j].group {
					return keys[i].group < keys[j].group
				}
				if keys[i].topic != keys[j].topic {
					return keys[i].topic < keys[j].topic
				}
				return keys[i].partition < keys[j].partition
			})
			for _, k := range keys {
				st.writePendingTombstone(k, pid)
			}
		}
		c.Reply(st, Ack{})
	}
}
