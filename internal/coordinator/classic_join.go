package coordinator

import (
	"encoding/hex"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// classicNewMemberJoinTimeout bounds how long a new member may wait in a rebalance (Kafka's
// CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS).
const classicNewMemberJoinTimeout = 300 * time.Second

func joinError(c *JoinCall, req *kmsg.JoinGroupRequest, err error, memberID string) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = ErrorCode(err)
	resp.MemberID = memberID
	resp.Generation = -1
	if c != nil {
		resp.Version = c.APIVersion
	}
	return resp
}

// JoinGroup handles JoinGroup v0–v9 on the shard (Kafka's GroupMetadataManager.classicGroupJoin).
// KIP-896 removed v0–v1 in Kafka 4.0 and KAFKA-19444 restored them in 4.0.1 and 4.1 (older
// librdkafka needs them); v0 has no rebalance timeout, so the session timeout stands for it.
func JoinGroup(req *kmsg.JoinGroupRequest) func(st *State, c *JoinCall) {
	return func(st *State, c *JoinCall) {
		if req.Group == "" {
			c.Reply(st, joinError(c, req, kerr.InvalidGroupID, req.MemberID))
			return
		}
		session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
		if session < st.Cfg.Classic.MinSessionTimeout || session > st.Cfg.Classic.MaxSessionTimeout {
			c.Reply(st, joinError(c, req, kerr.InvalidSessionTimeout, req.MemberID))
			return
		}
		var g *ClassicGroup
		switch existing := st.Groups[req.Group].(type) {
		case nil:
		case *ClassicGroup:
			g = existing
		default:
			if joinForeign(st, c, existing, req) {
				return
			}
			if _, still := st.Groups[req.Group]; still {
				c.Reply(st, joinError(c, req, kerr.InconsistentGroupProtocol, ""))
				return
			}
		}
		if g == nil {
			if req.MemberID != "" {
				c.Reply(st, joinError(c, req, kerr.UnknownMemberID, req.MemberID))
				return
			}
			g = newSimpleClassicGroup(req.Group)
			g.stateTime = st.Now
			st.Groups[req.Group] = g
		}
		g.join(st, c, req, session)
	}
}

// join runs Kafka's classicGroupJoinToClassicGroup checks in its order: group.max.size first,
// then a Dead group, then the protocols (an empty protocol type or list is refused by
// supportsProtocols, after the group was looked up or created).
func (g *ClassicGroup) join(st *State, c *JoinCall, req *kmsg.JoinGroupRequest, session time.Duration) {
	if !g.acceptJoiningMember(st, req.MemberID) {
		// Kafka removes an existing member that is turned away and answers with no member id.
		if m := g.members[req.MemberID]; m != nil {
			g.dropMember(st, m, kerr.GroupMaxSizeReached)
			g.onMemberRemoved(st, RebalanceCause{Kind: CauseMemberFenced, Member: m.id, Reason: "group.max.size reached"})
		}
		c.Reply(st, joinError(c, req, kerr.GroupMaxSizeReached, ""))
		return
	}
	if g.state == ClassicDead {
		c.Reply(st, joinError(c, req, kerr.CoordinatorNotAvailable, req.MemberID))
		return
	}
	if !g.supportsProtocols(req) {
		c.Reply(st, joinError(c, req, kerr.InconsistentGroupProtocol, req.MemberID))
		return
	}
	if req.MemberID == "" {
		g.joinUnknownMember(st, c, req, session)
		return
	}
	g.joinKnownMember(st, c, req, session)
}

// supportsProtocols (Kafka's ClassicGroup.supportsProtocols): an empty group takes any non-empty
// protocol type with at least one protocol; otherwise the type must match and at least one
// requested protocol must be supported by every current member (the joining member's current
// protocols included).
func (g *ClassicGroup) supportsProtocols(req *kmsg.JoinGroupRequest) bool {
	if g.state == ClassicEmpty {
		return req.ProtocolType != "" && len(req.Protocols) > 0
	}
	if g.protocolType != req.ProtocolType {
		return false
	}
	g.ensureCounts()
	for _, p := range req.Protocols {
		if g.protoCount[p.Name] == len(g.members) {
			return true
		}
	}
	return false
}

