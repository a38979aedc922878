package coordinator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// Classic-group scenario tests on the synchronous harness with a manual clock (Kafka's
// GroupMetadataManager.classicGroupJoin, classicGroupSync and the classic heartbeat and leave
// paths).

const clGroup = "g"

func clHarness(mods ...func(*coordinator.Config)) *coordtest.Harness {
	cfg := coordtest.Config()
	cfg.Classic = coordinator.ClassicConfig{MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute, MaxSize: 1000}
	cfg.Offsets = coordinator.OffsetsConfig{MetadataMaxBytes: 4096, Retention: 7 * 24 * time.Hour}
	for _, m := range mods {
		m(cfg)
	}
	return coordtest.New(cfg)
}

func clMeta(v int16, client string) coordinator.Meta {
	return coordinator.Meta{APIVersion: v, ClientID: &client, ClientHost: "/127.0.0.1"}
}

type (
	joinRes = coordtest.Result[*kmsg.JoinGroupResponse]
	syncRes = coordtest.Result[*kmsg.SyncGroupResponse]
)

type clJoinOpt func(*kmsg.JoinGroupRequest)

func clInstance(id string) clJoinOpt { return func(r *kmsg.JoinGroupRequest) { r.InstanceID = &id } }
func clProtos(names ...string) clJoinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		r.Protocols = nil
		for _, n := range names {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = n, []byte("md-"+n)
			r.Protocols = append(r.Protocols, p)
		}
	}
}
func clMetadata(md string) clJoinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		for i := range r.Protocols {
			r.Protocols[i].Metadata = []byte(md)
		}
	}
}
func clSession(d time.Duration) clJoinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.SessionTimeoutMillis = int32(d / time.Millisecond) }
}
func clRebalance(d time.Duration) clJoinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.RebalanceTimeoutMillis = int32(d / time.Millisecond) }
}

func clJoin(h *coordtest.Harness, v int16, member string, opts ...clJoinOpt) *joinRes {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = v
	req.Group = clGroup
	req.MemberID = member
	req.SessionTimeoutMillis = 10_000
	req.RebalanceTimeoutMillis = 30_000
	req.ProtocolType = "consumer"
	clProtos("range")(req)
	for _, o := range opts {
		o(req)
	}
	return coordtest.DoMeta(h, clMeta(v, "cli"), coordinator.JoinGroup(req))
}

func clJoinResp(t *testing.T, c *joinRes) *kmsg.JoinGroupResponse {
	t.Helper()
	if !c.Done() {
		t.Fatalf("JoinGroup not answered")
	}
	if c.Err != nil {
		t.Fatalf("JoinGroup call error: %v", c.Err)
	}
	return c.Resp
}

func clWantJoinErr(t *testing.T, c *joinRes, want *kerr.Error) *kmsg.JoinGroupResponse {
	t.Helper()
	r := clJoinResp(t, c)
	if r.ErrorCode != want.Code {
		t.Fatalf("JoinGroup error = %v, want %v", kerr.ErrorForCode(r.ErrorCode), want)
	}
	return r
}

// clJoinNew does the v4+ MEMBER_ID_REQUIRED dance and returns the second JoinGroup call.
func clJoinNew(t *testing.T, h *coordtest.Harness, v int16, opts ...clJoinOpt) (string, *joinRes) {
	t.Helper()
	probe := kmsg.NewPtrJoinGroupRequest()
	for _, o := range opts {
		o(probe)
	}
	if probe.InstanceID != nil { // static members get their id with the first join
		c := clJoin(h, v, "", opts...)
		if c.Done() {
			return clJoinResp(t, c).MemberID, c
		}
		return clGroupOf(t, h).StaticMemberID(*probe.InstanceID), c
	}
	r := clWantJoinErr(t, clJoin(h, v, "", opts...), kerr.MemberIDRequired)
	return r.MemberID, clJoin(h, v, r.MemberID, opts...)
}

func clSync(h *coordtest.Harness, v int16, member string, gen int32, instance *string, assign map[string]string) *syncRes {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = v
	req.Group = clGroup
	req.MemberID = member
	req.Generation = gen
	req.InstanceID = instance
	for id, a := range assign {
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID, sa.MemberAssignment = id, []byte(a)
		req.GroupAssignment = append(req.GroupAssignment, sa)
	}
	return coordtest.DoMeta(h, clMeta(v, "cli"), coordinator.SyncGroup(req))
}

func clSyncResp(t *testing.T, c *syncRes, want *kerr.Error) *kmsg.SyncGroupResponse {
	t.Helper()
	if !c.Done() {
		t.Fatalf("SyncGroup not answered")
	}
	r := c.Resp
	code := int16(0)
	if want != nil {
		code = want.Code
	}
	if r.ErrorCode != code {
		t.Fatalf("SyncGroup error = %v, want %v", kerr.ErrorForCode(r.ErrorCode), want)
	}
	return r
}

func clHeartbeat(h *coordtest.Harness, member string, gen int32, instance *string) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group = clGroup
	req.MemberID = member
	req.Generation = gen
	req.InstanceID = instance
	c := coordtest.DoMeta(h, clMeta(4, "cli"), coordinator.Heartbeat(req))
	return c.Resp.ErrorCode
}

func clWantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	code := int16(0)
	if want != nil {
		code = want.Code
	}
	if got != code {
		t.Fatalf("%s: error = %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

func clGroupOf(t *testing.T, h *coordtest.Harness) *coordinator.ClassicGroup {
	t.Helper()
	g, ok := h.St.Groups[clGroup].(*coordinator.ClassicGroup)
	if !ok {
		t.Fatalf("group %q is not a classic group (%T)", clGroup, h.St.Groups[clGroup])
	}
	return g
}

func clWantState(t *testing.T, h *coordtest.Harness, want coordinator.ClassicState) {
	t.Helper()
	if got := clGroupOf(t, h).State(); got != want {
		t.Fatalf("group state = %v, want %v", got, want)
	}
}

// clStable brings the group to Stable with the given members (v5 joins, leader first), returning
// their member ids in join order and the generation.
func clStable(t *testing.T, h *coordtest.Harness, n int, opts ...clJoinOpt) ([]string, int32) {
	t.Helper()
	var ids []string
	var calls []*joinRes
	for i := 0; i < n; i++ {
		id, c := clJoinNew(t, h, 5, opts...)
		ids = append(ids, id)
		calls = append(calls, c)
		if i == 0 && n > 1 {
			// The group completed its first rebalance with one member (no initial delay); the
			// others join the next rebalance, for which the first member must rejoin.
			clJoinResp(t, c)
		}
	}
	if n > 1 {
		calls[0] = clJoin(h, 5, ids[0], opts...)
	}
	gen := clJoinResp(t, calls[0]).Generation
	assign := map[string]string{}
	for _, id := range ids {
		assign[id] = "a-" + id
	}
	syncs := []*syncRes{clSync(h, 3, ids[0], gen, nil, assign)}
	for _, id := range ids[1:] {
		syncs = append(syncs, clSync(h, 3, id, gen, nil, nil))
	}
	for i, s := range syncs {
		if r := clSyncResp(t, s, nil); string(r.MemberAssignment) != "a-"+ids[i] {
			t.Fatalf("member %d assignment %q", i, r.MemberAssignment)
		}
	}
	clWantState(t, h, coordinator.ClassicStable)
	return ids, gen
}

func TestClassicJoinMemberIDRequiredThenRejoin(t *testing.T) {
	h := clHarness()
	first := clJoin(h, 4, "")
	r := clWantJoinErr(t, first, kerr.MemberIDRequired)
	if !strings.HasPrefix(r.MemberID, "cli-") || r.Generation != -1 {
		t.Fatalf("MEMBER_ID_REQUIRED answer: member %q generation %d", r.MemberID, r.Generation)
	}
	// The pending member is not yet a member.
	if n := clGroupOf(t, h).NumMembers(); n != 0 {
		t.Fatalf("members after MEMBER_ID_REQUIRED = %d", n)
	}
	jr := clJoinResp(t, clJoin(h, 4, r.MemberID))
	if jr.ErrorCode != 0 || jr.MemberID != r.MemberID || jr.LeaderID != r.MemberID || jr.Generation != 1 {
		t.Fatalf("rejoin: %+v", jr)
	}
	if len(jr.Members) != 1 || jr.Members[0].MemberID != r.MemberID {
		t.Fatalf("leader member list %+v", jr.Members)
	}
	if jr.Protocol == nil || *jr.Protocol != "range" {
		t.Fatalf("protocol %v", jr.Protocol)
	}
	clWantState(t, h, coordinator.ClassicCompletingRebalance)

	// v3 has no MEMBER_ID_REQUIRED: an unknown member joins at once (and starts a rebalance).
	c := clJoin(h, 3, "")
	if c.Done() {
		t.Fatalf("v3 join answered before the rebalance completed: %+v", c.Resp)
	}
	clWantState(t, h, coordinator.ClassicPreparingRebalance)
	// A pending member id that expires is forgotten: rejoining with it is UNKNOWN_MEMBER_ID.
	pr := clWantJoinErr(t, clJoin(h, 4, ""), kerr.MemberIDRequired)
	h.Advance(11 * time.Second) // session 10 s
	if c2 := clJoin(h, 4, pr.MemberID); c2.Done() {
		clWantJoinErr(t, c2, kerr.UnknownMemberID)
	}
}

func TestClassicTwoMembersLeaderAndFollower(t *testing.T) {
	h := clHarness(func(c *coordinator.Config) { c.Classic.InitialRebalanceDelay = 3 * time.Second })
	a, ca := clJoinNew(t, h, 5)
	b, cb := clJoinNew(t, h, 5)
	if ca.Done() || cb.Done() {
		t.Fatalf("joins answered during the initial rebalance delay")
	}
	h.Advance(3 * time.Second) // b joined during the delay: extended once
	if ca.Done() {
		t.Fatalf("initial delay not extended for the second member")
	}
	h.Advance(3 * time.Second)
	ra, rb := clJoinResp(t, ca), clJoinResp(t, cb)
	if ra.LeaderID != a || rb.LeaderID != a {
		t.Fatalf("leader = %q/%q, want first joiner %q", ra.LeaderID, rb.LeaderID, a)
	}
	if len(ra.Members) != 2 {
		t.Fatalf("leader got %d members, want 2", len(ra.Members))
	}
	if len(rb.Members) != 0 {
		t.Fatalf("follower got %d members, want 0", len(rb.Members))
	}
	if ra.Generation != 1 || rb.Generation != 1 {
		t.Fatalf("generations %d %d", ra.Generation, rb.Generation)
	}
	clWantState(t, h, coordinator.ClassicCompletingRebalance)
	clWantCode(t, "heartbeat in CompletingRebalance", clHeartbeat(h, b, 1, nil), nil)

	// The follower's sync waits for the leader's.
	sb := clSync(h, 3, b, 1, nil, nil)
	if sb.Done() {
		t.Fatalf("follower sync answered before the leader's")
	}
	sa := clSync(h, 3, a, 1, nil, map[string]string{a: "pa", b: "pb"})
	if got := clSyncResp(t, sa, nil).MemberAssignment; string(got) != "pa" {
		t.Fatalf("leader assignment %q", got)
	}
	if got := clSyncResp(t, sb, nil).MemberAssignment; string(got) != "pb" {
		t.Fatalf("follower assignment %q", got)
	}
	clWantState(t, h, coordinator.ClassicStable)
	// A late sync in Stable gets the member's assignment.
	if got := clSyncResp(t, clSync(h, 3, b, 1, nil, nil), nil).MemberAssignment; string(got) != "pb" {
		t.Fatalf("stable sync assignment %q", got)
	}
	// Sync with a wrong generation / unknown member / wrong protocol.
	clSyncResp(t, clSync(h, 3, b, 7, nil, nil), kerr.IllegalGeneration)
	clSyncResp(t, clSync(h, 3, "nobody", 1, nil, nil), kerr.UnknownMemberID)
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 5, clGroup, b, 1
	pt := "connect"
	req.ProtocolType = &pt
	clSyncResp(t, coordtest.DoMeta(h, clMeta(5, "cli"), coordinator.SyncGroup(req)), kerr.InconsistentGroupProtocol)

	// A follower rejoining Stable with the same metadata gets the current generation back.
	if r := clJoinResp(t, clJoin(h, 5, b)); r.Generation != 1 || len(r.Members) != 0 || r.ErrorCode != 0 {
		t.Fatalf("follower rejoin in Stable: %+v", r)
	}
	clWantState(t, h, coordinator.ClassicStable)
	// The leader rejoining forces a rebalance.
	ja := clJoin(h, 5, a)
	clWantState(t, h, coordinator.ClassicPreparingRebalance)
	clWantCode(t, "heartbeat in PreparingRebalance", clHeartbeat(h, b, 1, nil), kerr.RebalanceInProgress)
	sPrep := clSync(h, 3, b, 1, nil, nil)
	clSyncResp(t, sPrep, kerr.RebalanceInProgress)
	jb := clJoin(h, 5, b)
	if r := clJoinResp(t, ja); r.Generation != 2 || len(r.Members) != 2 {
		t.Fatalf("leader rejoin: %+v", r)
	}
	clJoinResp(t, jb)
}

func TestClassicHeartbeatCodes(t *testing.T) {
	h := clHarness()
	inst := "i-1"
	clWantCode(t, "unknown group", clHeartbeat(h, "m", 0, nil), kerr.UnknownMemberID)
	ids, gen := clStable(t, h, 1, clInstance(inst))
	m := ids[0]
	clWantCode(t, "member", clHeartbeat(h, m, gen, &inst), nil)
	clWantCode(t, "unknown member", clHeartbeat(h, "other", gen, nil), kerr.UnknownMemberID)
	clWantCode(t, "illegal generation", clHeartbeat(h, m, gen+1, &inst), kerr.IllegalGeneration)
	clWantCode(t, "fenced instance", clHeartbeat(h, "other", gen, &inst), kerr.FencedInstanceID)
	unknownInst := "i-2"
	clWantCode(t, "unknown instance", clHeartbeat(h, m, gen, &unknownInst), kerr.UnknownMemberID)
	req := kmsg.NewPtrHeartbeatRequest()
	req.MemberID = m
	clWantCode(t, "empty group id", coordtest.DoMeta(h, clMeta(4, "cli"), coordinator.Heartbeat(req)).Resp.ErrorCode, kerr.InvalidGroupID)
	// PreparingRebalance: REBALANCE_IN_PROGRESS.
	_, c2 := clJoinNew(t, h, 5)
	if c2.Done() {
		t.Fatalf("second member's join answered before the leader rejoined")
	}
	clWantCode(t, "preparing", clHeartbeat(h, m, gen, &inst), kerr.RebalanceInProgress)
}

func TestClassicLeaveGroup(t *testing.T) {
	t.Run("v0-v2 single member", func(t *testing.T) {
		h := clHarness()
		ids, gen := clStable(t, h, 2)
		leave := func(member string) *kmsg.LeaveGroupResponse {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Version, req.Group, req.MemberID = 1, clGroup, member
			return coordtest.DoMeta(h, clMeta(1, "cli"), coordinator.LeaveGroup(req)).Resp
		}
		clWantCode(t, "unknown member", leave("nobody").ErrorCode, kerr.UnknownMemberID)
		clWantCode(t, "leave", leave(ids[1]).ErrorCode, nil)
		clWantState(t, h, coordinator.ClassicPreparingRebalance)
		// The remaining member rejoins alone.
		if r := clJoinResp(t, clJoin(h, 5, ids[0])); len(r.Members) != 1 || r.Generation != gen+1 {
			t.Fatalf("rejoin after leave: %+v", r)
		}
		clWantCode(t, "last leaves", leave(ids[0]).ErrorCode, nil)
		clWantState(t, h, coordinator.ClassicEmpty)
		if g := clGroupOf(t, h); g.Generation() != gen+2 {
			t.Fatalf("generation after the group emptied = %d, want %d", g.Generation(), gen+2)
		}
	})
	t.Run("v3+ batch", func(t *testing.T) {
		h := clHarness()
		a, b := "inst-a", "inst-b"
		idA, ca := clJoinNew(t, h, 5, clInstance(a))
		_ = idA
		ra := clJoinResp(t, ca)
		idB := ""
		{
			r := clJoin(h, 5, "", clInstance(b)) // static members get no MEMBER_ID_REQUIRED
			if r.Done() {
				t.Fatalf("static join answered before the rebalance completed")
			}
			clJoinResp(t, clJoin(h, 5, ra.MemberID, clInstance(a)))
			idB = clJoinResp(t, r).MemberID
		}
		dyn, cd := clJoinNew(t, h, 5)
		_ = cd
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group = 5, clGroup
		mk := func(member string, inst *string) kmsg.LeaveGroupRequestMember {
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID, m.InstanceID = member, inst
			return m
		}
		unknownInst := "inst-z"
		req.Members = []kmsg.LeaveGroupRequestMember{
			mk("", &a),           // by instance id only: removed
			mk("wrong", &b),      // instance owned by another member id: FENCED
			mk("nobody", nil),    // unknown member
			mk("", &unknownInst), // unknown instance
			mk(dyn, nil),         // dynamic member waiting in a join
		}
		resp := coordtest.DoMeta(h, clMeta(5, "cli"), coordinator.LeaveGroup(req)).Resp
		want := []*kerr.Error{nil, kerr.FencedInstanceID, kerr.UnknownMemberID, kerr.UnknownMemberID, nil}
		if resp.ErrorCode != 0 || len(resp.Members) != len(want) {
			t.Fatalf("leave response %+v", resp)
		}
		for i, w := range want {
			clWantCode(t, "member "+resp.Members[i].MemberID, resp.Members[i].ErrorCode, w)
		}
		clWantJoinErr(t, cd, kerr.UnknownMemberID)
		g := clGroupOf(t, h)
		if g.NumMembers() != 1 {
			t.Fatalf("members after leave = %d, want 1 (%s)", g.NumMembers(), idB)
		}
		// Unknown group on v3+ (Kafka's GroupCoordinatorService.leaveGroup, "Group was not
		// found"): no group-level error, UNKNOWN_MEMBER_ID for every member; v0–v2 carry it
		// at the top level.
		req.Group = "nope"
		resp = coordtest.DoMeta(h, clMeta(5, "cli"), coordinator.LeaveGroup(req)).Resp
		clWantCode(t, "unknown group", resp.ErrorCode, nil)
		if len(resp.Members) != len(req.Members) {
			t.Fatalf("unknown group: %d members answered, want %d", len(resp.Members), len(req.Members))
		}
		for i, m := range resp.Members {
			if m.MemberID != req.Members[i].MemberID || m.InstanceID != req.Members[i].InstanceID {
				t.Errorf("unknown group member %d = %s/%v, want %s/%v", i, m.MemberID, m.InstanceID, req.Members[i].MemberID, req.Members[i].InstanceID)
			}
			clWantCode(t, "unknown group member "+m.MemberID, m.ErrorCode, kerr.UnknownMemberID)
		}
		v2 := kmsg.NewPtrLeaveGroupRequest()
		v2.Version, v2.Group, v2.MemberID = 2, "nope", "m"
		resp = coordtest.DoMeta(h, clMeta(2, "cli"), coordinator.LeaveGroup(v2)).Resp
		clWantCode(t, "unknown group v2", resp.ErrorCode, kerr.UnknownMemberID)
	})
}

func TestClassicStaticMemberReplacement(t *testing.T) {
	for _, v := range []int16{5, 9} {
		t.Run("v"+string(rune('0'+v)), func(t *testing.T) {
			h := clHarness()
			a, b := "inst-a", "inst-b"
			ca := clJoin(h, v, "", clInstance(a))
			oldA := clJoinResp(t, ca).MemberID // leader, generation 1
			cb := clJoin(h, v, "", clInstance(b))
			clJoinResp(t, clJoin(h, v, oldA, clInstance(a)))
			oldB := clJoinResp(t, cb).MemberID
			clSyncResp(t, clSync(h, 3, oldA, 2, &a, map[string]string{oldA: "pa", oldB: "pb"}), nil)
			clSyncResp(t, clSync(h, 3, oldB, 2, &b, nil), nil)
			clWantState(t, h, coordinator.ClassicStable)
			logLen := len(h.Log)

			// Follower b restarts: new member id, no rebalance, assignment kept.
			rb := clJoinResp(t, clJoin(h, v, "", clInstance(b)))
			newB := rb.MemberID
			if !strings.HasPrefix(newB, b+"-") {
				t.Fatalf("static member id %q does not start with its instance id", newB)
			}
			if rb.ErrorCode != 0 || newB == oldB || rb.Generation != 2 || rb.LeaderID != oldA || len(rb.Members) != 0 {
				t.Fatalf("static follower rejoin: %+v", rb)
			}
			clWantState(t, h, coordinator.ClassicStable)
			if len(h.Log) == logLen {
				t.Fatalf("static replacement was not persisted")
			}
			clWantCode(t, "old id fenced", clHeartbeat(h, oldB, 2, &b), kerr.FencedInstanceID)
			clWantCode(t, "new id", clHeartbeat(h, newB, 2, &b), nil)
			clSyncResp(t, clSync(h, 3, oldB, 2, &b, nil), kerr.FencedInstanceID)
			if got := clSyncResp(t, clSync(h, 3, newB, 2, &b, nil), nil).MemberAssignment; string(got) != "pb" {
				t.Fatalf("replaced member assignment %q", got)
			}

			// Leader a restarts: no rebalance either.
			ra := clJoinResp(t, clJoin(h, v, "", clInstance(a)))
			clWantState(t, h, coordinator.ClassicStable)
			if v >= 9 {
				if !ra.SkipAssignment || len(ra.Members) != 2 || ra.LeaderID != ra.MemberID {
					t.Fatalf("v9 static leader rejoin: %+v", ra)
				}
			} else if ra.SkipAssignment || len(ra.Members) != 0 || ra.LeaderID != oldA {
				t.Fatalf("v%d static leader rejoin: %+v", v, ra)
			}
			if clGroupOf(t, h).Leader() != ra.MemberID {
				t.Fatalf("leader id not moved to the new member id")
			}

			// A static member changing to a protocol the group cannot keep selecting rebalances.
			clJoin(h, v, "", clInstance(b), clProtos("roundrobin", "range"))
			clWantState(t, h, coordinator.ClassicStable) // range is still selected
			clJoin(h, v, "", clInstance(b), clProtos("range", "roundrobin"), clMetadata("changed"))
			clWantState(t, h, coordinator.ClassicStable)
		})
	}
	t.Run("completing rebalance fences the old sync and rebalances", func(t *testing.T) {
		h := clHarness()
		a := "inst-a"
		c := clJoin(h, 5, "", clInstance(a))
		old := clJoinResp(t, c).MemberID
		clWantState(t, h, coordinator.ClassicCompletingRebalance)
		// A follower-less leader's sync completes at once, so park a second member's sync.
		nb, cb := clJoinNew(t, h, 5)
		clJoinResp(t, clJoin(h, 5, old, clInstance(a)))
		clJoinResp(t, cb)
		sb := clSync(h, 3, nb, 2, nil, nil)
		rep := clJoin(h, 5, "", clInstance(a))
		clWantState(t, h, coordinator.ClassicPreparingRebalance)
		clSyncResp(t, sb, kerr.RebalanceInProgress)
		clWantCode(t, "old id", clHeartbeat(h, old, 2, &a), kerr.FencedInstanceID)
		clJoin(h, 5, nb)
		if r := clJoinResp(t, rep); r.Generation != 3 || r.MemberID == old {
			t.Fatalf("replacement join: %+v", r)
		}
	})
}

func TestClassicSessionExpiryRebalances(t *testing.T) {
	h := clHarness()
	ids, gen := clStable(t, h, 2)
	h.Advance(6 * time.Second)
	clWantCode(t, "a", clHeartbeat(h, ids[0], gen, nil), nil)
	h.Advance(5 * time.Second) // b: 11 s without a heartbeat (session 10 s)
	g := clGroupOf(t, h)
	if g.NumMembers() != 1 {
		t.Fatalf("members after expiry = %d", g.NumMembers())
	}
	clWantState(t, h, coordinator.ClassicPreparingRebalance)
	clWantCode(t, "expired member", clHeartbeat(h, ids[1], gen, nil), kerr.UnknownMemberID)
	clWantCode(t, "a in rebalance", clHeartbeat(h, ids[0], gen, nil), kerr.RebalanceInProgress)
	r := clJoinResp(t, clJoin(h, 5, ids[0]))
	if r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("rejoin after expiry: %+v", r)
	}
	// Nobody syncs: the sync timer (rebalance timeout 30 s) removes the member... but its
	// session is shorter: it expires first and the group empties.
	h.Advance(31 * time.Second)
	clWantState(t, h, coordinator.ClassicEmpty)
}

func TestClassicPendingSyncExpiry(t *testing.T) {
	h := clHarness()
	ids, gen := clStable(t, h, 1, clSession(60*time.Second), clRebalance(20*time.Second))
	b, cb := clJoinNew(t, h, 5, clSession(60*time.Second), clRebalance(20*time.Second))
	clJoin(h, 5, ids[0], clSession(60*time.Second), clRebalance(20*time.Second))
	clJoinResp(t, cb)
	// Only the leader syncs: the group is Stable, but b never syncs within the rebalance timeout.
	clSyncResp(t, clSync(h, 3, ids[0], gen+1, nil, map[string]string{ids[0]: "x", b: "y"}), nil)
	clWantState(t, h, coordinator.ClassicStable)
	h.Advance(21 * time.Second)
	clWantState(t, h, coordinator.ClassicPreparingRebalance)
	if n := clGroupOf(t, h).NumMembers(); n != 1 {
		t.Fatalf("members after pending-sync expiry = %d", n)
	}
}

func TestClassicInitialRebalanceDelay(t *testing.T) {
	t.Run("extended per new member", func(t *testing.T) {
		h := clHarness(func(c *coordinator.Config) { c.Classic.InitialRebalanceDelay = 3 * time.Second })
		ca := clJoin(h, 3, "")
		h.Advance(2 * time.Second)
		cb := clJoin(h, 3, "")
		h.Advance(1 * time.Second) // t=3 s: a member joined during the delay → extended
		if ca.Done() || cb.Done() {
			t.Fatalf("initial rebalance completed although a member joined during the delay")
		}
		h.Advance(2 * time.Second) // t=5 s
		if ca.Done() {
			t.Fatalf("completed before the extended delay")
		}
		h.Advance(1 * time.Second) // t=6 s
		if r := clJoinResp(t, ca); len(r.Members) != 2 {
			t.Fatalf("leader members %d", len(r.Members))
		}
		clJoinResp(t, cb)
	})
	t.Run("capped by the rebalance timeout", func(t *testing.T) {
		h := clHarness(func(c *coordinator.Config) { c.Classic.InitialRebalanceDelay = 3 * time.Second })
		opt := clRebalance(5 * time.Second)
		ca := clJoin(h, 3, "", opt)
		h.Advance(1 * time.Second)
		clJoin(h, 3, "", opt)
		h.Advance(2 * time.Second) // t=3: extended by min(3, 5-3)=2
		h.Advance(1 * time.Second) // t=4
		clJoin(h, 3, "", opt)
		if ca.Done() {
			t.Fatalf("completed before the rebalance timeout")
		}
		h.Advance(1 * time.Second) // t=5: nothing left to extend
		if r := clJoinResp(t, ca); len(r.Members) != 3 {
			t.Fatalf("leader members %d", len(r.Members))
		}
	})
	t.Run("joins complete early outside the initial rebalance", func(t *testing.T) {
		h := clHarness(func(c *coordinator.Config) { c.Classic.InitialRebalanceDelay = 3 * time.Second })
		ca := clJoin(h, 3, "")
		h.Advance(3 * time.Second)
		r := clJoinResp(t, ca)
		clSyncResp(t, clSync(h, 3, r.MemberID, r.Generation, nil, nil), nil)
		ca = clJoin(h, 3, r.MemberID) // leader rejoin: everyone joined, no delay
		clJoinResp(t, ca)
	})
}

// TestClassicJoinV0V1: JoinGroup v0–v1 are served again (KAFKA-19444): a v0 member has no
// rebalance timeout of its own, so its session timeout bounds the rebalance; v0–v3 need no
// member id round trip (MEMBER_ID_REQUIRED is v4+).
func TestClassicJoinV0V1(t *testing.T) {
	for _, v := range []int16{0, 1} {
		h := clHarness()
		r := clJoinResp(t, clJoin(h, v, ""))
		if r.ErrorCode != 0 || r.MemberID == "" || r.Generation != 1 || r.LeaderID != r.MemberID {
			t.Fatalf("v%d join: %+v", v, r)
		}
		if desc := h.St.Groups[clGroup]; desc == nil {
			t.Fatalf("v%d join created no group", v)
		}
	}
}

func TestClassicJoinValidation(t *testing.T) {
	h := clHarness()
	clWantJoinErr(t, clJoin(h, 5, "", clSession(5*time.Second)), kerr.InvalidSessionTimeout)
	clWantJoinErr(t, clJoin(h, 5, "", clSession(31*time.Minute)), kerr.InvalidSessionTimeout)
	clWantJoinErr(t, clJoin(h, 5, "someone"), kerr.UnknownMemberID) // known id, no group
	if _, ok := h.St.Groups[clGroup]; ok {
		t.Fatalf("a rejected join created the group")
	}
	// Kafka creates the group before ClassicGroup.supportsProtocols refuses the member (an
	// Empty group, removed by the expiry sweep when it gets no offsets).
	clWantJoinErr(t, clJoin(h, 5, "", func(r *kmsg.JoinGroupRequest) { r.ProtocolType = "" }), kerr.InconsistentGroupProtocol)
	clWantJoinErr(t, clJoin(h, 5, "", clProtos()), kerr.InconsistentGroupProtocol)
	clWantState(t, h, coordinator.ClassicEmpty)
	ids, _ := clStable(t, h, 1)
	clWantJoinErr(t, clJoin(h, 5, "", func(r *kmsg.JoinGroupRequest) { r.ProtocolType = "connect" }), kerr.InconsistentGroupProtocol)
	clWantJoinErr(t, clJoin(h, 5, "", clProtos("roundrobin")), kerr.InconsistentGroupProtocol)
	clWantJoinErr(t, clJoin(h, 5, ids[0], clProtos("roundrobin")), kerr.InconsistentGroupProtocol)
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 5
	clWantJoinErr(t, coordtest.DoMeta(h, clMeta(5, "cli"), coordinator.JoinGroup(req)), kerr.InvalidGroupID)
}

func TestClassicGroupMaxSize(t *testing.T) {
	h := clHarness(func(c *coordinator.Config) { c.Classic.MaxSize = 2 })
	clStable(t, h, 2)
	r := clWantJoinErr(t, clJoin(h, 5, ""), kerr.GroupMaxSizeReached)
	if r.MemberID != "" {
		t.Fatalf("GROUP_MAX_SIZE_REACHED with member id %q", r.MemberID)
	}
	r = clWantJoinErr(t, clJoin(h, 3, ""), kerr.GroupMaxSizeReached)
	clWantState(t, h, coordinator.ClassicStable)
	// The size is checked before the protocols (Kafka's classicGroupJoinToClassicGroup:
	// acceptJoiningMember, then supportsProtocols).
	clWantJoinErr(t, clJoin(h, 3, "", clProtos("roundrobin")), kerr.GroupMaxSizeReached)
	clWantJoinErr(t, clJoin(h, 3, "", func(r *kmsg.JoinGroupRequest) { r.ProtocolType = "" }), kerr.GroupMaxSizeReached)
}

// TestClassicJoinCheckOrder: JoinGroup looks the group up before it judges the protocols
// (Kafka's classicGroupJoinToClassicGroup): a member id for a group that does not exist is
// UNKNOWN_MEMBER_ID whatever its protocols, and a new member with no protocol type or no
// protocols creates the group (Empty) and is then refused INCONSISTENT_GROUP_PROTOCOL by
// ClassicGroup.supportsProtocols.
func TestClassicJoinCheckOrder(t *testing.T) {
	noType := func(r *kmsg.JoinGroupRequest) { r.ProtocolType = "" }
	h := clHarness()
	r := clWantJoinErr(t, clJoin(h, 5, "m-1", noType), kerr.UnknownMemberID)
	if r.MemberID != "m-1" {
		t.Fatalf("UNKNOWN_MEMBER_ID answered member id %q, want m-1", r.MemberID)
	}
	clWantJoinErr(t, clJoin(h, 5, "m-1", clProtos()), kerr.UnknownMemberID)
	if _, ok := h.St.Groups[clGroup]; ok {
		t.Fatalf("a join with an unknown member id created the group")
	}
	clWantJoinErr(t, clJoin(h, 5, "", noType), kerr.InconsistentGroupProtocol)
	clWantState(t, h, coordinator.ClassicEmpty)
	clWantJoinErr(t, clJoin(h, 3, "", clProtos()), kerr.InconsistentGroupProtocol)
	clWantState(t, h, coordinator.ClassicEmpty)
}

func clCommit(h *coordtest.Harness, v int16, member string, gen int32, instance *string) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = v
	req.Group = clGroup
	req.MemberID = member
	req.Generation = gen
	req.InstanceID = instance
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 42
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := coordtest.DoMeta(h, clMeta(v, "cli"), coordinator.OffsetCommit(req)).Resp
	return resp.Topics[0].Partitions[0].ErrorCode
}

