package coordinator

import (
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/metahash"
)

// ShareGroupHeartbeatError answers a ShareGroupHeartbeat with err.
func ShareGroupHeartbeatError(req *kmsg.ShareGroupHeartbeatRequest, err error) *kmsg.ShareGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.ErrorCode = ErrorCode(err)
	resp.ErrorMessage = ErrorMessage(err)
	return resp
}

// ShareGroupHeartbeat handles ShareGroupHeartbeat v1 (KIP-932; Kafka's
// GroupMetadataManager.shareGroupHeartbeat) on the group's shard: join (member epoch 0, with the
// member id the client generated), heartbeat, and leave (-1). Errors are answered in the response
// with Kafka's codes and messages.
func ShareGroupHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) func(st *State, c *Call[*kmsg.ShareGroupHeartbeatResponse]) {
	return func(st *State, c *Call[*kmsg.ShareGroupHeartbeatResponse]) {
		resp, err := shareGroupHeartbeat(st, &c.Meta, req)
		if err != nil {
			c.Reply(st, ShareGroupHeartbeatError(req, err))
			return
		}
		c.Reply(st, resp)
	}
}

// validateShareHeartbeat is Kafka's throwIfShareGroupHeartbeatRequestIsInvalid.
func validateShareHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) error {
	invalid := func(msg string) error { return Errf(kerr.InvalidRequest, "%s", msg) }
	switch {
	case blankString(req.MemberID):
		return invalid("MemberId can't be empty.")
	case blankString(req.GroupID):
		return invalid("GroupId can't be empty.")
	case req.RackID != nil && blankString(*req.RackID):
		return invalid("RackId can't be empty.")
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		return invalid("SubscribedTopicNames must be set in first request.")
	case req.MemberEpoch < leaveGroupMemberEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	return nil
}

func shareGroupHeartbeat(st *State, c *Meta, req *kmsg.ShareGroupHeartbeatRequest) (*kmsg.ShareGroupHeartbeatResponse, error) {
	if !st.Cfg.Share.Enabled {
		return nil, kerr.UnsupportedVersion
	}
	if err := validateShareHeartbeat(req); err != nil {
		return nil, err
	}
	if req.MemberEpoch == leaveGroupMemberEpoch {
		return shareGroupLeave(st, req)
	}
	g, created, err := shareGetOrCreate(st, req.GroupID, req.MemberEpoch == 0)
	if err != nil {
		return nil, err
	}
	resp, err := g.heartbeat(st, c, req)
	if err != nil && created && !g.hasRecords() {
		delete(st.Groups, g.id)
	}
	return resp, err
}

// shareGetOrCreate finds the share group of a heartbeat (Kafka's
// getOrMaybeCreatePersistedShareGroup): a join creates it; a group of another type under the id
// is GROUP_ID_NOT_FOUND (there is no conversion between share groups and other types).
func shareGetOrCreate(st *State, id string, create bool) (*ShareGroup, bool, error) {
	switch g := st.Groups[id].(type) {
	case *ShareGroup:
		return g, false, nil
	case nil:
		if !create {
			return nil, false, Errf(kerr.GroupIDNotFound, "Share group %s not found.", id)
		}
		g2 := newShareGroup(id)
		st.Groups[id] = g2
		return g2, true, nil
	default:
		return nil, false, Errf(kerr.GroupIDNotFound, "Group %s is not a share group.", id)
	}
}

// validateShareMemberEpoch is Kafka's throwIfShareGroupMemberEpochIsInvalid; like consumer
// groups (KAFKA-19233), a member may always rejoin with epoch 0 under its member id.
func validateShareMemberEpoch(cur *shareCurrent, received int32) error {
	switch {
	case received == 0:
		return nil
	case received > cur.epoch:
		return Errf(kerr.FencedMemberEpoch, "The share group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, cur.epoch)
	case received < cur.epoch && received != cur.prevEpoch:
		return Errf(kerr.FencedMemberEpoch, "The share group member has a smaller member epoch (%d) than the one known by the group coordinator (%d), and it does not match the previous member epoch (%d). The member must abandon all its partitions and rejoin.", received, cur.epoch, cur.prevEpoch)
	}
	return nil
}

func (g *ShareGroup) heartbeat(st *State, c *Meta, req *kmsg.ShareGroupHeartbeatRequest) (*kmsg.ShareGroupHeartbeatResponse, error) {
	mid := req.MemberID
	old := g.members[mid]
	cfg := st.shareConfig(g.id)
	if old == nil && len(g.members) >= st.Cfg.Share.MaxSize {
		return nil, Errf(kerr.GroupMaxSizeReached, "The share group has reached its maximum capacity of %d members.", st.Cfg.Share.MaxSize)
	}
	if old == nil && req.MemberEpoch != 0 {
		return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", mid, g.id)
	}
	if old != nil {
		if err := validateShareMemberEpoch(g.current(mid), req.MemberEpoch); err != nil {
			return nil, err
		}
	}

	// 1. Update the member; bump the group epoch on a subscription change or a new KIP-1101
	// metadata hash.
	nm := &shareMember{id: mid}
	if old != nil {
		cp := *old
		nm = &cp
	} else {
		st.Log.Info("share group member joined the group", "group", g.id, "member", mid)
	}
	if req.RackID != nil {
		r := *req.RackID
		nm.rackID = &r
	}
	if req.SubscribedTopicNames != nil {
		names := append([]string{}, req.SubscribedTopicNames...)
		sort.Strings(names)
		nm.subscribed = cgDedupSorted(names)
	}
	if c != nil {
		if c.ClientID != nil {
			nm.clientID = *c.ClientID
		}
		nm.clientHost = c.ClientHost
	}
	bump := !g.hasMetadata
	var causes []RebalanceCause // why the epoch is bumped (rebalance history)
	if old == nil || string(shareMemberValue(old)) != string(shareMemberValue(nm)) {
		switch {
		case old == nil:
			bump = true
			causes = append(causes, RebalanceCause{Kind: CauseMemberJoined, Member: mid, New: strings.Join(nm.subscribed, ",")})
		case !equalStrings(old.subscribed, nm.subscribed):
			bump = true
			causes = append(causes, RebalanceCause{Kind: CauseSubscriptionChanged, Member: mid,
				Old: strings.Join(old.subscribed, ","), New: strings.Join(nm.subscribed, ",")})
		}
		g.writeMember(st, nm)
	}
	if bump || g.refresh {
		g.dropDeletedTopics(st)
		hash := g.computeMetadataHash(st)
		g.refresh = false
		if hash != g.metadataHash {
			if !bump && g.hasMetadata {
				causes = append(causes, RebalanceCause{Kind: CauseMetadataChanged, Reason: "the subscribed topics' metadata changed"})
			}
			bump = true
		}
		if bump {
			oldEpoch := g.epoch
			g.writeMetadata(st, g.epoch+1, hash)
			st.Metrics.ShareRebalances++
			st.recordRebalance(g.id, TypeShare, oldEpoch, g.epoch, causes)
		}
	}

	// 2. A new target assignment when the group epoch is ahead of it.
	if g.epoch > g.assignmentEpoch || !g.hasTargetMeta {
		g.computeTargetAssignment(st, g.epoch)
	}

	// 3. The member moves to its target at once: share groups revoke nothing.
	before := g.current(mid)
	_, had := g.currents[mid]
	after := before
	target := g.targets[mid]
	if !had || before.epoch != g.assignmentEpoch || !equalTP(before.assigned, target) {
		after = &shareCurrent{epoch: g.assignmentEpoch, prevEpoch: before.epoch, assigned: cloneTP(target)}
		g.writeCurrent(st, mid, after)
	}
	g.scheduleSession(st, mid, cfg.SessionTimeout)

	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.MemberID = &mid
	resp.MemberEpoch = after.epoch
	resp.HeartbeatIntervalMillis = int32(cfg.HeartbeatInterval / time.Millisecond)
	if req.MemberEpoch == 0 || !equalTP(before.assigned, after.assigned) {
		resp.Assignment = shareResponseAssignment(after.assigned)
	}
	return resp, nil
}

func shareResponseAssignment(a topicPartitions) *kmsg.ShareGroupHeartbeatResponseAssignment {
	out := &kmsg.ShareGroupHeartbeatResponseAssignment{TopicPartitions: []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}}
	for _, t := range sortedTopicIDs(a) {
		tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
		tp.TopicID = t
		tp.Partitions = append([]int32{}, a[t]...)
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return out
}

// computeMetadataHash is KIP-1101's group hash over the subscribed topics that exist.
func (g *ShareGroup) computeMetadataHash(st *State) int64 {
	ts := st.Image
	if ts == nil {
		return 0
	}
	racks := rackFunc(ts)
	hashes := map[string]int64{}
	for name := range g.subscribedTopics() {
		id, n, ok := ts.TopicID(name)
		if !ok {
			continue
		}
		hashes[name] = metahash.TopicHash(id, name, n, racks)
	}
	return metahash.GroupHash(hashes)
}

// dropDeletedTopics deletes the share-partition state of topics that no longer exist (Kafka
// deletes it with the topic's share state, ShareGroupStatePartitionMetadata's DeletingTopics).
func (g *ShareGroup) dropDeletedTopics(st *State) {
	if st.Image == nil {
		return
	}
	for _, k := range g.sortedParts() {
		if _, ok := st.Image.TopicName(k.topic); !ok {
			st.Write(Record{Key: sharePartitionKey(g.id, k.topic, k.partition)})
		}
	}
}

// shareGroupLeave handles member epoch -1: the member leaves, its records are released and the
// group epoch is bumped.
func shareGroupLeave(st *State, req *kmsg.ShareGroupHeartbeatRequest) (*kmsg.ShareGroupHeartbeatResponse, error) {
	g, err := st.shareGroup(req.GroupID)
	if err != nil {
		return nil, err
	}
	if _, ok := g.members[req.MemberID]; !ok {
		return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.id)
	}
	st.Log.Info("share group member left the group", "group", g.id, "member", req.MemberID)
	g.removeMember(st, req.MemberID, RebalanceCause{Kind: CauseMemberLeft, Member: req.MemberID, Reason: "left the group (heartbeat with epoch -1)"})
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	mid := req.MemberID
	resp.MemberID = &mid
	resp.MemberEpoch = leaveGroupMemberEpoch
	return resp, nil
}

// removeMember removes a member that left or was fenced (Kafka's shareGroupFenceMember): the
// records it holds are released, its current assignment, target assignment and member
// metadata are tombstoned, and the group epoch is bumped with the recomputed metadata hash.
func (g *ShareGroup) removeMember(st *State, mid string, cause RebalanceCause) {
	if g.members[mid] == nil {
		return
	}
	g.releaseMember(st, mid, false)
	g.writeMemberTombstones(st, mid)
	st.Timers.Cancel(shareSessionKey(g.id, mid))
	old := g.epoch
	g.writeMetadata(st, g.epoch+1, g.computeMetadataHash(st))
	st.Metrics.ShareRebalances++
	st.recordRebalance(g.id, TypeShare, old, g.epoch, []RebalanceCause{cause})
}

// releaseMember releases what member holds on every partition of the group (undo: the
// deliveries are taken back), writing the partitions whose durable state changed.
func (g *ShareGroup) releaseMember(st *State, member string, undo bool) {
	lim := shareLimitsOf(st.shareConfig(g.id))
	freed := false
	for _, k := range g.sortedParts() {
		sp := g.parts[k]
		changed, f := sp.releaseMember(st, member, lim, undo)
		if changed {
			sp.write(st, g)
		}
		freed = freed || f
	}
	if freed {
		g.wake(st)
	}
}

func shareSessionKey(g, m string) string { return "share-session-timeout-" + g + "-" + m }

// scheduleSession (re)arms the member's session timeout (share.session.timeout.ms); expiry fences
// the member.
func (g *ShareGroup) scheduleSession(st *State, mid string, d time.Duration) {
	gid := g.id
	st.Timers.Schedule(shareSessionKey(gid, mid), st.Now.Add(d), func(st *State) {
		if sg, ok := st.Groups[gid].(*ShareGroup); ok && sg.members[mid] != nil {
			st.Log.Info("share group member fenced", "group", gid, "member", mid, "reason", "its session expired")
			sg.removeMember(st, mid, RebalanceCause{Kind: CauseMemberFenced, Member: mid, Reason: "session timeout"})
		}
	})
}

// markShareTopicsChanged makes every share group recompute its metadata hash (and drop the state
// of deleted topics) at its next heartbeat.
func markShareTopicsChanged(st *State, names []string) {
	if len(names) == 0 {
		return
	}
	for _, g := range st.Groups {
		if sg, ok := g.(*ShareGroup); ok {
			sg.refresh = true
		}
	}
}

// onLoadedShare re-arms every share member's session timer after a load.
func onLoadedShare(st *State) {
	for _, g := range st.shareGroups() {
		cfg := st.shareConfig(g.id)
		for _, mid := range sortedKeys(g.members) {
			g.scheduleSession(st, mid, cfg.SessionTimeout)
		}
	}
}