// newMemberID is "<prefix>-<uuid>" with a random UUID in 8-4-4-4-12 lowercase hex (Kafka's
// classic member ids).
func newMemberID(st *State, clientID string) string {
	b := st.IDs.NewUUID()
	out := make([]byte, 0, len(clientID)+37)
	out = append(out, clientID...)
	for _, part := range [][]byte{b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]} {
		out = append(out, '-')
		out = hex.AppendEncode(out, part)
	}
	return string(out)
}

// acceptJoiningMember is Kafka's group.max.size rule: Empty accepts anyone; PreparingRebalance
// accepts a member already waiting in the join, else up to max members waiting; Stable and
// CompletingRebalance accept existing members, else up to max members.
func (g *ClassicGroup) acceptJoiningMember(st *State, memberID string) bool {
	max := st.Cfg.Classic.MaxSize
	if max <= 0 {
		return true
	}
	switch g.state {
	case ClassicPreparingRebalance:
		if m := g.members[memberID]; m != nil && m.joinCall != nil {
			return true
		}
		return g.numAwaitingJoin() < max
	case ClassicCompletingRebalance, ClassicStable:
		return g.members[memberID] != nil || len(g.members) < max
	}
	return true
}

func (g *ClassicGroup) numAwaitingJoin() int { g.ensureCounts(); return g.awaiting }

func (g *ClassicGroup) joinUnknownMember(st *State, c *JoinCall, req *kmsg.JoinGroupRequest, session time.Duration) {
	// Kafka's generateMemberId: "<group.instance.id>-<uuid>" for a static member (clients such
	// as franz-go recognise a restarted static leader by this prefix), else "<client.id>-<uuid>".
	prefix := ""
	if c != nil && c.ClientID != nil {
		prefix = *c.ClientID
	}
	if req.InstanceID != nil {
		prefix = *req.InstanceID
	}
	id := newMemberID(st, prefix)
	if req.InstanceID != nil {
		if old, ok := g.static[*req.InstanceID]; ok {
			g.replaceStaticMember(st, c, req, session, old, id)
			return
		}
		g.addMemberAndRebalance(st, c, req, session, id)
		return
	}
	if req.Version >= 4 {
		// Not counted against group.max.size until it rejoins (Kafka counts members only).
		g.pending[id] = true
		st.Timers.Schedule(pendingKey(g.id, id), st.Now.Add(session), func(st *State) {
			delete(g.pending, id)
			if g.state == ClassicPreparingRebalance {
				g.maybeCompleteJoin(st)
			}
		})
		c.Reply(st, joinError(c, req, kerr.MemberIDRequired, id))
		return
	}
	g.addMemberAndRebalance(st, c, req, session, id)
}

func (g *ClassicGroup) joinKnownMember(st *State, c *JoinCall, req *kmsg.JoinGroupRequest, session time.Duration) {
	id := req.MemberID
	if g.pending[id] {
		delete(g.pending, id)
		st.Timers.Cancel(pendingKey(g.id, id))
		g.addMemberAndRebalance(st, c, req, session, id)
		return
	}
	if err := g.checkMember(id, req.InstanceID); err != nil {
		c.Reply(st, joinError(c, req, err, id))
		return
	}
	m := g.members[id]
	switch g.state {
	case ClassicPreparingRebalance:
		g.updateMember(st, m, c, req, session)
		g.maybeCompleteJoin(st)
	case ClassicCompletingRebalance:
		if sameProtocols(m, req) {
			// The member lost the join response: send the current generation again.
			c.Reply(st, g.joinResponse(c, req, m))
			return
		}
		g.updateMember(st, m, c, req, session)
		g.prepareRebalance(st, RebalanceCause{Kind: CauseSubscriptionChanged, Member: id, Reason: "changed its protocols"})
	case ClassicStable:
		if id == g.leader || !sameProtocols(m, req) {
			g.updateMember(st, m, c, req, session)
			reason := "the leader rejoined"
			if id != g.leader {
				reason = "rejoined with changed protocols"
			}
			g.prepareRebalance(st, RebalanceCause{Kind: CauseMemberRejoined, Member: id, Reason: reason})
			return
		}
		g.scheduleSession(st, m)
		c.Reply(st, g.joinResponse(c, req, m))
	default:
		c.Reply(st, joinError(c, req, kerr.UnknownMemberID, id))
	}
}

