package coordinator

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func strp(s string) *string { return &s }

func TestCGHeartbeatValidation(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 3)
	type tc struct {
		name string
		mod  func(r *kmsg.ConsumerGroupHeartbeatRequest)
		code *kerr.Error
		msg  string
	}
	cases := []tc{
		{"v1 empty member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest, "MemberId can't be empty."},
		{"v0 leave empty member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Version, r.MemberID, r.MemberEpoch = 0, "", -1
		}, kerr.InvalidRequest, "MemberId can't be empty."},
		{"empty group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "" }, kerr.InvalidRequest, "GroupId can't be empty."},
		{"empty instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = strp("") }, kerr.InvalidRequest, "InstanceId can't be empty."},
		{"empty rack", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RackID = strp("") }, kerr.InvalidRequest, "RackId can't be empty."},
		// Kafka's Utils.throwIfEmptyString trims first: an id of only whitespace is empty.
		{"blank member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = " \t" }, kerr.InvalidRequest, "MemberId can't be empty."},
		{"blank group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "  " }, kerr.InvalidRequest, "GroupId can't be empty."},
		{"blank instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = strp(" ") }, kerr.InvalidRequest, "InstanceId can't be empty."},
		{"blank rack", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RackID = strp("\n") }, kerr.InvalidRequest, "RackId can't be empty."},
		{"no rebalance timeout", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."},
		{"null owned on join", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = nil }, kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."},
		{"owned on join", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{Partitions: []int32{0}}}
		}, kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."},
		{"no subscription", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, kerr.InvalidRequest,
			"Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."},
		{"-2 without instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -2 }, kerr.InvalidRequest, "InstanceId can't be null."},
		{"epoch -3", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -3 }, kerr.InvalidRequest, "MemberEpoch is invalid."},
		{"unsupported assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = strp("sticky") }, kerr.UnsupportedAssignor,
			"ServerAssignor sticky is not supported. Supported assignors: uniform, range."},
		{"invalid regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames = nil
			r.SubscribedTopicRegex = strp("(")
		}, kerr.InvalidRegularExpression, "SubscribedTopicRegex `(` is not a valid regular expression: missing closing )."},
		// Invalid on its own, though valid once wrapped for a full match: Kafka compiles the
		// regex as given (Utils.throwIfRegularExpressionIsInvalid, RE2/J).
		{"unbalanced regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames = nil
			r.SubscribedTopicRegex = strp("a)|(b")
		}, kerr.InvalidRegularExpression, "SubscribedTopicRegex `a)|(b` is not a valid regular expression: unexpected )."},
		{"unknown group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = 3 }, kerr.GroupIDNotFound, "Consumer group g not found."},
		// A leave looks the group up as GroupMetadataManager.consumerGroup does: "Group %s not found.".
		{"leave unknown group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -1 }, kerr.GroupIDNotFound, "Group g not found."},
		{"static leave unknown group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch, r.InstanceID = -2, strp("i") }, kerr.GroupIDNotFound, "Group g not found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := joinReq("g", "m1", "t")
			c.mod(r)
			resp := h.hb(r)
			if resp.ErrorCode != c.code.Code {
				t.Fatalf("code %d, want %d (%s); message %s", resp.ErrorCode, c.code.Code, c.code.Message, deref(resp.ErrorMessage))
			}
			if c.msg != "" && deref(resp.ErrorMessage) != c.msg {
				t.Fatalf("message %q, want %q", deref(resp.ErrorMessage), c.msg)
			}
		})
	}
	if len(h.st.Groups) != 0 || len(h.records) != 0 {
		t.Fatalf("failed requests left state: %v groups, %d records", sortedKeys(h.st.Groups), len(h.records))
	}
}

func TestCGMemberErrors(t *testing.T) {
	h := newCGHarness(t, "group.consumer.max.size=2")
	tid := h.topics.Add("t", 4)
	a := h.joinClient("g", "a", "t")
	if a.epoch != 1 || countTP(a.owned) != 4 {
		t.Fatalf("a: epoch %d owned %v", a.epoch, a.owned)
	}
	check := func(name string, r *kmsg.ConsumerGroupHeartbeatRequest, code *kerr.Error, msg string) {
		t.Helper()
		resp := h.hb(r)
		if resp.ErrorCode != code.Code || (msg != "" && deref(resp.ErrorMessage) != msg) {
			t.Fatalf("%s: got %d %q, want %d %q", name, resp.ErrorCode, deref(resp.ErrorMessage), code.Code, msg)
		}
	}
	check("unknown member", hbReq("g", "zz", 1, nil), kerr.UnknownMemberID, "Member zz is not a member of group g.")
	check("greater epoch", hbReq("g", "a", 5, a.owned), kerr.FencedMemberEpoch,
		"The consumer group member has a greater member epoch (5) than the one known by the group coordinator (1). The member must abandon all its partitions and rejoin.")
	check("smaller epoch", hbReq("g", "a", -0+0, nil), kerr.InvalidRequest, "")
	// A second member joins: group epoch 2; a stays at 1 until it revokes.
	b := h.joinClient("g", "b", "t")
	_ = b
	check("smaller epoch not previous", func() *kmsg.ConsumerGroupHeartbeatRequest {
		h.beat(a) // a is asked to revoke
		h.beat(a) // a revoked → epoch 2
		return hbReq("g", "a", 1, tp(tid, []int32{0, 1, 2, 3}))
	}(), kerr.FencedMemberEpoch, "")
	check("group full", joinReq("g", "c", "t"), kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of 2 members.")
	// An existing member may still rejoin a full group.
	if resp := h.hb(joinReq("g", "a", "t")); resp.ErrorCode != 0 {
		t.Fatalf("rejoin of a full group: %d", resp.ErrorCode)
	}
	check("leave unknown member", hbReq("g", "zz", -1, nil), kerr.UnknownMemberID, "Member zz is not a member of group g.")
}

func TestCGPreviousEpochAccepted(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	a := h.joinClient("g", "a", "t")
	b := h.joinClient("g", "b", "t")
	clients := []*cgClient{a, b}
	h.settle("g", clients)
	g := h.group("g")
	cur := g.current("a")
	if cur.prevEpoch >= cur.epoch {
		t.Fatalf("a epochs %d/%d", cur.epoch, cur.prevEpoch)
	}
	// The response with the bumped epoch was lost: the previous epoch with owned ⊆ assigned is fine.
	resp := h.hb(hbReq("g", "a", cur.prevEpoch, cur.assigned))
	if resp.ErrorCode != 0 || resp.MemberEpoch != cur.epoch {
		t.Fatalf("previous epoch: %d epoch %d", resp.ErrorCode, resp.MemberEpoch)
	}
}

func TestCGV0ServerGeneratedMemberID(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 2)
	r := joinReq("g", "", "t")
	r.Version = 0
	resp := h.hb(r)
	if resp.ErrorCode != 0 || resp.MemberID == nil || len(*resp.MemberID) != 22 || resp.MemberEpoch != 1 {
		t.Fatalf("v0 join: %+v", resp)
	}
	if resp.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("heartbeat interval %d", resp.HeartbeatIntervalMillis)
	}
}

