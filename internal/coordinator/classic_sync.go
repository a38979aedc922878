package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func syncError(c *SyncCall, err error) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	if c != nil {
		resp.Version = c.APIVersion
	}
	resp.ErrorCode = ErrorCode(err)
	resp.MemberAssignment = []byte{}
	return resp
}

// SyncGroup handles SyncGroup v0–v5 (Kafka's GroupMetadataManager.classicGroupSync). The leader's
// assignment is persisted with the GroupMetadata record; every waiting member is answered once
// that record is durable.
func SyncGroup(req *kmsg.SyncGroupRequest) func(st *State, c *SyncCall) {
	return func(st *State, c *SyncCall) {
		if req.Group == "" {
			c.Reply(st, syncError(c, kerr.InvalidGroupID))
			return
		}
		raw, ok := st.Groups[req.Group]
		if !ok {
			c.Reply(st, syncError(c, kerr.UnknownMemberID))
			return
		}
		g, ok := raw.(*ClassicGroup)
		if !ok {
			if syncForeign(st, c, raw, req) {
				return
			}
			c.Reply(st, syncError(c, kerr.UnknownMemberID))
			return
		}
		if g.state == ClassicDead {
			c.Reply(st, syncError(c, kerr.CoordinatorNotAvailable))
			return
		}
		if err := g.checkMember(req.MemberID, req.InstanceID); err != nil {
			c.Reply(st, syncError(c, err))
			return
		}
		if req.Generation != g.generation {
			c.Reply(st, syncError(c, kerr.IllegalGeneration))
			return
		}
		if (req.ProtocolType != nil && *req.ProtocolType != g.protocolType) || (req.Protocol != nil && *req.Protocol != g.protocolName) {
			c.Reply(st, syncError(c, kerr.InconsistentGroupProtocol))
			return
		}
		m := g.members[req.MemberID]
		switch g.state {
		case ClassicEmpty:
			c.Reply(st, syncError(c, kerr.UnknownMemberID))
		case ClassicPreparingRebalance:
			c.Reply(st, syncError(c, kerr.RebalanceInProgress))
		case ClassicCompletingRebalance:
			if m.syncCall != nil && m.syncCall != c {
				m.syncCall.Reply(st, syncError(m.syncCall, kerr.UnknownMemberID))
			}
			m.syncCall = c
			g.scheduleSession(st, m)
			g.syncReceived(st, m.id)
			if req.MemberID == g.leader {
				assigned := map[string][]byte{}
				for _, a := range req.GroupAssignment {
					assigned[a.MemberID] = a.MemberAssignment
				}
				for id, mm := range g.members {
					mm.assignment = assigned[id]
					if mm.assignment == nil {
						mm.assignment = []byte{}
					}
				}
				g.writeMetadata(st)
				g.transition(st, ClassicStable)
				st.Metrics.CompletedRebalances++
				for _, id := range g.memberIDs() {
					mm := g.members[id]
					if mm.syncCall != nil {
						mm.syncCall.Reply(st, g.syncResponse(mm.syncCall, mm))
						mm.syncCall = nil
					}
				}
			}
		case ClassicStable:
			g.scheduleSession(st, m)
			g.syncReceived(st, m.id)
			c.Reply(st, g.syncResponse(c, m))
		}
	}
}

func (g *ClassicGroup) syncResponse(c *SyncCall, m *classicMember) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = c.APIVersion
	pt, pn := g.protocolType, g.protocolName
	resp.ProtocolType = &pt
	resp.Protocol = &pn
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}

// Heartbeat handles Heartbeat v0–v4 (Kafka's validateClassicGroupHeartbeat).
func Heartbeat(req *kmsg.HeartbeatRequest) func(st *State, c *HeartbeatCall) {
	return func(st *State, c *HeartbeatCall) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		reply := func(err error) { resp.ErrorCode = ErrorCode(err); c.Reply(st, resp) }
		if req.Group == "" {
			reply(kerr.InvalidGroupID)
			return
		}
		raw, ok := st.Groups[req.Group]
		if !ok {
			reply(kerr.UnknownMemberID)
			return
		}
		g, ok := raw.(*ClassicGroup)
		if !ok {
			if heartbeatForeign(st, c, raw, req) {
				return
			}
			reply(kerr.UnknownMemberID)
			return
		}
		if g.state == ClassicDead {
			reply(kerr.CoordinatorNotAvailable)
			return
		}
		if err := g.checkMember(req.MemberID, req.InstanceID); err != nil {
			reply(err)
			return
		}
		if req.Generation != g.generation {
			reply(kerr.IllegalGeneration)
			return
		}
		m := g.members[req.MemberID]
		switch g.state {
		case ClassicEmpty:
			reply(kerr.UnknownMemberID)
		case ClassicPreparingRebalance:
			g.scheduleSession(st, m)
			reply(kerr.RebalanceInProgress)
		default:
			g.scheduleSession(st, m)
			reply(nil)
		}
	}
}