func sameProtocols(m *classicMember, req *kmsg.JoinGroupRequest) bool {
	if len(m.protocols) != len(req.Protocols) {
		return false
	}
	for i, p := range req.Protocols {
		if m.protocols[i].Name != p.Name || string(m.protocols[i].Metadata) != string(p.Metadata) {
			return false
		}
	}
	return true
}

func (g *ClassicGroup) updateMember(st *State, m *classicMember, c *JoinCall, req *kmsg.JoinGroupRequest, session time.Duration) {
	if m.joinCall != nil && m.joinCall != c {
		// An older pending join of the same member is superseded.
		m.joinCall.Reply(st, joinError(m.joinCall, &kmsg.JoinGroupRequest{Version: m.joinVersion}, kerr.UnknownMemberID, m.id))
	}
	in := g.members[m.id] == m
	if in {
		g.track(m, -1)
	}
	m.protocols = m.protocols[:0]
	for _, p := range req.Protocols {
		m.protocols = append(m.protocols, classicProtocol{Name: p.Name, Metadata: append([]byte{}, p.Metadata...)})
	}
	m.protocolType = req.ProtocolType
	m.sessionTimeout = session
	m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if req.Version == 0 || req.RebalanceTimeoutMillis <= 0 {
		m.rebalanceTimeout = session
	}
	m.joinCall = c
	m.joinVersion = req.Version
	if req.Reason != nil {
		m.joinReason = *req.Reason
	}
	if in {
		g.track(m, +1)
	}
}

func (g *ClassicGroup) addMemberAndRebalance(st *State, c *JoinCall, req *kmsg.JoinGroupRequest, session time.Duration, id string) {
	m := &classicMember{id: id, instanceID: req.InstanceID, isNew: true}
	if c != nil {
		if c.ClientID != nil {
			m.clientID = *c.ClientID
		}
		m.clientHost = c.ClientHost
	}
	g.updateMember(st, m, c, req, session)
	if len(g.members) == 0 {
		g.protocolType = req.ProtocolType
	}
	g.members[id] = m
	g.track(m, +1)
	if g.leader == "" {
		g.leader = id // Kafka: the first member added leads
	}
	if req.InstanceID != nil {
		g.static[*req.InstanceID] = id
	}
	g.newMemberAdded = true
	// A new member that never completes its join is dropped after this timeout.
	st.Timers.ScheduleTagged(heartbeatKey(g.id, id), g, st.Now.Add(classicNewMemberJoinTimeout), func(st *State) {
		g.expireMember(st, id)
	})
	joined := RebalanceCause{Kind: CauseMemberJoined, Member: id}
	if g.state == ClassicPreparingRebalance {
		g.noteCause(joined)
		g.maybeCompleteJoin(st)
		return
	}
	g.prepareRebalance(st, joined)
}

// replaceStaticMember gives a known group.instance.id a new member id (KIP-345, Kafka's
// updateStaticMemberThenRebalanceOrCompleteJoin). The old id's pending join and sync are answered
// FENCED_INSTANCE_ID and the member keeps its assignment under the new id. Stable: when the
// protocol the group would select is unchanged, no rebalance happens: the member is persisted
// under its new id and answered at once with the current generation (a v9+ leader gets the
// member list with SkipAssignment; an older leader is told the previous leader id, so it acts as
// a follower). CompletingRebalance: a rebalance is forced (the leader may be assigning the old
// id). PreparingRebalance: the join may complete.
func (g *ClassicGroup) replaceStaticMember(st *State, c *JoinCall, req *kmsg.JoinGroupRequest, session time.Duration, oldID, newID string) {
	old := g.members[oldID]
	g.track(old, -1) // the member moves to its new id below
	if old.joinCall != nil {
		old.joinCall.Reply(st, joinError(old.joinCall, &kmsg.JoinGroupRequest{Version: old.joinVersion}, kerr.FencedInstanceID, oldID))
		old.joinCall = nil
	}
	if old.syncCall != nil {
		old.syncCall.Reply(st, syncError(old.syncCall, kerr.FencedInstanceID))
		old.syncCall = nil
	}
	st.Timers.Cancel(heartbeatKey(g.id, oldID))
	delete(g.members, oldID)
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	m := old
	m.id = newID
	if c != nil && c.ClientID != nil {
		m.clientID = *c.ClientID
	}
	if c != nil {
		m.clientHost = c.ClientHost
	}
	g.members[newID] = m
	g.track(m, +1)
	g.static[*req.InstanceID] = newID
	oldLeader := g.leader
	if g.leader == oldID {
		g.leader = newID
	}
	g.scheduleSession(st, m)
	g.updateMember(st, m, c, req, session)
	switch g.state {
	case ClassicStable:
		if g.selectProtocol() != g.protocolName {
			g.prepareRebalance(st, RebalanceCause{Kind: CauseSubscriptionChanged, Member: m.id, Reason: "static member " + *req.InstanceID + " changed the selected protocol"})
			return
		}
		g.setJoin(m, nil)
		g.writeMetadata(st)
		resp := g.joinResponse(c, req, m)
		resp.Members = nil
		if m.id == g.leader {
			if req.Version >= 9 {
				resp.SkipAssignment = true
				resp.Members = g.joinMembers()
			} else {
				resp.LeaderID = oldLeader
			}
		}
		c.Reply(st, resp)
	case ClassicCompletingRebalance:
		g.prepareRebalance(st, RebalanceCause{Kind: CauseMemberRejoined, Member: m.id, Reason: "static member " + *req.InstanceID + " rejoined during CompletingRebalance"})
	default:
		g.maybeCompleteJoin(st)
	}
}

