package coordinator

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Online migration between classic and consumer groups (group.consumer.migration.policy:
// disabled | upgrade | downgrade | bidirectional; Kafka's convertToConsumerGroup and
// convertToClassicGroup in GroupMetadataManager).

// validateOnlineUpgrade is Kafka's validateOnlineUpgrade: the policy allows it, the classic group
// uses the "consumer" embedded protocol and fits group.consumer.max.size.
func validateOnlineUpgrade(st *State, cl *ClassicGroup) error {
	switch {
	case !st.Cfg.Consumer.UpgradeEnabled():
		return Errf(kerr.GroupIDNotFound, "Cannot upgrade classic group %s to consumer group because online upgrade is disabled.", cl.id)
	case cl.protocolType != "consumer":
		return Errf(kerr.GroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the group does not use the consumer embedded protocol.", cl.id)
	case len(cl.members) > st.Cfg.Consumer.MaxSize:
		return Errf(kerr.GroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the group size exceeds the consumer group maximum size.", cl.id)
	}
	return nil
}

// convertClassicToConsumer replaces a non-empty classic group by a consumer group holding its
// members as classic-protocol members (Kafka's ConsumerGroup.fromClassicGroup): group epoch,
// assignment epoch and member epochs = the classic generation; each member's subscription from
// its protocol metadata; its target and current assignment = its classic assignment. Pending
// JoinGroup/SyncGroup calls are answered REBALANCE_IN_PROGRESS so the members rejoin the new
// consumer group. A malformed embedded protocol fails the conversion with GROUP_ID_NOT_FOUND and
// leaves the classic group alone.
func convertClassicToConsumer(st *State, cl *ClassicGroup) (*ConsumerGroup, error) {
	type conv struct {
		m      *consumerMember
		assign topicPartitions
	}
	var convs []conv
	for _, id := range cl.memberIDs() {
		cm := cl.members[id]
		md := cm.metadataFor(cl.protocolName)
		if md == nil && len(cm.protocols) > 0 {
			md = cm.protocols[0].Metadata
		}
		var sub kmsg.ConsumerMemberMetadata
		if err := sub.ReadFrom(md); err != nil {
			return nil, Errf(kerr.GroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the embedded consumer protocol is malformed.", cl.id)
		}
		assigned := topicPartitions{}
		if len(cm.assignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if err := a.ReadFrom(cm.assignment); err != nil {
				return nil, Errf(kerr.GroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the embedded consumer protocol is malformed.", cl.id)
			}
			for _, t := range a.Topics {
				if st.Image == nil {
					break
				}
				if tid, _, ok := st.Image.TopicID(t.Topic); ok {
					assigned[tid] = append(assigned[tid], t.Partitions...)
				}
			}
		}
		names := append([]string{}, sub.Topics...)
		sort.Strings(names)
		m := &consumerMember{id: id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
			subscribedNames: cgDedupSorted(names), rebalanceTimeout: int32(cm.rebalanceTimeout / time.Millisecond)}
		if sub.Rack != nil && *sub.Rack != "" {
			r := *sub.Rack
			m.rackID = &r
		}
		protos := make([]classicProtocol, 0, len(cm.protocols))
		for _, p := range cm.protocols {
			protos = append(protos, classicProtocol{Name: p.Name, Metadata: append([]byte{}, p.Metadata...)})
		}
		m.classic = &cgClassicMeta{sessionTimeout: int32(cm.sessionTimeout / time.Millisecond), protocols: protos}
		convs = append(convs, conv{m: m, assign: normalizeTP(assigned)})
	}

	// Release the classic group: answer its pending calls, stop its timers, tombstone it.
	for _, id := range cl.memberIDs() {
		cm := cl.members[id]
		if cm.joinCall != nil {
			cm.joinCall.Reply(st, joinError(cm.joinCall, &kmsg.JoinGroupRequest{Version: cm.joinVersion}, kerr.RebalanceInProgress, id))
			cm.joinCall = nil
		}
		if cm.syncCall != nil {
			cm.syncCall.Reply(st, syncError(cm.syncCall, kerr.RebalanceInProgress))
			cm.syncCall = nil
		}
		st.Timers.Cancel(heartbeatKey(cl.id, id))
	}
	for _, id := range sortedKeys(cl.pending) {
		st.Timers.Cancel(pendingKey(cl.id, id))
	}
	st.Timers.Cancel(joinKey(cl.id))
	st.Timers.Cancel(syncKey(cl.id))
	cl.WriteTombstones(st)
	if st.Groups[cl.id] == Group(cl) {
		delete(st.Groups, cl.id)
	}

	// The consumer group, built through its records.
	g := newConsumerGroup(cl.id)
	st.Groups[cl.id] = g
	gen := cl.generation
	for _, c := range convs {
		g.writeMember(st, c.m)
	}
	// The epoch record after the members, so the KIP-1101 hash covers their subscriptions.
	g.writeMetadata(st, gen, g.computeMetadataHash(st))
	for _, c := range convs {
		g.writeTargetMember(st, c.m.id, c.assign)
	}
	g.writeTargetMeta(st, gen)
	for _, c := range convs {
		g.writeCurrent(st, c.m.id, &consumerCurrent{epoch: gen, prevEpoch: gen, state: MemberStable,
			assigned: c.assign, pending: topicPartitions{}, epochs: assignmentEpochsAt(c.assign, gen)})
	}
	g.refresh = false
	for _, c := range convs {
		g.scheduleSession(st, c.m.id)
	}
	st.Log.Info("classic group upgraded to consumer group", "group", g.id, "members", len(convs), "epoch", gen)
	// The joining consumer-protocol member bumps the epoch next: that event names the migration.
	g.notePending(RebalanceCause{Kind: CauseMigration, Old: string(TypeClassic), New: string(TypeConsumer),
		Reason: "a consumer-protocol member joined the classic group"})
	return g, nil
}

// downgradeOnFence reports whether removing the members gone leaves a group that must become a
// classic group (Kafka's validateOnlineDowngradeWithFencedMembers): every remaining member uses
// the classic protocol, at least one remains, the policy allows downgrades and the remaining
// members fit group.max.size.
func (g *ConsumerGroup) downgradeOnFence(st *State, gone map[string]*consumerMember) bool {
	if len(g.members) <= len(gone) {
		return false
	}
	for id, o := range g.members {
		if _, leaving := gone[id]; !leaving && o.classic == nil {
			return false
		}
	}
	if !st.Cfg.Consumer.DowngradeEnabled() {
		st.Log.Info("cannot downgrade consumer group to classic group: the online downgrade is disabled", "group", g.id)
		return false
	}
	if len(g.members)-len(gone) > st.Cfg.Classic.MaxSize {
		st.Log.Info("cannot downgrade consumer group to classic group: too many members for group.max.size", "group", g.id)
		return false
	}
	return true
}

// convertConsumerToClassic replaces the consumer group by a classic group of its remaining
// (classic-protocol) members once leaving is gone (Kafka's ClassicGroup.fromConsumerGroup):
// generation = group epoch, each member's assignment = its target assignment as ConsumerProtocol
// bytes; with rebalance, a rebalance so the members rejoin the classic group (a member left),
// without it the group stays Stable (a classic static member replaced the last consumer-protocol
// one and carries on with its assignment).
//
// causes are why (the members leaving); the classic rebalance records them with the migration,
// and a conversion without rebalance records the migration as an event of its own (same
// generation).
func (g *ConsumerGroup) convertConsumerToClassic(st *State, leaving map[string]*consumerMember, rebalance bool, causes ...RebalanceCause) {
	cl := newSimpleClassicGroup(g.id)
	cl.protocolType = "consumer"
	cl.generation = g.epoch
	ids := make([]string, 0, len(g.members))
	for _, id := range sortedKeys(g.members) {
		if _, gone := leaving[id]; !gone {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		m := g.members[id]
		cm := &classicMember{id: id, instanceID: m.instanceID, clientID: m.clientID, clientHost: m.clientHost,
			rebalanceTimeout: time.Duration(m.rebalanceTimeout) * time.Millisecond,
			sessionTimeout:   time.Duration(m.classic.sessionTimeout) * time.Millisecond,
			protocolType:     "consumer"}
		for _, p := range m.classic.protocols {
			cm.protocols = append(cm.protocols, classicProtocol{Name: p.Name, Metadata: append([]byte{}, p.Metadata...)})
		}
		cm.assignment = classicAssignment(st, m, g.targets[id])
		cl.members[id] = cm
		if cm.instanceID != nil {
			cl.static[*cm.instanceID] = id
		}
	}
	cl.leader = ids[0]
	cl.protocolName = cl.selectProtocol()
	cl.state = ClassicStable
	cl.stateTime = st.Now

	// Tombstone the consumer group and stop its timers, then install the classic group.
	for _, id := range sortedKeys(g.members) {
		st.Timers.Cancel(sessionTimeoutKey(g.id, id))
		st.Timers.Cancel(rebalanceTimeoutKey(g.id, id))
		st.Timers.Cancel(cgJoinTimeoutKey(g.id, id))
		st.Timers.Cancel(cgSyncTimeoutKey(g.id, id))
	}
	g.WriteTombstones(st)
	if st.Groups[g.id] == Group(g) {
		delete(st.Groups, g.id)
	}
	st.Groups[cl.id] = cl
	cl.writeMetadata(st)
	for _, id := range ids {
		cl.scheduleSession(st, cl.members[id])
	}
	st.Log.Info("consumer group downgraded to classic group", "group", cl.id, "members", len(ids), "generation", cl.generation)
	migration := RebalanceCause{Kind: CauseMigration, Old: string(TypeConsumer), New: string(TypeClassic),
		Reason: "only classic-protocol members are left"}
	if rebalance {
		cl.prepareRebalance(st, migration)
		for _, c := range causes {
			cl.noteCause(c)
		}
	} else {
		st.recordRebalance(cl.id, TypeClassic, cl.generation, cl.generation, append([]RebalanceCause{migration}, causes...))
	}
}

// downgradeOnReplace reports whether a classic static member replacing the static member
// replaced (a consumer-protocol member) leaves only classic members, so the group must become a
// classic group (Kafka's validateOnlineDowngradeWithReplacedMemberId).
func (g *ConsumerGroup) downgradeOnReplace(st *State, replaced string) bool {
	m := g.members[replaced]
	if m == nil || m.classic != nil {
		return false
	}
	for id, o := range g.members {
		if id != replaced && o.classic == nil {
			return false
		}
	}
	return st.Cfg.Consumer.DowngradeEnabled() && len(g.members) <= st.Cfg.Classic.MaxSize
}
