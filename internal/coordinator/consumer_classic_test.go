package coordinator

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cgClassicClient models a cooperative classic consumer inside a consumer group: it owns the
// partitions of its last SyncGroup assignment (by topic name).
type cgClassicClient struct {
	group, id  string
	generation int32
	protocol   string
	owned      map[string][]int32
}

func classicJoinReq(group, member string, owned map[string][]int32, topics ...string) *kmsg.JoinGroupRequest {
	md := kmsg.NewConsumerMemberMetadata()
	md.Version = 3
	md.Topics = topics
	for _, t := range sortedKeys(owned) {
		md.OwnedPartitions = append(md.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: t, Partitions: owned[t]})
	}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group = group
	req.MemberID = member
	req.SessionTimeoutMillis = 30000
	req.RebalanceTimeoutMillis = 20000
	req.ProtocolType = "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky", Metadata: md.AppendTo(nil)}}
	return req
}

// classicJoinSync runs JoinGroup (answering MEMBER_ID_REQUIRED) then SyncGroup.
func (h *cgHarness) classicJoinSync(c *cgClassicClient, topics ...string) {
	h.t.Helper()
	for i := 0; i < 2; i++ {
		resp := run(h, JoinGroup(classicJoinReq(c.group, c.id, c.owned, topics...)))
		if resp.ErrorCode == kerr.MemberIDRequired.Code && c.id == "" {
			c.id = resp.MemberID
			continue
		}
		if resp.ErrorCode != 0 {
			h.t.Fatalf("classic join: error %d", resp.ErrorCode)
		}
		if resp.LeaderID != "" || len(resp.Members) != 0 || resp.Protocol == nil || *resp.ProtocolType != "consumer" {
			h.t.Fatalf("classic join response: %+v", resp)
		}
		c.generation, c.protocol = resp.Generation, *resp.Protocol
		break
	}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Version = 5
	sreq.Group, sreq.MemberID, sreq.Generation = c.group, c.id, c.generation
	pt, pn := "consumer", c.protocol
	sreq.ProtocolType, sreq.Protocol = &pt, &pn
	sresp := run(h, SyncGroup(sreq))
	if sresp.ErrorCode != 0 {
		h.t.Fatalf("classic sync: error %d", sresp.ErrorCode)
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(sresp.MemberAssignment); err != nil {
		h.t.Fatalf("assignment bytes: %v", err)
	}
	c.owned = map[string][]int32{}
	for _, t := range a.Topics {
		ps := append([]int32{}, t.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		c.owned[t.Topic] = ps
	}
}

func (h *cgHarness) classicHeartbeat(c *cgClassicClient) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation = c.group, c.id, c.generation
	return run(h, Heartbeat(req)).ErrorCode
}

// TestCGClassicMemberJoinsConsumerGroup: a classic member joins a non-empty consumer group,
// receives a server-computed assignment as ConsumerProtocol bytes in SyncGroup, is told to rejoin
// by Heartbeat while it must catch up, never overlaps the consumer member, and leaves with
// LeaveGroup; the records replay to the same state.
func TestCGClassicMemberJoinsConsumerGroup(t *testing.T) {
	h := newCGHarness(t)
	t1 := h.topics.Add("t1", 4)
	a := h.joinClient("g", "a", "t1")
	h.settle("g", []*cgClient{a})
	if countTP(a.owned) != 4 {
		t.Fatalf("a owns %v", a.owned)
	}

	cl := &cgClassicClient{group: "g"}
	h.classicJoinSync(cl, "t1")
	if cl.id == "" || cl.generation != 2 {
		t.Fatalf("classic member: id %q generation %d", cl.id, cl.generation)
	}
	g := h.group("g")
	if g.NumMembers() != 2 || g.GroupEpoch() != 2 {
		t.Fatalf("group: %d members, epoch %d", g.NumMembers(), g.GroupEpoch())
	}
	// a still owns everything: the classic member waits for a's revocation.
	if len(cl.owned["t1"]) != 0 {
		t.Fatalf("classic member got %v while a owns %v", cl.owned, a.owned)
	}
	if code := h.classicHeartbeat(cl); code != 0 {
		// UNRELEASED while a still owns the partitions: no rejoin needed yet.
		t.Fatalf("heartbeat before release: %d", code)
	}
	h.beat(a) // a revokes two partitions
	h.beat(a)
	if countTP(a.owned) != 2 {
		t.Fatalf("a after revocation: %v", a.owned)
	}
	if code := h.classicHeartbeat(cl); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after release: %d, want REBALANCE_IN_PROGRESS", code)
	}
	h.classicJoinSync(cl, "t1")
	if len(cl.owned["t1"]) != 2 {
		t.Fatalf("classic member after rejoin: %v", cl.owned)
	}
	for _, p := range cl.owned["t1"] {
		if containsPartition(a.owned[t1], p) {
			t.Fatalf("partition %d owned by both", p)
		}
	}
	if code := h.classicHeartbeat(cl); code != 0 {
		t.Fatalf("stable heartbeat: %d", code)
	}
	if g.StateName() != ConsumerStateStable {
		t.Fatalf("state %s", g.StateName())
	}
	// Describe reports the classic member type.
	d := run(h, ConsumerGroupDescribe([]string{"g"}, 1))
	types := map[string]int8{}
	for _, m := range d[0].Members {
		types[m.MemberID] = m.MemberType
	}
	if types["a"] != 1 || types[cl.id] != 0 {
		t.Fatalf("member types %v", types)
	}
	h.checkReplayEquivalence(3)

	// Errors: wrong generation, consumer member on the classic path, bad protocol type.
	bad := &cgClassicClient{group: "g", id: cl.id, generation: cl.generation + 5}
	if code := h.classicHeartbeat(bad); code != kerr.IllegalGeneration.Code {
		t.Fatalf("wrong generation: %d", code)
	}
	if code := h.classicHeartbeat(&cgClassicClient{group: "g", id: "a", generation: a.epoch}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("consumer member heartbeat via classic: %d", code)
	}
	wrong := classicJoinReq("g", "", nil, "t1")
	wrong.ProtocolType = "connect"
	if resp := run(h, JoinGroup(wrong)); resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("connect protocol type: %d", resp.ErrorCode)
	}

	// The classic member leaves: a takes everything back.
	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Version = 5
	lreq.Group = "g"
	lreq.Members = []kmsg.LeaveGroupRequestMember{{MemberID: cl.id}, {MemberID: "nobody"}}
	lresp := run(h, LeaveGroup(lreq))
	if len(lresp.Members) != 2 || lresp.Members[0].ErrorCode != 0 || lresp.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave: %+v", lresp)
	}
	h.settle("g", []*cgClient{a})
	if countTP(a.owned) != 4 || h.group("g").NumMembers() != 1 {
		t.Fatalf("after leave: a owns %v", a.owned)
	}
	h.checkReplayEquivalence(4)
}