// prepareRebalance moves the group to PreparingRebalance and arms the join timer: the initial
// delay for an Empty group (group.initial.rebalance.delay.ms, extended per new member up to the
// rebalance timeout), else the longest member rebalance timeout.
func (g *ClassicGroup) prepareRebalance(st *State, cause RebalanceCause) {
	g.noteCause(cause)
	if g.state == ClassicCompletingRebalance {
		for _, id := range g.memberIDs() { // replies in member-id order, not map order
			m := g.members[id]
			m.assignment = nil
			if m.syncCall != nil {
				m.syncCall.Reply(st, syncError(m.syncCall, kerr.RebalanceInProgress))
				m.syncCall = nil
			}
		}
	}
	st.Timers.Cancel(syncKey(g.id))
	clear(g.pendingSync)
	wasEmpty := g.state == ClassicEmpty
	g.transition(st, ClassicPreparingRebalance)
	st.Log.Debug("classic group preparing rebalance", "group", g.id, "reason", cause.String())
	timeout := g.maxRebalanceTimeout()
	if wasEmpty && st.Cfg.Classic.InitialRebalanceDelay > 0 {
		delay := st.Cfg.Classic.InitialRebalanceDelay
		if delay > timeout {
			delay = timeout
		}
		g.initialDelayRemaining = timeout - delay
		g.newMemberAdded = false
		g.inInitialDelay = true
		g.armInitialDelay(st, delay)
		return
	}
	st.Timers.Schedule(joinKey(g.id), st.Now.Add(timeout), func(st *State) { g.completeJoin(st) })
	g.maybeCompleteJoin(st)
}

func (g *ClassicGroup) armInitialDelay(st *State, delay time.Duration) {
	st.Timers.Schedule(joinKey(g.id), st.Now.Add(delay), func(st *State) {
		if g.newMemberAdded && g.initialDelayRemaining > 0 {
			g.newMemberAdded = false
			next := st.Cfg.Classic.InitialRebalanceDelay
			if next > g.initialDelayRemaining {
				next = g.initialDelayRemaining
			}
			g.initialDelayRemaining -= next
			g.armInitialDelay(st, next)
			return
		}
		g.completeJoin(st)
	})
}

func (g *ClassicGroup) maxRebalanceTimeout() time.Duration {
	var max time.Duration
	for _, m := range g.members {
		if m.rebalanceTimeout > max {
			max = m.rebalanceTimeout
		}
	}
	if max <= 0 {
		max = st0
	}
	return max
}

const st0 = 60 * time.Second

// maybeCompleteJoin completes the join phase early when every member has rejoined and no member
// id handed out with MEMBER_ID_REQUIRED is outstanding (not during the initial delay).
func (g *ClassicGroup) maybeCompleteJoin(st *State) {
	if g.state != ClassicPreparingRebalance || g.initialDelayActive(st) {
		return
	}
	g.ensureCounts()
	if len(g.pending) > 0 || g.awaiting != len(g.members) {
		return
	}
	g.completeJoin(st)
}

func (g *ClassicGroup) initialDelayActive(*State) bool { return g.inInitialDelay }