func TestClassicOffsetCommitGenerationValidation(t *testing.T) {
	h := clHarness()
	// Unknown group.
	clWantCode(t, "unknown group v8", clCommit(h, 8, "m", 1, nil), kerr.IllegalGeneration)
	clWantCode(t, "unknown group v9", clCommit(h, 9, "m", 1, nil), kerr.GroupIDNotFound)
	clWantCode(t, "unknown group admin", clCommit(h, 8, "", -1, nil), nil)
	// Empty simple group.
	clWantState(t, h, coordinator.ClassicEmpty)
	clWantCode(t, "empty admin", clCommit(h, 8, "", -1, nil), nil)
	clWantCode(t, "empty with member", clCommit(h, 8, "m", 0, nil), kerr.UnknownMemberID)

	h = clHarness()
	ids, gen := clStable(t, h, 2)
	a, b := ids[0], ids[1]
	// Stable.
	clWantCode(t, "stable", clCommit(h, 8, a, gen, nil), nil)
	clWantCode(t, "stable wrong generation", clCommit(h, 8, a, gen+1, nil), kerr.IllegalGeneration)
	clWantCode(t, "stable unknown member", clCommit(h, 8, "x", gen, nil), kerr.UnknownMemberID)
	clWantCode(t, "stable no identity", clCommit(h, 8, "", -1, nil), kerr.UnknownMemberID)
	inst := "nope"
	clWantCode(t, "stable unknown instance", clCommit(h, 8, a, gen, &inst), kerr.UnknownMemberID)
	// PreparingRebalance: the current (old) generation still commits.
	ja := clJoin(h, 5, a)
	clWantState(t, h, coordinator.ClassicPreparingRebalance)
	clWantCode(t, "preparing", clCommit(h, 8, b, gen, nil), nil)
	clWantCode(t, "preparing wrong generation", clCommit(h, 8, b, gen+1, nil), kerr.IllegalGeneration)
	// CompletingRebalance: REBALANCE_IN_PROGRESS for the new generation.
	clJoin(h, 5, b)
	clJoinResp(t, ja)
	clWantState(t, h, coordinator.ClassicCompletingRebalance)
	clWantCode(t, "completing", clCommit(h, 8, b, gen+1, nil), kerr.RebalanceInProgress)
	clWantCode(t, "completing old generation", clCommit(h, 8, b, gen, nil), kerr.IllegalGeneration)
	// Empty again after everybody left: only generation-less commits.
	for _, m := range []string{a, b} {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group, req.MemberID = 2, clGroup, m
		coordtest.DoMeta(h, clMeta(2, "cli"), coordinator.LeaveGroup(req))
	}
	clWantState(t, h, coordinator.ClassicEmpty)
	clWantCode(t, "empty after leave, old member", clCommit(h, 8, b, gen+1, nil), kerr.UnknownMemberID)
	clWantCode(t, "empty after leave, admin", clCommit(h, 9, "", -1, nil), nil)
}