// TestCGClassicMemberSessionTimeout: a classic member that stops heartbeating is fenced after
// its JoinGroup session timeout.
func TestCGClassicMemberSessionTimeout(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t1", 4)
	a := h.joinClient("g", "a", "t1")
	h.settle("g", []*cgClient{a})
	cl := &cgClassicClient{group: "g"}
	h.classicJoinSync(cl, "t1")
	h.advance(20 * time.Second)
	h.beat(a)
	if h.group("g").NumMembers() != 2 {
		t.Fatal("fenced too early")
	}
	h.advance(11 * time.Second)
	if n := h.group("g").NumMembers(); n != 1 {
		t.Fatalf("%d members after the classic session timeout", n)
	}
}

// classicGroupWithLeader creates a classic group with one cooperative member that owns every
// partition of t1 (JoinGroup ×2 for MEMBER_ID_REQUIRED, then the leader's SyncGroup).
func (h *cgHarness) classicGroupWithLeader(group string, parts int32) *cgClassicClient {
	h.t.Helper()
	cl := &cgClassicClient{group: group}
	resp := run(h, JoinGroup(classicJoinReq(group, "", nil, "t1")))
	if resp.ErrorCode != kerr.MemberIDRequired.Code {
		h.t.Fatalf("first join: %d", resp.ErrorCode)
	}
	cl.id = resp.MemberID
	resp = run(h, JoinGroup(classicJoinReq(group, cl.id, nil, "t1")))
	if resp.ErrorCode != 0 || resp.LeaderID != cl.id {
		h.t.Fatalf("second join: %+v", resp)
	}
	cl.generation, cl.protocol = resp.Generation, *resp.Protocol
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 3
	all := make([]int32, parts)
	for i := range all {
		all[i] = int32(i)
	}
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t1", Partitions: all}}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Version = 5
	sreq.Group, sreq.MemberID, sreq.Generation = group, cl.id, cl.generation
	pt, pn := "consumer", cl.protocol
	sreq.ProtocolType, sreq.Protocol = &pt, &pn
	sreq.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: cl.id, MemberAssignment: a.AppendTo(nil)}}
	if sresp := run(h, SyncGroup(sreq)); sresp.ErrorCode != 0 {
		h.t.Fatalf("leader sync: %d", sresp.ErrorCode)
	}
	cl.owned = map[string][]int32{"t1": all}
	return cl
}

