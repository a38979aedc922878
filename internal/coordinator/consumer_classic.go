package coordinator

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Classic-protocol members inside a consumer group (KIP-848 interop; Kafka's
// classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
// classicGroupHeartbeatToConsumerGroup, classicGroupLeaveToConsumerGroup in GroupMetadataManager).
// Such a member keeps its JoinGroup data (session timeout, protocols) in its member metadata; its
// subscription and owned partitions come from the ConsumerProtocol subscription of its first
// protocol; the server assignor computes its target and SyncGroup returns its assigned partitions
// as ConsumerProtocol assignment bytes. Its member epoch is its generation id.

// joinForeign handles a classic JoinGroup whose id names a group of another type: a non-empty
// consumer group takes the classic member itself; an empty consumer group is removed so that a
// classic group can take the id (false). Any other group keeps the id (false, and the caller
// answers INCONSISTENT_GROUP_PROTOCOL).
func joinForeign(st *State, c *JoinCall, g Group, req *kmsg.JoinGroupRequest) (handled bool) {
	cg, ok := g.(*ConsumerGroup)
	if !ok {
		return false
	}
	if cg.IsEmpty() {
		cg.deleteEmpty(st)
		return false
	}
	cg.classicJoin(st, c, req)
	return true
}

// syncForeign, heartbeatForeign and leaveForeign route the other classic RPCs of a member of a
// consumer group to it; false: the group is of another type.
func syncForeign(st *State, c *SyncCall, g Group, req *kmsg.SyncGroupRequest) bool {
	cg, ok := g.(*ConsumerGroup)
	if ok {
		cg.classicSync(st, c, req)
	}
	return ok
}

func heartbeatForeign(st *State, c *HeartbeatCall, g Group, req *kmsg.HeartbeatRequest) bool {
	cg, ok := g.(*ConsumerGroup)
	if ok {
		cg.classicHeartbeat(st, c, req)
	}
	return ok
}

func leaveForeign(st *State, c *LeaveCall, g Group, req *kmsg.LeaveGroupRequest) bool {
	cg, ok := g.(*ConsumerGroup)
	if ok {
		cg.classicLeave(st, c, req)
	}
	return ok
}

func cgJoinTimeoutKey(g, m string) string { return "join-" + g + "-" + m }
func cgSyncTimeoutKey(g, m string) string { return "sync-" + g + "-" + m }

// numClassicMembers counts the members using the classic protocol (O(members); joins only).
func (g *ConsumerGroup) numClassicMembers() int {
	n := 0
	for _, m := range g.members {
		if m.classic != nil {
			n++
		}
	}
	return n
}

// supportsClassicProtocols is Kafka's ConsumerGroup.supportsClassicProtocols for a non-empty
// group: protocol type "consumer" and, when classic members exist, one of the protocols is
// supported by every one of them (the joining member excluded).
func (g *ConsumerGroup) supportsClassicProtocols(req *kmsg.JoinGroupRequest) bool {
	if req.ProtocolType != "consumer" || len(req.Protocols) == 0 {
		return false
	}
	counts := map[string]int{}
	n := 0
	for id, m := range g.members {
		if m.classic == nil || id == req.MemberID {
			continue
		}
		n++
		for _, p := range m.classic.protocols {
			counts[p.Name]++
		}
	}
	if n == 0 {
		return true
	}
	for _, p := range req.Protocols {
		if counts[p.Name] == n {
			return true
		}
	}
	return false
}

// classicSubscription parses the ConsumerProtocol subscription of a classic member's first
// protocol (all protocols carry the same subscription).
func classicSubscription(protocols []classicProtocol) (*kmsg.ConsumerMemberMetadata, error) {
	if len(protocols) == 0 {
		return nil, kerr.InconsistentGroupProtocol
	}
	var s kmsg.ConsumerMemberMetadata
	if err := s.ReadFrom(protocols[0].Metadata); err != nil {
		return nil, kerr.InconsistentGroupProtocol
	}
	return &s, nil
}

// ownedFromSubscription maps a subscription's owned partitions to topic ids (unknown topics are
// dropped); never nil.
func ownedFromSubscription(st *State, s *kmsg.ConsumerMemberMetadata) topicPartitions {
	out := topicPartitions{}
	if st.Image == nil {
		return out
	}
	for _, t := range s.OwnedPartitions {
		if id, _, ok := st.Image.TopicID(t.Topic); ok {
			out[id] = append(out[id], t.Partitions...)
		}
	}
	return normalizeTP(out)
}

// classicAssignment encodes assigned partitions as a ConsumerProtocol assignment, in the
// version of the member's first protocol metadata.
func classicAssignment(st *State, m *consumerMember, assigned topicPartitions) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	if m.classic != nil && len(m.classic.protocols) > 0 {
		if md := m.classic.protocols[0].Metadata; len(md) >= 2 {
			a.Version = int16(md[0])<<8 | int16(md[1])
		}
	}
	if a.Version > 3 {
		a.Version = 3
	}
	if a.Version < 0 {
		a.Version = 0
	}
	var topics []kmsg.ConsumerMemberAssignmentTopic
	for _, id := range sortedTopicIDs(assigned) {
		name, ok := "", false
		if st.Image != nil {
			name, ok = st.Image.TopicName(id)
		}
		if !ok {
			continue
		}
		topics = append(topics, kmsg.ConsumerMemberAssignmentTopic{Topic: name, Partitions: append([]int32{}, assigned[id]...)})
	}
	sort.Slice(topics, func(i, j int) bool { return topics[i].Topic < topics[j].Topic })
	a.Topics = topics
	return a.AppendTo(nil)
}