func TestClassicRestartRearmsSessionsAndRebalancesOverCapacity(t *testing.T) {
	t.Run("stale member expires after restart", func(t *testing.T) {
		h := clHarness()
		ids, gen := clStable(t, h, 2)
		if err := h.Restart(1); err != nil {
			t.Fatal(err)
		}
		clWantState(t, h, coordinator.ClassicStable)
		if g := clGroupOf(t, h); g.Generation() != gen || g.Leader() != ids[0] || g.NumMembers() != 2 {
			t.Fatalf("reloaded group: generation %d leader %q members %d", g.Generation(), g.Leader(), g.NumMembers())
		}
		// The assignment survives the restart.
		if got := clSyncResp(t, clSync(h, 3, ids[1], gen, nil, nil), nil).MemberAssignment; string(got) != "a-"+ids[1] {
			t.Fatalf("assignment after restart %q", got)
		}
		h.Advance(6 * time.Second)
		clWantCode(t, "a", clHeartbeat(h, ids[0], gen, nil), nil)
		h.Advance(6 * time.Second) // b's re-armed session (10 s from its sync) expires
		clWantState(t, h, coordinator.ClassicPreparingRebalance)
		if r := clJoinResp(t, clJoin(h, 5, ids[0])); r.Generation != gen+1 || len(r.Members) != 1 {
			t.Fatalf("rejoin: %+v", r)
		}
	})
	t.Run("over group.max.size after restart", func(t *testing.T) {
		h := clHarness()
		ids, gen := clStable(t, h, 3)
		h.St.Cfg.Classic.MaxSize = 2
		if err := h.Restart(2); err != nil {
			t.Fatal(err)
		}
		clWantState(t, h, coordinator.ClassicPreparingRebalance)
		c0 := clJoin(h, 5, ids[0])
		c1 := clJoin(h, 5, ids[1])
		r := clWantJoinErr(t, clJoin(h, 5, ids[2]), kerr.GroupMaxSizeReached)
		if r.MemberID != "" {
			t.Fatalf("turned-away member got id %q", r.MemberID)
		}
		// The turned-away member was removed, so the join completes with the two others.
		r0, r1 := clJoinResp(t, c0), clJoinResp(t, c1)
		if r0.Generation != gen+1 || len(r0.Members)+len(r1.Members) != 2 {
			t.Fatalf("join after over-capacity restart: %+v / %+v", r0, r1)
		}
	})
}