// TestCGOnlineUpgradeAndDowngrade: a consumer-protocol join converts a non-empty classic group
// (its member keeps its partitions at the classic generation, then revokes half through a
// classic rejoin); when the consumer-protocol member leaves, the group becomes a classic group
// again and its member rejoins it. Records replay to the same state at each step.
func TestCGOnlineUpgradeAndDowngrade(t *testing.T) {
	h := newCGHarness(t, "group.initial.rebalance.delay.ms=0")
	t1 := h.topics.Add("t1", 4)
	cl := h.classicGroupWithLeader("g", 4)
	if _, ok := h.st.Groups["g"].(*ClassicGroup); !ok {
		t.Fatal("not a classic group")
	}

	a := h.joinClient("g", "a", "t1")
	g := h.group("g")
	if g == nil {
		t.Fatalf("group not upgraded: %T", h.st.Groups["g"])
	}
	if g.NumMembers() != 2 || g.GroupEpoch() != cl.generation+1 {
		t.Fatalf("after upgrade: %d members, epoch %d (generation %d)", g.NumMembers(), g.GroupEpoch(), cl.generation)
	}
	if e, _, _ := g.MemberEpoch(cl.id); e != cl.generation {
		t.Fatalf("converted member epoch %d, want %d", e, cl.generation)
	}
	if as, _ := g.MemberAssignment(cl.id); countTP(as) != 4 || len(a.owned) != 0 {
		t.Fatalf("converted member owns %v, a owns %v", as, a.owned)
	}
	h.checkReplayEquivalence(5)

	// The classic member is told to rejoin, revokes two partitions, and a gets them.
	if code := h.classicHeartbeat(cl); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("classic heartbeat after upgrade: %d", code)
	}
	h.classicJoinSync(cl, "t1") // reports owning 4: two are pending revocation
	if len(cl.owned["t1"]) != 2 {
		t.Fatalf("classic member after first rejoin: %v", cl.owned)
	}
	h.classicJoinSync(cl, "t1") // reports owning 2: revocation done
	h.beat(a)
	if len(a.owned[t1]) != 2 {
		t.Fatalf("a: %v", a.owned)
	}
	for _, p := range cl.owned["t1"] {
		if containsPartition(a.owned[t1], p) {
			t.Fatalf("partition %d owned twice", p)
		}
	}
	h.checkReplayEquivalence(6)

	// a (the last consumer-protocol member) leaves: downgrade to a classic group.
	if resp := h.hb(hbReq("g", "a", -1, nil)); resp.ErrorCode != 0 {
		t.Fatalf("leave: %d", resp.ErrorCode)
	}
	cg, ok := h.st.Groups["g"].(*ClassicGroup)
	if !ok {
		t.Fatalf("not downgraded: %T", h.st.Groups["g"])
	}
	if cg.State() != ClassicPreparingRebalance || cg.NumMembers() != 1 || cg.ProtocolType() != "consumer" {
		t.Fatalf("downgraded group: state %s, %d members", cg.State(), cg.NumMembers())
	}
	h.checkReplayEquivalence(7)
	if code := h.classicHeartbeat(cl); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("classic heartbeat after downgrade: %d", code)
	}
	resp := run(h, JoinGroup(classicJoinReq("g", cl.id, cl.owned, "t1")))
	if resp.ErrorCode != 0 || resp.LeaderID != cl.id || resp.Generation != cg.Generation() {
		t.Fatalf("rejoin after downgrade: %+v", resp)
	}
}