func TestCGJoinLeaveAndReconciliation(t *testing.T) {
	h := newCGHarness(t)
	tid := h.topics.Add("t", 6)
	a := h.joinClient("g", "a", "t")
	if a.epoch != 1 || !equalTP(a.owned, tp(tid, []int32{0, 1, 2, 3, 4, 5})) {
		t.Fatalf("a: %d %v", a.epoch, a.owned)
	}
	g := h.group("g")
	if g.StateName() != ConsumerStateStable || g.GroupEpoch() != 1 || g.AssignmentEpoch() != 1 {
		t.Fatalf("group: %s %d %d", g.StateName(), g.GroupEpoch(), g.AssignmentEpoch())
	}
	b := h.joinClient("g", "b", "t")
	// b's partitions are still owned by a: b gets nothing yet and waits (UNRELEASED_PARTITIONS).
	if countTP(b.owned) != 0 || b.epoch != 2 {
		t.Fatalf("b: %d %v", b.epoch, b.owned)
	}
	if _, st, _ := g.MemberEpoch("b"); st != MemberUnreleasedPartitions {
		t.Fatalf("b state %v", st)
	}
	// a must first revoke: it stays at epoch 1 with three partitions pending revocation.
	resp := h.beat(a)
	if resp.MemberEpoch != 1 || countTP(a.owned) != 3 {
		t.Fatalf("a revoke step: %d %v", resp.MemberEpoch, a.owned)
	}
	if _, st, _ := g.MemberEpoch("a"); st != MemberUnrevokedPartitions {
		t.Fatalf("a state %v", st)
	}
	if !h.st.Timers.Has(rebalanceTimeoutKey("g", "a")) {
		t.Fatalf("rebalance timeout not armed")
	}
	// b heartbeats before a acknowledged the revocation: still nothing.
	h.beat(b)
	if countTP(b.owned) != 0 {
		t.Fatalf("b got partitions a still owns: %v", b.owned)
	}
	// a acknowledges → epoch 2, then b gets its partitions.
	h.beat(a)
	if a.epoch != 2 || h.st.Timers.Has(rebalanceTimeoutKey("g", "a")) {
		t.Fatalf("a after revoke: %d", a.epoch)
	}
	h.beat(b)
	if countTP(b.owned) != 3 {
		t.Fatalf("b after release: %v", b.owned)
	}
	checkNoDoubleOwnership(t, []*cgClient{a, b})
	if g.StateName() != ConsumerStateStable {
		t.Fatalf("state %s", g.StateName())
	}
	// b leaves: epoch bump, its partitions go back to a.
	resp = h.hb(hbReq("g", "b", -1, nil))
	if resp.ErrorCode != 0 || resp.MemberEpoch != -1 || deref(resp.MemberID) != "b" {
		t.Fatalf("leave: %+v", resp)
	}
	b.gone = true
	if g.GroupEpoch() != 3 || g.NumMembers() != 1 {
		t.Fatalf("after leave: epoch %d members %d", g.GroupEpoch(), g.NumMembers())
	}
	h.beat(a)
	if countTP(a.owned) != 6 || a.epoch != 3 {
		t.Fatalf("a after b left: %d %v", a.epoch, a.owned)
	}
	if h.st.Metrics.ConsumerRebalances != 3 {
		t.Fatalf("rebalances %d", h.st.Metrics.ConsumerRebalances)
	}
	h.checkReplayEquivalence(1)
}