// classicJoin is a JoinGroup against a non-empty consumer group.
func (g *ConsumerGroup) classicJoin(st *State, c *JoinCall, req *kmsg.JoinGroupRequest) {
	fail := func(err error, mid string) { c.Reply(st, joinError(c, req, err, mid)) }
	memberID := req.MemberID
	unknown := memberID == ""
	if unknown {
		memberID = newConsumerMemberID(st)
	}
	if err := g.checkNotFull(st, memberID, req.InstanceID); err != nil {
		fail(err, req.MemberID)
		return
	}
	if !g.supportsClassicProtocols(req) {
		fail(kerr.InconsistentGroupProtocol, req.MemberID)
		return
	}
	if unknown && req.InstanceID == nil && req.Version >= 4 {
		// KIP-394: a dynamic member gets its id first and joins again with it.
		fail(kerr.MemberIDRequired, memberID)
		return
	}
	protocols := make([]classicProtocol, 0, len(req.Protocols))
	for _, p := range req.Protocols {
		protocols = append(protocols, classicProtocol{Name: p.Name, Metadata: append([]byte{}, p.Metadata...)})
	}
	sub, err := classicSubscription(protocols)
	if err != nil {
		fail(err, req.MemberID)
		return
	}
	old := g.members[memberID]
	downgrade := false
	if req.InstanceID != nil {
		inst := *req.InstanceID
		sid, has := g.static[inst]
		switch {
		case unknown && has:
			// A static member rejoining under a new member id replaces the old one; if that
			// was the last consumer-protocol member, the group becomes a classic group.
			downgrade = g.downgradeOnReplace(st, sid)
			g.replaceStaticMember(st, sid, memberID)
			old = g.members[memberID]
		case !unknown && !has:
			fail(Errf(kerr.UnknownMemberID, "Instance id %s is unknown.", inst), req.MemberID)
			return
		case !unknown && sid != memberID:
			fail(Errf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, inst, sid), req.MemberID)
			return
		}
	}

	nm := &consumerMember{id: memberID}
	if old != nil {
		cp := *old
		nm = &cp
	}
	if req.InstanceID != nil {
		s := *req.InstanceID
		nm.instanceID = &s
	}
	if sub.Rack != nil && *sub.Rack != "" {
		s := *sub.Rack
		nm.rackID = &s
	}
	if req.RebalanceTimeoutMillis > 0 {
		nm.rebalanceTimeout = req.RebalanceTimeoutMillis
	} else {
		nm.rebalanceTimeout = req.SessionTimeoutMillis
	}
	names := append([]string{}, sub.Topics...)
	sort.Strings(names)
	nm.subscribedNames = cgDedupSorted(names)
	nm.subscribedRegex = ""
	if c != nil {
		if c.ClientID != nil {
			nm.clientID = *c.ClientID
		}
		nm.clientHost = c.ClientHost
	}
	nm.classic = &cgClassicMeta{sessionTimeout: req.SessionTimeoutMillis, protocols: protocols}
	if old != nil && old.subscribedRegex != "" && !g.regexInUseExcept(old.subscribedRegex, memberID) {
		st.Write(Record{Key: cgRegexKey(g.id, old.subscribedRegex)})
	}
	_, after, err := g.updateMemberAndReconcile(st, old, nm, ownedKnown(ownedFromSubscription(st, sub)), c.DescribableTopic)
	if err != nil {
		fail(err, req.MemberID)
		return
	}

	st.Timers.Cancel(cgJoinTimeoutKey(g.id, memberID))
	st.Timers.Cancel(rebalanceTimeoutKey(g.id, memberID))
	g.scheduleSession(st, memberID)
	g.scheduleClassicTimeout(st, cgSyncTimeoutKey(g.id, memberID), memberID, "sync timeout", "it did not send SyncGroup within the rebalance timeout")
	generation, protocol := after.epoch, protocols[0].Name
	if downgrade {
		g.convertConsumerToClassic(st, nil, false)
		if cl, ok := st.Groups[g.id].(*ClassicGroup); ok {
			generation, protocol = cl.generation, cl.protocolName
		}
	}

	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = req.Version
	if c != nil {
		resp.Version = c.APIVersion
	}
	resp.MemberID = memberID
	resp.Generation = generation
	pt, pn := "consumer", protocol
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.LeaderID = "" // the server assigns: every classic member is a follower
	resp.Members = []kmsg.JoinGroupResponseMember{}
	c.Reply(st, resp)
}