// TestCGMigrationPolicyDisabled: with group.consumer.migration.policy=disabled a consumer join
// on a non-empty classic group is GROUP_ID_NOT_FOUND, and a consumer group whose last
// consumer-protocol member leaves stays a consumer group.
func TestCGMigrationPolicyDisabled(t *testing.T) {
	h := newCGHarness(t, "group.initial.rebalance.delay.ms=0", "group.consumer.migration.policy=disabled")
	h.topics.Add("t1", 4)
	h.classicGroupWithLeader("classic", 4)
	// Kafka's GroupMetadataManager.validateOnlineUpgrade names why.
	if resp := h.hb(joinReq("classic", "a", "t1")); resp.ErrorCode != kerr.GroupIDNotFound.Code ||
		deref(resp.ErrorMessage) != "Cannot upgrade classic group classic to consumer group because online upgrade is disabled." {
		t.Fatalf("join on classic group: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	a := h.joinClient("g", "a", "t1")
	h.settle("g", []*cgClient{a})
	cl := &cgClassicClient{group: "g"}
	h.classicJoinSync(cl, "t1")
	h.hb(hbReq("g", "a", -1, nil))
	if g := h.group("g"); g == nil || g.NumMembers() != 1 {
		t.Fatalf("group after the last consumer member left: %T", h.st.Groups["g"])
	}
}

// TestCGClassicMemberOffsetCommit: a classic member of a consumer group commits with its
// generation (any OffsetCommit version); a wrong generation is ILLEGAL_GENERATION.
func TestCGClassicMemberOffsetCommit(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t1", 4)
	a := h.joinClient("g", "a", "t1")
	h.settle("g", []*cgClient{a})
	cl := &cgClassicClient{group: "g"}
	h.classicJoinSync(cl, "t1")
	g := h.group("g")
	ok := &CommitIdentity{MemberID: cl.id, GenerationOrEpoch: cl.generation, APIVersion: 7}
	if err := g.ValidateOffsetCommit(h.st, ok); err != nil {
		t.Fatalf("classic commit: %v", err)
	}
	bad := &CommitIdentity{MemberID: cl.id, GenerationOrEpoch: cl.generation + 1, APIVersion: 9}
	if err := g.ValidateOffsetCommit(h.st, bad); ErrorCode(err) != kerr.IllegalGeneration.Code {
		t.Fatalf("classic commit with a wrong generation: %v", err)
	}
	old := &CommitIdentity{MemberID: "a", GenerationOrEpoch: a.epoch, APIVersion: 8}
	if err := g.ValidateOffsetCommit(h.st, old); ErrorCode(err) != kerr.UnsupportedVersion.Code {
		t.Fatalf("consumer member with OffsetCommit v8: %v", err)
	}
	// OffsetFetch v9 bound to a member (ConsumerGroup.validateOffsetFetch): a classic member's
	// wrong generation is ILLEGAL_GENERATION, a consumer member's wrong epoch STALE_MEMBER_EPOCH.
	if err := g.ValidateOffsetFetch(h.st, cl.id, cl.generation); err != nil {
		t.Fatalf("classic fetch: %v", err)
	}
	if err := g.ValidateOffsetFetch(h.st, cl.id, cl.generation+1); ErrorCode(err) != kerr.IllegalGeneration.Code ||
		*ErrorMessage(err) != fmt.Sprintf("The received generation id %d does not match the expected member epoch %d.", cl.generation+1, cl.generation) {
		t.Fatalf("classic fetch with a wrong generation: %v", err)
	}
	if err := g.ValidateOffsetFetch(h.st, "a", a.epoch+1); ErrorCode(err) != kerr.StaleMemberEpoch.Code ||
		*ErrorMessage(err) != fmt.Sprintf("The received member epoch %d does not match the expected member epoch %d.", a.epoch+1, a.epoch) {
		t.Fatalf("consumer fetch with a wrong epoch: %v", err)
	}
}

// TestCGStaticClassicMemberReplacedByConsumerMember: a consumer-protocol static member joining
// with the instance id of a classic-protocol static member replaces it at once (no temporary
// leave needed) and uses the consumer protocol from then on.
func TestCGStaticClassicMemberReplacedByConsumerMember(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t1", 4)
	a := h.joinClient("g", "a", "t1")
	h.settle("g", []*cgClient{a})
	inst := "instance-1"
	req := classicJoinReq("g", "", nil, "t1")
	req.InstanceID = &inst
	resp := run(h, JoinGroup(req))
	if resp.ErrorCode != 0 {
		t.Fatalf("static classic join: %d", resp.ErrorCode)
	}
	classicID := resp.MemberID
	j := joinReq("g", "b", "t1")
	j.InstanceID = &inst
	if r := h.hb(j); r.ErrorCode != 0 {
		t.Fatalf("consumer static join replacing a classic member: %d %s", r.ErrorCode, deref(r.ErrorMessage))
	}
	g := h.group("g")
	if _, ok := g.members[classicID]; ok || g.members["b"] == nil || g.members["b"].classic != nil {
		t.Fatalf("after replacement: members %v", g.MemberIDs())
	}
	h.checkReplayEquivalence(8)
}

// TestCGDowngradeOnStaticReplacement: a classic static member replacing the last
// consumer-protocol (static) member turns the group into a Stable classic group; the joining
// member keeps the replaced member's assignment through SyncGroup.
func TestCGDowngradeOnStaticReplacement(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t1", 4)
	inst := "instance-1"
	j := joinReq("g", "a", "t1")
	j.InstanceID = &inst
	if r := h.hb(j); r.ErrorCode != 0 {
		t.Fatalf("static consumer join: %d", r.ErrorCode)
	}
	a := &cgClient{group: "g", id: "a", epoch: 1}
	h.beat(a)
	other := &cgClassicClient{group: "g"}
	h.classicJoinSync(other, "t1")
	h.beat(a)
	h.beat(a)
	h.classicJoinSync(other, "t1")
	h.classicJoinSync(other, "t1")
	aOwned := countTP(a.owned)

	req := classicJoinReq("g", "", nil, "t1")
	req.InstanceID = &inst
	resp := run(h, JoinGroup(req))
	if resp.ErrorCode != 0 {
		t.Fatalf("classic static join: %d", resp.ErrorCode)
	}
	cg, ok := h.st.Groups["g"].(*ClassicGroup)
	if !ok || cg.State() != ClassicStable || cg.NumMembers() != 2 || resp.Generation != cg.Generation() {
		t.Fatalf("after replacement: %T %+v", h.st.Groups["g"], resp)
	}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Version = 5
	sreq.Group, sreq.MemberID, sreq.Generation = "g", resp.MemberID, resp.Generation
	sreq.InstanceID = &inst
	sresp := run(h, SyncGroup(sreq))
	var as kmsg.ConsumerMemberAssignment
	if sresp.ErrorCode != 0 || as.ReadFrom(sresp.MemberAssignment) != nil || len(as.Topics) != 1 || len(as.Topics[0].Partitions) != aOwned {
		t.Fatalf("sync after downgrade: %d %+v (a owned %d)", sresp.ErrorCode, as, aOwned)
	}
	h.checkReplayEquivalence(9)
}

// TestCGUpgradeRejectedWhenFull: a consumer-protocol join on a classic group already at
// group.consumer.max.size is GROUP_MAX_SIZE_REACHED and leaves the classic group alone.
func TestCGUpgradeRejectedWhenFull(t *testing.T) {
	h := newCGHarness(t, "group.initial.rebalance.delay.ms=0", "group.consumer.max.size=1")
	h.topics.Add("t1", 4)
	h.classicGroupWithLeader("g", 4)
	if resp := h.hb(joinReq("g", "a", "t1")); resp.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("join on a full classic group: %d", resp.ErrorCode)
	}
	if _, ok := h.st.Groups["g"].(*ClassicGroup); !ok {
		t.Fatalf("group converted: %T", h.st.Groups["g"])
	}
}