func TestCGThreeMembersSixPartitions(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 6)
	var clients []*cgClient
	for _, id := range []string{"m1", "m2", "m3"} {
		clients = append(clients, h.joinClient("g", id, "t"))
		checkNoDoubleOwnership(t, clients)
		h.settle("g", clients)
	}
	for _, c := range clients {
		if countTP(c.owned) != 2 {
			t.Fatalf("%s owns %v", c.id, c.owned)
		}
	}
	// m2 leaves; m1 and m3 share its partitions without double ownership.
	h.hb(hbReq("g", "m2", -1, nil))
	clients[1].gone = true
	h.settle("g", clients)
	total := 0
	for _, c := range clients {
		if !c.gone {
			if countTP(c.owned) != 3 {
				t.Fatalf("%s owns %v", c.id, c.owned)
			}
			total += countTP(c.owned)
		}
	}
	if total != 6 {
		t.Fatalf("total %d", total)
	}
	h.checkReplayEquivalence(2)
	h.checkReplayEquivalence(3)
}

func TestCGSessionTimeoutFencing(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 6)
	a := h.joinClient("g", "a", "t")
	b := h.joinClient("g", "b", "t")
	clients := []*cgClient{a, b}
	h.settle("g", clients)
	g := h.group("g")
	epoch := g.GroupEpoch()
	// a keeps heartbeating, b goes silent.
	for i := 0; i < 5; i++ {
		h.advance(10 * time.Second)
		h.beat(a)
	}
	if g.NumMembers() != 1 || g.GroupEpoch() != epoch+1 {
		t.Fatalf("b not fenced: members %d epoch %d", g.NumMembers(), g.GroupEpoch())
	}
	b.gone = true
	h.settle("g", clients)
	if countTP(a.owned) != 6 {
		t.Fatalf("a owns %v", a.owned)
	}
	// A fenced member's heartbeat is UNKNOWN_MEMBER_ID.
	if resp := h.hb(hbReq("g", "b", b.epoch, b.owned)); resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("fenced member heartbeat: %d", resp.ErrorCode)
	}
	h.checkReplayEquivalence(4)
}