// regexInUseExcept reports whether a member other than mid subscribes with re.
func (g *ConsumerGroup) regexInUseExcept(re, mid string) bool {
	n := g.regexRefs[re]
	if m := g.members[mid]; m != nil && m.subscribedRegex == re {
		n--
	}
	return n > 0
}

// scheduleClassicTimeout arms a join or sync timeout of a classic member: on expiry the member
// is fenced (with its rebalance timeout, as Kafka's scheduleConsumerGroupJoinTimeout and
// scheduleConsumerGroupSyncTimeout).
func (g *ConsumerGroup) scheduleClassicTimeout(st *State, key, mid, why, reason string) {
	m := g.members[mid]
	if m == nil {
		return
	}
	gid := g.id
	st.Timers.Schedule(key, st.Now.Add(time.Duration(m.rebalanceTimeout)*time.Millisecond), func(st *State) {
		if cg, ok := st.Groups[gid].(*ConsumerGroup); ok {
			if _, ok := cg.members[mid]; ok {
				cg.fenceMember(st, mid, why, reason)
			}
		}
	})
}

// classicMember finds a classic member for SyncGroup/Heartbeat (Kafka's
// validateConsumerGroupMember + throwIfMemberDoesNotUseClassicProtocol).
func (g *ConsumerGroup) classicMember(memberID string, instanceID *string) (*consumerMember, error) {
	var m *consumerMember
	if instanceID == nil {
		m = g.members[memberID]
		if m == nil {
			return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
		}
	} else {
		sid, ok := g.static[*instanceID]
		if !ok {
			return nil, Errf(kerr.UnknownMemberID, "Member with instance id %s is not a member of group %s.", *instanceID, g.id)
		}
		if sid != memberID {
			return nil, Errf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, *instanceID, sid)
		}
		m = g.members[sid]
	}
	if m.classic == nil {
		return nil, Errf(kerr.UnknownMemberID, "Member %s does not use the classic protocol.", m.id)
	}
	return m, nil
}

// classicSync is a SyncGroup from a classic member of a consumer group: the member's assigned
// partitions as ConsumerProtocol assignment bytes.
func (g *ConsumerGroup) classicSync(st *State, c *SyncCall, req *kmsg.SyncGroupRequest) {
	m, err := g.classicMember(req.MemberID, req.InstanceID)
	if err != nil {
		c.Reply(st, syncError(c, err))
		return
	}
	cur := g.current(m.id)
	if req.Generation != cur.epoch {
		c.Reply(st, syncError(c, kerr.IllegalGeneration))
		return
	}
	if (req.ProtocolType != nil && *req.ProtocolType != "consumer") || (req.Protocol != nil && !m.supportsProtocol(*req.Protocol)) {
		c.Reply(st, syncError(c, kerr.InconsistentGroupProtocol))
		return
	}
	if g.epoch > cur.epoch && cur.state != MemberUnrevokedPartitions {
		g.scheduleClassicTimeout(st, cgJoinTimeoutKey(g.id, m.id), m.id, "join timeout", "it did not rejoin within the rebalance timeout")
		c.Reply(st, syncError(c, kerr.RebalanceInProgress))
		return
	}
	st.Timers.Cancel(cgSyncTimeoutKey(g.id, m.id))
	g.scheduleSession(st, m.id)
	resp := kmsg.NewPtrSyncGroupResponse()
	if c != nil {
		resp.Version = c.APIVersion
	}
	pt := "consumer"
	resp.ProtocolType = &pt
	if req.Protocol != nil {
		pn := *req.Protocol
		resp.Protocol = &pn
	} else {
		pn := m.classic.protocols[0].Name
		resp.Protocol = &pn
	}
	resp.MemberAssignment = classicAssignment(st, m, cur.assigned)
	c.Reply(st, resp)
}

func (m *consumerMember) supportsProtocol(name string) bool {
	if m.classic == nil {
		return false
	}
	for _, p := range m.classic.protocols {
		if p.Name == name {
			return true
		}
	}
	return false
}