// completeJoin ends the join phase: members that did not rejoin are removed, the generation is
// bumped, a protocol is chosen, and every waiting member gets its JoinGroup response (the leader
// with the member list). An emptied group is persisted as Empty.
func (g *ClassicGroup) completeJoin(st *State) {
	if g.state != ClassicPreparingRebalance {
		return
	}
	st.Timers.Cancel(joinKey(g.id))
	g.initialDelayRemaining = 0
	g.inInitialDelay = false
	// Dynamic members that did not rejoin are removed; static ones stay until their session
	// expires (KIP-345).
	ids := g.memberIDs() // sorted once; the loops below skip members removed meanwhile
	for _, id := range ids {
		m := g.members[id]
		if m.joinCall == nil && m.instanceID == nil {
			g.noteCause(RebalanceCause{Kind: CauseMemberFenced, Member: id, Reason: "did not rejoin within the rebalance timeout"})
			g.removeMember(st, id)
		}
	}
	if len(g.members) > 0 && !g.electJoinedLeader() {
		// Only static members that did not rejoin are left: wait for them (or their session
		// expiry) for another rebalance timeout.
		st.Timers.Schedule(joinKey(g.id), st.Now.Add(g.maxRebalanceTimeout()), func(st *State) { g.completeJoin(st) })
		return
	}
	g.generation++
	st.recordRebalance(g.id, TypeClassic, g.generation-1, g.generation, g.takeCauses())
	clear(g.pendingSync)
	if len(g.members) == 0 {
		g.protocolName = ""
		g.leader = ""
		g.transition(st, ClassicEmpty)
		g.writeMetadata(st)
		return
	}
	g.protocolName = g.selectProtocol()
	g.transition(st, ClassicCompletingRebalance)
	for _, id := range ids {
		m := g.members[id]
		if m == nil {
			continue
		}
		m.isNew = false
		if m.joinCall != nil {
			m.joinCall.Reply(st, g.joinResponse(m.joinCall, nil, m))
			g.setJoin(m, nil)
		}
		g.scheduleSession(st, m)
		g.pendingSync[id] = true
	}
	gen := g.generation
	st.Timers.Schedule(syncKey(g.id), st.Now.Add(g.maxRebalanceTimeout()), func(st *State) { g.expireSync(st, gen) })
}