func TestCGRebalanceTimeoutFencing(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	a := h.joinClient("g", "a", "t")
	h.joinClient("g", "b", "t")
	// a learns it must revoke, then keeps heartbeating while still owning everything.
	h.hb(hbReq("g", "a", a.epoch, a.owned))
	for i := 0; i < 4; i++ {
		h.advance(10 * time.Second)
		resp := h.hb(hbReq("g", "a", a.epoch, a.owned))
		if i == 3 {
			if resp.ErrorCode != kerr.UnknownMemberID.Code {
				t.Fatalf("a not fenced after its rebalance timeout: %d", resp.ErrorCode)
			}
		}
	}
	h.checkReplayEquivalence(5)
}

func TestCGStaticTemporaryLeaveAndRejoin(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	join := func(member string) *kmsg.ConsumerGroupHeartbeatResponse {
		r := joinReq("g", member, "t")
		r.InstanceID = strp("i1")
		return h.hb(r)
	}
	resp := join("m1")
	if resp.ErrorCode != 0 || resp.MemberEpoch != 1 || countTP(respTP(resp.Assignment)) != 4 {
		t.Fatalf("static join: %+v", resp)
	}
	owned := respTP(resp.Assignment)
	if resp := join("m2"); resp.ErrorCode != kerr.UnreleasedInstanceID.Code ||
		deref(resp.ErrorMessage) != "Static member m2 with instance id i1 cannot join the group because the instance id is owned by m1 member." {
		t.Fatalf("unreleased: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	g := h.group("g")
	n := len(h.records)
	leave := hbReq("g", "m1", -2, nil)
	leave.InstanceID = strp("i1")
	resp = h.hb(leave)
	if resp.ErrorCode != 0 || resp.MemberEpoch != -2 || deref(resp.MemberID) != "m1" {
		t.Fatalf("temporary leave: %+v", resp)
	}
	if len(h.records)-n != 1 || g.GroupEpoch() != 1 {
		t.Fatalf("temporary leave wrote %d records, epoch %d", len(h.records)-n, g.GroupEpoch())
	}
	// Rejoin under a new member id: same assignment, no epoch bump.
	resp = join("m2")
	if resp.ErrorCode != 0 || resp.MemberEpoch != 1 || !equalTP(respTP(resp.Assignment), owned) {
		t.Fatalf("rejoin: %d epoch %d %v", resp.ErrorCode, resp.MemberEpoch, resp.Assignment)
	}
	if g.GroupEpoch() != 1 || g.NumMembers() != 1 {
		t.Fatalf("after rejoin: epoch %d members %v", g.GroupEpoch(), g.MemberIDs())
	}
	// The old member id is fenced.
	stale := hbReq("g", "m1", 1, owned)
	stale.InstanceID = strp("i1")
	if resp := h.hb(stale); resp.ErrorCode != kerr.FencedInstanceID.Code ||
		deref(resp.ErrorMessage) != "Static member m1 with instance id i1 was fenced by member m2." {
		t.Fatalf("fenced instance: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	unknown := hbReq("g", "m9", 1, owned)
	unknown.InstanceID = strp("i9")
	if resp := h.hb(unknown); resp.ErrorCode != kerr.UnknownMemberID.Code || deref(resp.ErrorMessage) != "Instance id i9 is unknown." {
		t.Fatalf("unknown instance: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	// Leaving with -1 fences the static member and bumps the epoch.
	leave = hbReq("g", "m2", -1, nil)
	leave.InstanceID = strp("i1")
	if resp := h.hb(leave); resp.ErrorCode != 0 || g.GroupEpoch() != 2 || !g.IsEmpty() {
		t.Fatalf("static leave: %d epoch %d", resp.ErrorCode, g.GroupEpoch())
	}
	if g.StateName() != ConsumerStateEmpty {
		t.Fatalf("state %s", g.StateName())
	}
	h.checkReplayEquivalence(6)
}

func TestCGClassicGroupInterplay(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 2)
	// A simple classic group (offset commits only) is replaced on join.
	run(h, func(st *State, c *Call[Ack]) {
		defer c.Reply(st, Ack{})
		st.WriteOffset("g", "t", 0, &OffsetValue{Offset: 5, LeaderEpoch: -1, CommitMs: st.Now.UnixMilli()})
	})
	if _, ok := h.st.Groups["g"].(*ClassicGroup); !ok {
		t.Fatalf("no simple group")
	}
	if resp := h.hb(joinReq("g", "a", "t")); resp.ErrorCode != 0 {
		t.Fatalf("join over empty classic: %d", resp.ErrorCode)
	}
	if h.group("g") == nil {
		t.Fatalf("not replaced")
	}
	h.checkReplayEquivalence(7)
	// A non-empty classic group keeps its id.
	cg := newSimpleClassicGroup("c")
	cg.state = ClassicStable
	cg.members["x"] = &classicMember{id: "x"}
	h.st.Groups["c"] = cg
	if resp := h.hb(joinReq("c", "a", "t")); resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("join over non-empty classic: %d", resp.ErrorCode)
	}
	if resp := h.hb(hbReq("c", "a", 1, nil)); resp.ErrorCode != kerr.GroupIDNotFound.Code || deref(resp.ErrorMessage) != "Group c is not a consumer group." {
		t.Fatalf("heartbeat to classic: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	// A classic join to an empty consumer group replaces it.
	h.hb(hbReq("g", "a", -1, nil))
	jr := kmsg.NewPtrJoinGroupRequest()
	jr.Version = 9
	jr.Group = "g"
	jr.SessionTimeoutMillis = 10000
	jr.RebalanceTimeoutMillis = 10000
	jr.ProtocolType = "consumer"
	jr.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	run(h, JoinGroup(jr))
	if _, ok := h.st.Groups["g"].(*ClassicGroup); !ok {
		t.Fatalf("empty consumer group not replaced by a classic join: %T", h.st.Groups["g"])
	}
}

func TestCGServerAssignorPreference(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	h.topics.Add("u", 4)
	r := joinReq("g", "a", "t", "u")
	r.ServerAssignor = strp("range")
	h.hb(r)
	g := h.group("g")
	if got := g.preferredAssignor(h.st); got != "range" {
		t.Fatalf("assignor %s", got)
	}
	epoch := g.GroupEpoch()
	// A member preferring uniform ties 1:1 → ties go to the name order ("range").
	r = joinReq("g", "b", "t", "u")
	r.ServerAssignor = strp("uniform")
	h.hb(r)
	r = joinReq("g", "c", "t", "u")
	r.ServerAssignor = strp("uniform")
	h.hb(r)
	if got := g.preferredAssignor(h.st); got != "uniform" || g.GroupEpoch() <= epoch {
		t.Fatalf("assignor %s epoch %d", got, g.GroupEpoch())
	}
	resp := run(h, ConsumerGroupDescribe([]string{"g"}, 1))
	if resp[0].AssignorName != "uniform" {
		t.Fatalf("describe assignor %s", resp[0].AssignorName)
	}
}