// classicHeartbeat is a Heartbeat from a classic member of a consumer group: REBALANCE_IN_PROGRESS
// (with a join timeout) when the member must rejoin: the group epoch moved past it, it must
// revoke partitions, or partitions it waits for were released.
func (g *ConsumerGroup) classicHeartbeat(st *State, c *HeartbeatCall, req *kmsg.HeartbeatRequest) {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if c != nil {
		resp.Version = c.APIVersion
	}
	m, err := g.classicMember(req.MemberID, req.InstanceID)
	if err != nil {
		resp.ErrorCode = ErrorCode(err)
		c.Reply(st, resp)
		return
	}
	cur := g.current(m.id)
	if req.Generation != cur.epoch {
		resp.ErrorCode = kerr.IllegalGeneration.Code
		c.Reply(st, resp)
		return
	}
	g.scheduleSession(st, m.id)
	if g.epoch > cur.epoch || cur.state == MemberUnrevokedPartitions ||
		(cur.state == MemberUnreleasedPartitions && !g.waitingOnUnreleased(m.id, cur)) {
		resp.ErrorCode = kerr.RebalanceInProgress.Code
		if !st.Timers.Has(cgJoinTimeoutKey(g.id, m.id)) {
			g.scheduleClassicTimeout(st, cgJoinTimeoutKey(g.id, m.id), m.id, "join timeout", "it did not rejoin within the rebalance timeout")
		}
	}
	c.Reply(st, resp)
}

// waitingOnUnreleased reports whether a partition of the member's target is still owned by
// another member.
func (g *ConsumerGroup) waitingOnUnreleased(mid string, cur *consumerCurrent) bool {
	for t, ps := range g.targets[mid] {
		for _, p := range ps {
			if containsPartition(cur.assigned[t], p) {
				continue
			}
			if o := g.owner(t, p); o != "" && o != mid {
				return true
			}
		}
	}
	return false
}

// classicLeave is a LeaveGroup against a consumer group (Kafka's
// classicGroupLeaveToConsumerGroup): every named member leaves, whatever protocol it uses. A
// member named by member id must exist (UNKNOWN_MEMBER_ID); one named by instance id must be a
// static member (UNKNOWN_MEMBER_ID), and when a member id comes with it, that member's
// (FENCED_INSTANCE_ID). An instance id without a member id is an administrative removal
// (Admin.removeMembersFromConsumerGroup): the static member is removed and its instance id is
// free for a new member. The members found are removed together with one group epoch bump
// (removeMembers); each answers NONE with the identity it was named by.
func (g *ConsumerGroup) classicLeave(st *State, c *LeaveCall, req *kmsg.LeaveGroupRequest) {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if c != nil {
		resp.Version = c.APIVersion
	}
	members := req.Members
	if req.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	var leaving []RebalanceCause
	for _, lm := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID = lm.MemberID, lm.InstanceID
		mid, err := g.leavingMember(lm)
		if err == nil {
			reason := "not provided"
			if lm.Reason != nil {
				reason = *lm.Reason
			}
			st.Log.Info("consumer group member left the group through LeaveGroup", "group", g.id, "member", mid,
				"instance", derefOr(lm.InstanceID, ""), "client_reason", reason)
			// A static member named by its instance id alone is removed by an administrator
			// (Kafka's Admin.removeMembersFromConsumerGroup); otherwise the member left.
			kind := CauseMemberLeft
			if lm.InstanceID != nil && lm.MemberID == "" {
				kind = CauseAdminRemoval
			}
			leaving = append(leaving, RebalanceCause{Kind: kind, Member: mid, Reason: "LeaveGroup: " + reason})
		}
		rm.ErrorCode = ErrorCode(err)
		if req.Version < 3 {
			resp.ErrorCode = rm.ErrorCode
		} else {
			resp.Members = append(resp.Members, rm)
		}
	}
	g.removeMembers(st, leaving...)
	c.Reply(st, resp)
}

// leavingMember finds the member a LeaveGroup identity names.
func (g *ConsumerGroup) leavingMember(lm kmsg.LeaveGroupRequestMember) (string, error) {
	if lm.InstanceID == nil {
		if g.members[lm.MemberID] == nil {
			return "", Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", lm.MemberID, g.id)
		}
		return lm.MemberID, nil
	}
	sid, ok := g.static[*lm.InstanceID]
	if !ok {
		return "", Errf(kerr.UnknownMemberID, "Instance id %s is unknown.", *lm.InstanceID)
	}
	if lm.MemberID != "" && lm.MemberID != sid {
		return "", Errf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", lm.MemberID, *lm.InstanceID, sid)
	}
	return sid, nil
}

func derefOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