// electJoinedLeader keeps the leader if it rejoined, else picks a member that did (Kafka's
// maybeElectNewJoinedLeader); false when no member rejoined.
func (g *ClassicGroup) electJoinedLeader() bool {
	if m := g.members[g.leader]; m != nil && m.joinCall != nil {
		return true
	}
	for _, id := range g.memberIDs() {
		if g.members[id].joinCall != nil {
			g.leader = id
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol with most votes, each member voting for its first listed
// protocol that all members support; ties go to the earliest in the leader's preference.
// The candidates (protocols every member lists) come from the per-protocol member counts.
func (g *ClassicGroup) selectProtocol() string {
	g.ensureCounts()
	all := len(g.members)
	candidate := func(name string) bool { return g.protoCount[name] == all }
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if candidate(p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best, bestVotes := "", -1
	for _, p := range g.members[g.leader].protocols {
		if candidate(p.Name) && votes[p.Name] > bestVotes {
			best, bestVotes = p.Name, votes[p.Name]
		}
	}
	return best
}

func (g *ClassicGroup) joinMembers() []kmsg.JoinGroupResponseMember {
	var out []kmsg.JoinGroupResponseMember
	for _, id := range g.memberIDs() {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = m.metadataFor(g.protocolName)
		out = append(out, jm)
	}
	return out
}

func (g *ClassicGroup) joinResponse(c *JoinCall, req *kmsg.JoinGroupRequest, m *classicMember) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	if c != nil {
		resp.Version = c.APIVersion
	} else if req != nil {
		resp.Version = req.Version
	}
	resp.Generation = g.generation
	pt, pn := g.protocolType, g.protocolName
	resp.ProtocolType = &pt
	resp.Protocol = &pn
	resp.LeaderID = g.leader
	resp.MemberID = m.id
	if m.id == g.leader {
		resp.Members = g.joinMembers()
	}
	return resp
}

// removeMember drops a member and its timers (not its group's state transition).
func (g *ClassicGroup) removeMember(st *State, id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	st.Timers.Cancel(heartbeatKey(g.id, id))
	if m.instanceID != nil && g.static[*m.instanceID] == id {
		delete(g.static, *m.instanceID)
	}
	g.track(m, -1)
	delete(g.members, id)
	delete(g.pendingSync, id)
	if g.leader == id {
		g.leader = ""
		if ids := g.memberIDs(); len(ids) > 0 {
			g.leader = ids[0]
		}
	}
}

// dropMember answers a member's waiting join and sync with err and removes it.
func (g *ClassicGroup) dropMember(st *State, m *classicMember, err error) {
	if m.joinCall != nil {
		m.joinCall.Reply(st, joinError(m.joinCall, &kmsg.JoinGroupRequest{Version: m.joinVersion}, err, ""))
		g.setJoin(m, nil)
	}
	if m.syncCall != nil {
		m.syncCall.Reply(st, syncError(m.syncCall, err))
		m.syncCall = nil
	}
	g.removeMember(st, m.id)
}

// expireMember removes a member whose session timed out and rebalances the group.
func (g *ClassicGroup) expireMember(st *State, id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	// Kafka's hasSatisfiedHeartbeat: a member waiting in a join or sync needs no heartbeat,
	// except a new member (its join times out).
	if !m.isNew && (m.joinCall != nil || m.syncCall != nil) {
		return
	}
	st.Log.Info("classic group member session expired", "group", g.id, "member", id)
	g.dropMember(st, m, kerr.UnknownMemberID)
	reason := "session timeout"
	if m.isNew {
		reason = "a new member did not complete its join in time"
	}
	g.onMemberRemoved(st, RebalanceCause{Kind: CauseMemberFenced, Member: id, Reason: reason})
}

// onMemberRemoved moves the group on after a member left or expired (cause says which).
func (g *ClassicGroup) onMemberRemoved(st *State, cause RebalanceCause) {
	switch g.state {
	case ClassicStable, ClassicCompletingRebalance:
		g.prepareRebalance(st, cause)
	case ClassicPreparingRebalance:
		g.noteCause(cause)
		if len(g.members) == 0 && len(g.pending) == 0 {
			g.completeJoin(st)
			return
		}
		g.maybeCompleteJoin(st)
	}
}

// expireSync removes the members of generation gen that did not send SyncGroup within the
// rebalance timeout and rebalances (Kafka's expirePendingSync; CompletingRebalance or Stable).
func (g *ClassicGroup) expireSync(st *State, gen int32) {
	if gen != g.generation || (g.state != ClassicCompletingRebalance && g.state != ClassicStable) {
		return
	}
	if len(g.pendingSync) == 0 {
		return
	}
	var causes []RebalanceCause
	for _, id := range sortedKeys(g.pendingSync) {
		if m := g.members[id]; m != nil {
			g.dropMember(st, m, kerr.UnknownMemberID)
			causes = append(causes, RebalanceCause{Kind: CauseMemberFenced, Member: id, Reason: "sync timeout"})
		}
	}
	clear(g.pendingSync)
	if len(causes) == 0 {
		causes = []RebalanceCause{{Kind: CauseMemberFenced, Reason: "sync timeout"}}
	}
	for _, c := range causes {
		g.noteCause(c)
	}
	g.prepareRebalance(st, causes[0])
}

// syncReceived records that member id sent SyncGroup for this generation; the sync timer stops
// once every member did.
func (g *ClassicGroup) syncReceived(st *State, id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		st.Timers.Cancel(syncKey(g.id))
	}
}

// scheduleSession (re)arms the member's session timer; re-arming an armed one only moves its
// deadline (Timers.Rearm, tagged with the group: the timer's fn expires this group's member).
func (g *ClassicGroup) scheduleSession(st *State, m *classicMember) {
	id := m.id
	if m.hbKeyFor != id || m.hbKey == "" {
		m.hbKey, m.hbKeyFor = heartbeatKey(g.id, id), id
	}
	deadline := st.Now.Add(m.sessionTimeout)
	if st.Timers.Rearm(m.hbKey, g, deadline) {
		return
	}
	st.Timers.ScheduleTagged(m.hbKey, g, deadline, func(st *State) { g.expireMember(st, id) })
}

func heartbeatKey(g, m string) string { return "heartbeat-" + g + "-" + m }
func pendingKey(g, m string) string   { return "pending-" + g + "-" + m }
func joinKey(g string) string         { return "join-" + g }
func syncKey(g string) string         { return "sync-" + g }
