package coordinator

import (
	"encoding/base64"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func cgHeartbeatError(req *kmsg.ConsumerGroupHeartbeatRequest, err error) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.ErrorCode = ErrorCode(err)
	resp.ErrorMessage = ErrorMessage(err)
	return resp
}

// ConsumerGroupHeartbeat handles ConsumerGroupHeartbeat v0–v1 (KIP-848; Kafka's
// GroupMetadataManager.consumerGroupHeartbeat) on the group's shard: join (member epoch 0),
// heartbeat, leave (-1) and static temporary leave (-2). Errors are answered in the response with
// Kafka's codes and messages.
func ConsumerGroupHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) func(st *State, c *Call[*kmsg.ConsumerGroupHeartbeatResponse]) {
	return func(st *State, c *Call[*kmsg.ConsumerGroupHeartbeatResponse]) {
		resp, err := consumerGroupHeartbeat(st, &c.Meta, req)
		if err != nil {
			c.Reply(st, cgHeartbeatError(req, err))
			return
		}
		c.Reply(st, resp)
	}
}

// validateCGHeartbeat is Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid.
func validateCGHeartbeat(st *State, req *kmsg.ConsumerGroupHeartbeatRequest) error {
	invalid := func(msg string) error { return Errf(kerr.InvalidRequest, "%s", msg) }
	if req.Version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == leaveGroupMemberEpoch {
		if blankString(req.MemberID) {
			return invalid("MemberId can't be empty.")
		}
	}
	if blankString(req.Group) {
		return invalid("GroupId can't be empty.")
	}
	if req.InstanceID != nil && blankString(*req.InstanceID) {
		return invalid("InstanceId can't be empty.")
	}
	if req.RackID != nil && blankString(*req.RackID) {
		return invalid("RackId can't be empty.")
	}
	switch {
	case req.MemberEpoch == 0:
		if req.RebalanceTimeoutMillis == -1 {
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if req.Topics == nil || len(req.Topics) != 0 {
			return invalid("TopicPartitions must be empty when (re-)joining.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case req.MemberEpoch == leaveGroupStaticMemberEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < leaveGroupStaticMemberEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	if req.ServerAssignor != nil && !consumerAssignorSupported(st, *req.ServerAssignor) {
		return Errf(kerr.UnsupportedAssignor, "ServerAssignor %s is not supported. Supported assignors: %s.",
			*req.ServerAssignor, strings.Join(consumerAssignors(st), ", "))
	}
	return nil
}

// blankString is Kafka's Utils.throwIfEmptyString test: a string is empty when nothing is left
// after Java's String.trim(), which drops every leading and trailing char up to U+0020 (spaces and
// control characters).
func blankString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}

func consumerGroupHeartbeat(st *State, c *Meta, req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, error) {
	if !st.Cfg.Consumer.Enabled {
		return nil, kerr.UnsupportedVersion
	}
	if err := validateCGHeartbeat(st, req); err != nil {
		return nil, err
	}
	if req.MemberEpoch == leaveGroupMemberEpoch || req.MemberEpoch == leaveGroupStaticMemberEpoch {
		return consumerGroupLeave(st, req)
	}
	if req.SubscribedTopicRegex != nil {
		if err := validateSubscriptionRegex(*req.SubscribedTopicRegex); err != nil {
			return nil, err
		}
	}
	g, created, err := cgGetOrCreate(st, req.Group, req.MemberEpoch == 0, req.InstanceID)
	if err != nil {
		return nil, err
	}
	resp, err := g.heartbeat(st, c, req)
	if err != nil && created {
		cgMaybeDrop(st, g)
	}
	return resp, err
}

// cgGetOrCreate finds the consumer group of a heartbeat. A join creates it; an empty classic
// group with the id is deleted (tombstoned) and replaced; a non-empty classic group is
// converted (online upgrade) when the joining member (instanceID: its instance id) fits; a
// group of another type answers GROUP_ID_NOT_FOUND.
func cgGetOrCreate(st *State, id string, create bool, instanceID *string) (*ConsumerGroup, bool, error) {
	switch g := st.Groups[id].(type) {
	case *ConsumerGroup:
		return g, false, nil
	case nil:
		if !create {
			return nil, false, Errf(kerr.GroupIDNotFound, "Consumer group %s not found.", id)
		}
	case *ClassicGroup:
		if !create {
			return nil, false, Errf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", id)
		}
		if !g.IsEmpty() {
			// Online upgrade: the classic members become classic-protocol members of a
			// consumer group, which the joining member then joins.
			if err := validateOnlineUpgrade(st, g); err != nil {
				return nil, false, err
			}
			// The joining member would not fit: fail before converting (Kafka discards the
			// conversion records with the failed heartbeat). A static member replacing one
			// of the classic group's fits.
			if len(g.members) >= st.Cfg.Consumer.MaxSize && (instanceID == nil || g.static[*instanceID] == "") {
				return nil, false, Errf(kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of %d members.", st.Cfg.Consumer.MaxSize)
			}
			cg, err := convertClassicToConsumer(st, g)
			if err != nil {
				return nil, false, err
			}
			return cg, false, nil
		}
		g.WriteTombstones(st)
		delete(st.Groups, id)
	default:
		return nil, false, Errf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", id)
	}
	g := newConsumerGroup(id)
	st.Groups[id] = g
	return g, true, nil
}

// checkNotFull is Kafka's throwIfConsumerGroupIsFull (with KAFKA-20601): a group at
// group.consumer.max.size takes no new member, but a known member, or a static member rejoining
// under its instance id (which replaces the old member rather than adding one, or is refused
// with UNRELEASED_INSTANCE_ID), goes on to its own checks.
func (g *ConsumerGroup) checkNotFull(st *State, memberID string, instanceID *string) error {
	max := st.Cfg.Consumer.MaxSize
	if len(g.members) < max {
		return nil
	}
	if _, ok := g.members[memberID]; ok && memberID != "" {
		return nil
	}
	if instanceID != nil {
		if _, ok := g.static[*instanceID]; ok {
			return nil
		}
	}
	return Errf(kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of %d members.", max)
}

// newConsumerMemberID is a random UUID in URL-safe base64, as Kafka's Uuid.randomUuid().toString().
func newConsumerMemberID(st *State) string {
	b := st.IDs.NewUUID()
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ownedReport is what a member reports owning, parsed from the request only when a step needs
// it: a steady heartbeat of a member at its target never does.
type ownedReport struct {
	topics []kmsg.ConsumerGroupHeartbeatRequestTopic
	parsed bool
	tp     topicPartitions
}

// ownedKnown is a report already parsed.
func ownedKnown(tp topicPartitions) *ownedReport { return &ownedReport{parsed: true, tp: tp} }

// get returns the owned partitions (nil: not reported).
func (o *ownedReport) get() topicPartitions {
	if !o.parsed {
		o.tp, o.parsed = cgOwnedFromRequest(o.topics), true
	}
	return o.tp
}

func cgOwnedFromRequest(ts []kmsg.ConsumerGroupHeartbeatRequestTopic) topicPartitions {
	if ts == nil {
		return nil
	}
	out := topicPartitions{}
	for _, t := range ts {
		out[t.TopicID] = append(out[t.TopicID], t.Partitions...)
	}
	return normalizeTP(out)
}

// validateMemberEpoch is Kafka's throwIfConsumerGroupMemberEpochIsInvalid (with KAFKA-19233: a
// member may always rejoin with epoch 0).
func validateMemberEpoch(cur *consumerCurrent, received int32, owned *ownedReport) error {
	if received == 0 {
		return nil
	}
	if received > cur.epoch {
		return Errf(kerr.FencedMemberEpoch, "The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, cur.epoch)
	}
	if received < cur.epoch && (received != cur.prevEpoch || !isSubsetTP(owned.get(), cur.assigned)) {
		return Errf(kerr.FencedMemberEpoch, "The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, cur.epoch)
	}
	return nil
}

func isSubsetTP(owned, assigned topicPartitions) bool {
	if owned == nil {
		return false
	}
	for t, ps := range owned {
		for _, p := range ps {
			if !containsPartition(assigned[t], p) {
				return false
			}
		}
	}
	return true
}

func (g *ConsumerGroup) heartbeat(st *State, c *Meta, req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, error) {
	memberID := req.MemberID
	if err := g.checkNotFull(st, memberID, req.InstanceID); err != nil {
		return nil, err
	}
	if memberID == "" {
		memberID = newConsumerMemberID(st)
	}
	owned := &ownedReport{topics: req.Topics}
	old := g.members[memberID]
	if req.InstanceID == nil {
		if old == nil && req.MemberEpoch != 0 {
			return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
		}
		if old != nil {
			if err := validateMemberEpoch(g.current(memberID), req.MemberEpoch, owned); err != nil {
				return nil, err
			}
		}
	} else {
		inst := *req.InstanceID
		sid, has := g.static[inst]
		if req.MemberEpoch == 0 {
			if has && sid != memberID {
				// Replacing a consumer-protocol static member needs its temporary leave (epoch
				// -2); a classic-protocol one is replaced at once.
				if e := g.current(sid).epoch; e != leaveGroupStaticMemberEpoch && (g.members[sid] == nil || g.members[sid].classic == nil) {
					return nil, Errf(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, inst, sid)
				}
				g.replaceStaticMember(st, sid, memberID)
				old = g.members[memberID]
			}
		} else {
			if !has {
				return nil, Errf(kerr.UnknownMemberID, "Instance id %s is unknown.", inst)
			}
			if sid != memberID {
				return nil, Errf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, inst, sid)
			}
			if err := validateMemberEpoch(g.current(memberID), req.MemberEpoch, owned); err != nil {
				return nil, err
			}
		}
	}

	// 1. Update the member; bump the group epoch on a subscription change. A heartbeat that
	// changes nothing (the steady case) keeps the member as it is, without a copy.
	nm := old
	if !cgMemberUnchanged(old, req, c) {
		nm = cgUpdatedMember(old, memberID, req, c)
	}
	before, after, err := g.updateMemberAndReconcile(st, old, nm, owned, c.describable())
	if err != nil {
		return nil, err
	}
	g.scheduleSession(st, memberID)

	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	mid := memberID
	resp.MemberID = &mid
	resp.MemberEpoch = after.epoch
	resp.HeartbeatIntervalMillis = int32(st.consumerConfig(g.id).HeartbeatInterval / time.Millisecond)
	full := req.MemberEpoch == 0 || (req.RebalanceTimeoutMillis != -1 &&
		(req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil)
	if full || (before != after && !equalTP(before.assigned, after.assigned)) {
		resp.Assignment = cgResponseAssignment(after.assigned)
	}
	return resp, nil
}

// cgMemberUnchanged reports whether applying the heartbeat to old would leave every member
// metadata field as it is (so cgUpdatedMember would encode to the same record): a member is
// known, uses the consumer protocol, and the request and connection repeat its values or omit
// them. Conservative: a subscription list that is not already sorted and distinct counts as a
// change (the slow path then compares encodings).
func cgMemberUnchanged(old *consumerMember, req *kmsg.ConsumerGroupHeartbeatRequest, c *Meta) bool {
	if old == nil || old.classic != nil {
		return false
	}
	if req.InstanceID != nil && (old.instanceID == nil || *old.instanceID != *req.InstanceID) {
		return false
	}
	if req.RackID != nil && (old.rackID == nil || *old.rackID != *req.RackID) {
		return false
	}
	if req.RebalanceTimeoutMillis != -1 && req.RebalanceTimeoutMillis != old.rebalanceTimeout {
		return false
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != old.serverAssignor {
		return false
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != old.subscribedRegex {
		return false
	}
	if names := req.SubscribedTopicNames; names != nil {
		if old.subscribedNames == nil || len(names) != len(old.subscribedNames) {
			return false
		}
		for i, n := range names {
			if n != old.subscribedNames[i] {
				return false
			}
		}
	}
	if c != nil && (c.ClientHost != old.clientHost || (c.ClientID != nil && *c.ClientID != old.clientID)) {
		return false
	}
	return true
}

// cgUpdatedMember is old (nil: a new member memberID) with the heartbeat's fields applied.
func cgUpdatedMember(old *consumerMember, memberID string, req *kmsg.ConsumerGroupHeartbeatRequest, c *Meta) *consumerMember {
	nm := &consumerMember{id: memberID}
	if old != nil {
		cp := *old
		nm = &cp
	}
	nm.classic = nil // a ConsumerGroupHeartbeat member uses the consumer protocol
	if req.InstanceID != nil {
		s := *req.InstanceID
		nm.instanceID = &s
	}
	if req.RackID != nil {
		s := *req.RackID
		nm.rackID = &s
	}
	if req.RebalanceTimeoutMillis != -1 {
		nm.rebalanceTimeout = req.RebalanceTimeoutMillis
	}
	if req.ServerAssignor != nil {
		nm.serverAssignor = *req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		names := append([]string{}, req.SubscribedTopicNames...)
		sort.Strings(names)
		nm.subscribedNames = cgDedupSorted(names)
	}
	if req.SubscribedTopicRegex != nil {
		nm.subscribedRegex = *req.SubscribedTopicRegex
	}
	if c != nil {
		if c.ClientID != nil {
			nm.clientID = *c.ClientID
		}
		nm.clientHost = c.ClientHost
	}
	return nm
}

// updateMemberAndReconcile is steps 1–3 of a consumer group heartbeat, shared by the
// consumer-protocol heartbeat and the classic-protocol JoinGroup of a member of a consumer group:
// write the member if it changed and bump the group epoch on a subscription, preferred-assignor
// or metadata-hash change; compute a new target assignment when the group epoch is ahead (at
// most once per group.consumer.assignment.interval.ms); reconcile the member towards its
// target. old is nil for a new member; nm == old when nothing changed; owned is what the member
// reports owning (nil: not reported). It returns the member's current assignment before and
// after (the same pointer when unchanged). describable filters the topics a regex refresh
// resolves (Meta.DescribableTopic of the triggering request).
func (g *ConsumerGroup) updateMemberAndReconcile(st *State, old, nm *consumerMember, owned *ownedReport, describable func(string) bool) (before, after *consumerCurrent, err error) {
	// The preferred assignor and the regexes are group-wide (O(members)): recompute them only
	// when this member's choice changed or a refresh is due.
	assignorChanged := (old == nil && nm.serverAssignor != "") || (old != nil && old.serverAssignor != nm.serverAssignor)
	prevAssignor := ""
	if assignorChanged {
		prevAssignor = g.preferredAssignor(st)
	}
	regexDue := g.refresh || (old == nil && nm.subscribedRegex != "") || (old != nil && old.subscribedRegex != nm.subscribedRegex)
	if r := g.regexes[nm.subscribedRegex]; nm.subscribedRegex != "" && (r == nil || st.Now.Sub(time.UnixMilli(r.timestamp)) >= regexRefreshInterval(st)) {
		regexDue = true
	}
	bump := g.epoch == 0
	// causes say why the epoch is bumped (rebalance history), in order of importance.
	var causes []RebalanceCause
	if old == nil {
		causes = append(causes, RebalanceCause{Kind: CauseMemberJoined, Member: nm.id, New: subscriptionString(nm)})
	}
	if old == nil || (old != nm && string(cgMemberValue(old)) != string(cgMemberValue(nm))) {
		var oldNames []string
		oldRegex := ""
		if old != nil {
			oldNames, oldRegex = old.subscribedNames, old.subscribedRegex
		}
		if !equalStrings(oldNames, nm.subscribedNames) || oldRegex != nm.subscribedRegex {
			bump = true
			switch {
			case old == nil:
			case !equalStrings(oldNames, nm.subscribedNames):
				causes = append(causes, RebalanceCause{Kind: CauseSubscriptionChanged, Member: nm.id,
					Old: strings.Join(oldNames, ","), New: strings.Join(nm.subscribedNames, ",")})
			default:
				causes = append(causes, RebalanceCause{Kind: CauseRegexChanged, Member: nm.id, Old: oldRegex, New: nm.subscribedRegex})
			}
		}
		g.writeMember(st, nm)
	}
	if assignorChanged {
		if now := g.preferredAssignor(st); now != prevAssignor {
			bump = true
			causes = append(causes, RebalanceCause{Kind: CauseAssignorChanged, Member: nm.id, Old: prevAssignor, New: now})
		}
	}
	var subsBefore map[string]bool
	if regexDue && len(causes) == 0 {
		subsBefore = g.subscribedTopics()
	}
	if regexDue && g.refreshRegexes(st, g.refresh, describable) {
		bump = true
		// A member's own new regex explains the resolution; otherwise name what it matches now.
		if subsBefore != nil {
			causes = append(causes, regexCause(subsBefore, g.subscribedTopics()))
		}
	}
	if bump || g.refresh {
		var topicChanges []RebalanceCause
		if g.refresh {
			topicChanges = g.topicChanges(st)
		}
		hash := g.metadataHashNow(st)
		g.refresh = false
		if hash != g.metadataHash || !g.hasMetadata {
			if g.hasMetadata && hash != g.metadataHash {
				// A subscription change alone changes the hash too: topic changes are named
				// when seen, a generic cause only when nothing else explains the bump.
				if len(topicChanges) == 0 && !bump {
					topicChanges = []RebalanceCause{{Kind: CauseMetadataChanged, Reason: "the subscribed topics' metadata changed"}}
				}
				causes = append(causes, topicChanges...)
			}
			bump = true
		}
		if bump {
			old := g.epoch
			g.writeMetadata(st, g.epoch+1, hash)
			st.Metrics.ConsumerRebalances++
			causes = append(g.takePendingCauses(), causes...)
			st.recordRebalance(g.id, TypeConsumer, old, g.epoch, causes)
		}
	}

	// 2. Compute a new target assignment when the group epoch is ahead of it, at most once per
	// group.consumer.assignment.interval.ms.
	if g.epoch > g.assignmentEpoch && g.assignmentDue(st) {
		if err := g.computeTargetAssignment(st, g.epoch); err != nil {
			return nil, nil, err
		}
	}

	// 3. Reconcile the member towards its target.
	before = g.current(nm.id)
	_, hadCurrent := g.currents[nm.id]
	after = before
	if !hadCurrent || before.state != MemberStable || before.epoch != g.assignmentEpoch {
		after = g.reconcile(nm.id, before, g.assignmentEpoch, g.targets[nm.id], owned.get())
		if !hadCurrent || !equalCurrent(before, after) {
			g.writeCurrent(st, nm.id, after)
			// Classic-protocol members are governed by their join and sync timeouts instead.
			if after.state == MemberUnrevokedPartitions && nm.classic == nil {
				g.scheduleRebalance(st, nm.id, after.epoch)
			} else {
				st.Timers.Cancel(rebalanceTimeoutKey(g.id, nm.id))
			}
		}
	}
	return before, after, nil
}

func cgResponseAssignment(a topicPartitions) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	out := &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}}
	for _, t := range sortedTopicIDs(a) {
		rt := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
		rt.TopicID = t
		rt.Partitions = append([]int32{}, a[t]...)
		out.Topics = append(out.Topics, rt)
	}
	return out
}

// replaceStaticMember gives a released static member's assignment to the member joining with
// its instance id (Kafka's replaceMember): tombstones for the old member id, then the member
// metadata, target and current assignment (epochs 0) under the new id.
func (g *ConsumerGroup) replaceStaticMember(st *State, oldID, newID string) {
	oldM := *g.members[oldID]
	target := cloneTP(g.targets[oldID])
	cur := g.current(oldID)
	next := &consumerCurrent{epoch: 0, prevEpoch: 0, state: cur.state, assigned: cloneTP(cur.assigned), pending: cloneTP(cur.pending),
		epochs: cur.epochs.restrict(cur.assigned).merge(cur.epochs.restrict(cur.pending))}
	g.writeMemberTombstones(st, oldID)
	st.Timers.Cancel(sessionTimeoutKey(g.id, oldID))
	st.Timers.Cancel(rebalanceTimeoutKey(g.id, oldID))
	oldM.id = newID
	g.writeMember(st, &oldM)
	g.writeTargetMember(st, newID, target)
	g.writeCurrent(st, newID, next)
}

// consumerGroupLeave handles member epochs -1 (leave: the member is fenced) and -2 (a static
// member's temporary leave: it keeps its assignment at epoch -2, no epoch bump). The group is
// looked up as Kafka's GroupMetadataManager.consumerGroup does ("Group %s not found.", unlike a
// heartbeat's "Consumer group %s not found.").
func consumerGroupLeave(st *State, req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, error) {
	var g *ConsumerGroup
	switch x := st.Groups[req.Group].(type) {
	case *ConsumerGroup:
		g = x
	case nil:
		return nil, Errf(kerr.GroupIDNotFound, "Group %s not found.", req.Group)
	default:
		return nil, Errf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
	}
	memberID := req.MemberID
	if req.InstanceID == nil {
		if _, ok := g.members[memberID]; !ok {
			return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
		}
		st.Log.Info("consumer group member left the group", "group", g.id, "member", memberID)
		g.removeMembers(st, RebalanceCause{Kind: CauseMemberLeft, Member: memberID, Reason: "left the group (heartbeat with epoch -1)"})
	} else {
		inst := *req.InstanceID
		sid, has := g.static[inst]
		if !has {
			return nil, Errf(kerr.UnknownMemberID, "Instance id %s is unknown.", inst)
		}
		if sid != memberID {
			return nil, Errf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, inst, sid)
		}
		if req.MemberEpoch == leaveGroupStaticMemberEpoch {
			cur := g.current(memberID)
			// Kafka's consumerGroupStaticMemberGroupLeave: the member keeps its assigned
			// partitions at epoch -2; partitions pending revocation are dropped.
			next := &consumerCurrent{epoch: leaveGroupStaticMemberEpoch, prevEpoch: cur.prevEpoch, state: cur.state,
				assigned: cloneTP(cur.assigned), pending: topicPartitions{}, epochs: cur.epochs.restrict(cur.assigned)}
			g.writeCurrent(st, memberID, next)
			st.Timers.Cancel(rebalanceTimeoutKey(g.id, memberID))
			g.scheduleSession(st, memberID)
		} else {
			st.Log.Info("consumer group static member left the group", "group", g.id, "member", memberID, "instance", inst)
			g.removeMembers(st, RebalanceCause{Kind: CauseMemberLeft, Member: memberID, Reason: "static member " + inst + " left the group"})
		}
	}
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	mid := memberID
	resp.MemberID = &mid
	resp.MemberEpoch = req.MemberEpoch
	return resp, nil
}

// fenceMember removes one member because it was fenced (its session or a timeout expired): it
// is logged as fenced with reason, then removed as removeMembers does.
func (g *ConsumerGroup) fenceMember(st *State, mid, why, reason string) {
	if g.members[mid] == nil {
		return
	}
	st.Log.Info("consumer group member fenced", "group", g.id, "member", mid, "reason", reason)
	g.removeMembers(st, RebalanceCause{Kind: CauseMemberFenced, Member: mid, Reason: why})
}

// removeMembers removes members that left or were fenced (Kafka's consumerGroupFenceMembers):
// when only classic-protocol members remain and a downgrade is allowed, the group becomes a
// classic group; otherwise each member's tombstones are written (current assignment, target
// assignment, member metadata), regexes no remaining member uses are deleted, and the group
// epoch is bumped once with the recomputed metadata hash. Unknown ids are skipped; none left:
// nothing is written.
func (g *ConsumerGroup) removeMembers(st *State, why ...RebalanceCause) {
	gone := make(map[string]*consumerMember, len(why))
	var causes []RebalanceCause
	for _, c := range why {
		if m := g.members[c.Member]; m != nil {
			if _, dup := gone[c.Member]; !dup {
				causes = append(causes, c)
			}
			gone[c.Member] = m
		}
	}
	if len(gone) == 0 {
		return
	}
	if g.downgradeOnFence(st, gone) {
		g.convertConsumerToClassic(st, gone, true, causes...)
		return
	}
	for _, mid := range sortedKeys(gone) {
		g.writeMemberTombstones(st, mid)
		st.Timers.Cancel(sessionTimeoutKey(g.id, mid))
		st.Timers.Cancel(rebalanceTimeoutKey(g.id, mid))
		st.Timers.Cancel(cgJoinTimeoutKey(g.id, mid))
		st.Timers.Cancel(cgSyncTimeoutKey(g.id, mid))
	}
	regexes := map[string]bool{}
	for _, m := range gone {
		if m.subscribedRegex != "" {
			regexes[m.subscribedRegex] = true
		}
	}
	for _, re := range sortedKeys(regexes) {
		if _, ok := g.regexes[re]; ok && !g.regexInUse(re) {
			st.Write(Record{Key: cgRegexKey(g.id, re)})
		}
	}
	old := g.epoch
	g.writeMetadata(st, g.epoch+1, g.metadataHashNow(st))
	st.Metrics.ConsumerRebalances++
	st.recordRebalance(g.id, TypeConsumer, old, g.epoch, append(g.takePendingCauses(), causes...))
}

// deleteEmpty tombstones an empty group (replaced by another group type).
func (g *ConsumerGroup) deleteEmpty(st *State) {
	g.WriteTombstones(st)
	if st.Groups[g.id] == Group(g) {
		delete(st.Groups, g.id)
	}
}

func sessionTimeoutKey(g, m string) string   { return "session-timeout-" + g + "-" + m }
func rebalanceTimeoutKey(g, m string) string { return "rebalance-timeout-" + g + "-" + m }

// cgSessionTag marks a consumer group session timer: its fn fences the member named by the key.
const cgSessionTag = timerTag("consumer-session")

// sessionKey is sessionTimeoutKey(g.id, mid), cached on the member (built once, not per
// heartbeat).
func (g *ConsumerGroup) sessionKey(m *consumerMember, mid string) string {
	if m == nil {
		return sessionTimeoutKey(g.id, mid)
	}
	if m.sessionKeyFor != mid || m.sessionKey == "" {
		m.sessionKey, m.sessionKeyFor = sessionTimeoutKey(g.id, mid), mid
	}
	return m.sessionKey
}

// scheduleSession (re)arms the member's session timeout (group.consumer.session.timeout.ms, or
// the group's consumer.session.timeout.ms); expiry fences the member.
// A classic-protocol member uses the session timeout of its JoinGroup. Re-arming an armed
// session timer only moves its deadline (Timers.Rearm: no allocation).
func (g *ConsumerGroup) scheduleSession(st *State, mid string) {
	gid := g.id
	d := st.consumerConfig(gid).SessionTimeout
	m := g.members[mid]
	if m != nil && m.classic != nil {
		d = time.Duration(m.classic.sessionTimeout) * time.Millisecond
	}
	key := g.sessionKey(m, mid)
	if st.Timers.Rearm(key, cgSessionTag, st.Now.Add(d)) {
		return
	}
	st.Timers.ScheduleTagged(key, cgSessionTag, st.Now.Add(d), func(st *State) {
		if cg, ok := st.Groups[gid].(*ConsumerGroup); ok {
			cg.fenceMember(st, mid, "session timeout", "its session expired")
		}
	})
}

// scheduleRebalance arms the member's rebalance timeout while it must revoke partitions; it
// fences the member if it is still at epoch when the timeout expires.
func (g *ConsumerGroup) scheduleRebalance(st *State, mid string, epoch int32) {
	gid := g.id
	m := g.members[mid]
	if m == nil {
		return
	}
	d := time.Duration(m.rebalanceTimeout) * time.Millisecond
	st.Timers.Schedule(rebalanceTimeoutKey(gid, mid), st.Now.Add(d), func(st *State) {
		cg, ok := st.Groups[gid].(*ConsumerGroup)
		if !ok {
			return
		}
		if _, ok := cg.members[mid]; ok && cg.current(mid).epoch == epoch {
			cg.fenceMember(st, mid, "rebalance timeout", "it failed to revoke partitions within the rebalance timeout")
		}
	})
}

// onLoadedConsumer is the consumer part of Kafka's onLoaded: every member's session timer is
// re-armed, and the rebalance timer of a member still revoking partitions restarts.
func onLoadedConsumer(st *State) {
	for _, g := range st.consumerGroups() {
		for _, mid := range sortedKeys(g.members) {
			g.scheduleSession(st, mid)
			if c := g.current(mid); c.state == MemberUnrevokedPartitions {
				g.scheduleRebalance(st, mid, c.epoch)
			}
		}
	}
}