// LeaveGroup handles LeaveGroup v0–v5: v0–v2 one member, v3+ a batch with per-member codes.
func LeaveGroup(req *kmsg.LeaveGroupRequest) func(st *State, c *LeaveCall) {
	return func(st *State, c *LeaveCall) {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		members := req.Members
		if req.Version < 3 {
			members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
		}
		if req.Group == "" {
			resp.ErrorCode = kerr.InvalidGroupID.Code
			c.Reply(st, resp)
			return
		}
		raw, ok := st.Groups[req.Group]
		if !ok {
			c.Reply(st, leaveUnknownGroup(req, members))
			return
		}
		g, ok := raw.(*ClassicGroup)
		if !ok {
			if leaveForeign(st, c, raw, req) {
				return
			}
			c.Reply(st, leaveUnknownGroup(req, members))
			return
		}
		if g.state == ClassicDead {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			c.Reply(st, resp)
			return
		}
		removed := false
		var left []RebalanceCause
		for _, lm := range members {
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID, rm.InstanceID = lm.MemberID, lm.InstanceID
			id := lm.MemberID
			var err error
			switch {
			case lm.InstanceID != nil:
				owner, known := g.static[*lm.InstanceID]
				switch {
				case !known:
					err = kerr.UnknownMemberID
				case id != "" && owner != id:
					err = kerr.FencedInstanceID
				default:
					id = owner
				}
			case g.pending[id]:
				delete(g.pending, id)
				st.Timers.Cancel(pendingKey(g.id, id))
				removed = true
			case g.members[id] == nil:
				err = kerr.UnknownMemberID
			}
			if err == nil && g.members[id] != nil {
				m := g.members[id]
				if m.joinCall != nil {
					m.joinCall.Reply(st, joinError(m.joinCall, &kmsg.JoinGroupRequest{Version: m.joinVersion}, kerr.UnknownMemberID, id))
					g.setJoin(m, nil)
				}
				if m.syncCall != nil {
					m.syncCall.Reply(st, syncError(m.syncCall, kerr.UnknownMemberID))
					m.syncCall = nil
				}
				g.removeMember(st, id)
				removed = true
				kind, reason := CauseMemberLeft, "LeaveGroup"
				if lm.Reason != nil {
					reason += ": " + *lm.Reason
				}
				if lm.InstanceID != nil && lm.MemberID == "" {
					kind = CauseAdminRemoval // a static member removed by its instance id alone
				}
				left = append(left, RebalanceCause{Kind: kind, Member: id, Reason: reason})
			}
			rm.ErrorCode = ErrorCode(err)
			if req.Version < 3 {
				resp.ErrorCode = rm.ErrorCode
			} else {
				resp.Members = append(resp.Members, rm)
			}
		}
		if removed {
			if len(left) == 0 {
				left = []RebalanceCause{{Kind: CauseMemberLeft, Reason: "a pending member left"}}
			}
			for _, c := range left {
				g.noteCause(c)
			}
			g.onMemberRemoved(st, left[0])
		}
		c.Reply(st, resp)
	}
}

// leaveUnknownGroup answers a LeaveGroup whose group does not exist or is neither classic nor
// consumer (Kafka's GroupCoordinatorService.leaveGroup turns the shard's UNKNOWN_MEMBER_ID "group
// not found" into a member-level error): v3+ answer every member UNKNOWN_MEMBER_ID with no
// group-level error, v0–v2 carry it at the top level.
func leaveUnknownGroup(req *kmsg.LeaveGroupRequest, members []kmsg.LeaveGroupRequestMember) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if req.Version < 3 {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp
	}
	for _, lm := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = lm.MemberID, lm.InstanceID, kerr.UnknownMemberID.Code
		resp.Members = append(resp.Members, rm)
	}
	return resp
}