// A protocol with empty metadata is still a supported protocol.
func TestClassicEmptyProtocolMetadata(t *testing.T) {
	h := clHarness()
	ids, _ := clStable(t, h, 1, clMetadata(""))
	c := clJoin(h, 3, "", clMetadata(""))
	if c.Done() {
		t.Fatalf("new member answered before the rebalance: %+v", c.Resp)
	}
	clJoin(h, 5, ids[0], clMetadata(""))
	if r := clJoinResp(t, c); r.ErrorCode != 0 || r.Protocol == nil || *r.Protocol != "range" {
		t.Fatalf("join with empty metadata: %+v", r)
	}
}

// TestClassicCommitSession: a plain OffsetCommit of a member of a Stable group keeps its session
// alive, a TxnOffsetCommit does not (Kafka's OffsetMetadataManager.commitOffset reschedules the
// member's heartbeat, commitTransactionalOffset does not).
func TestClassicCommitSession(t *testing.T) {
	for _, txn := range []bool{false, true} {
		h := clHarness()
		ids, gen := clStable(t, h, 2)
		h.Advance(6 * time.Second)
		clWantCode(t, "a", clHeartbeat(h, ids[0], gen, nil), nil)
		if txn {
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.Version, req.TransactionalID, req.Group = 3, "tx", clGroup
			req.ProducerID, req.ProducerEpoch, req.Generation, req.MemberID = 7, 0, gen, ids[1]
			req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
			resp := coordtest.Do(h, coordinator.TxnOffsetCommit(req)).Resp
			clWantCode(t, "txn commit", resp.Topics[0].Partitions[0].ErrorCode, nil)
		} else {
			clWantCode(t, "commit", clCommit(h, 8, ids[1], gen, nil), nil)
		}
		h.Advance(5 * time.Second) // b: 11 s since its last heartbeat (session 10 s)
		want := 2
		if txn {
			want = 1
		}
		if n := clGroupOf(t, h).NumMembers(); n != want {
			t.Errorf("txn=%v: %d members 11 s after b's last heartbeat, want %d", txn, n, want)
		}
	}
}
