package coordinator

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).Error()
}

func wantErr(t *testing.T, resp *kmsg.StreamsGroupHeartbeatResponse, want *kerr.Error, msgPart string) {
	t.Helper()
	var code int16
	if want != nil {
		code = want.Code
	}
	if resp.ErrorCode != code {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		t.Fatalf("error %s (%q), want %s", errName(resp.ErrorCode), msg, errName(code))
	}
	if msgPart != "" && (resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, msgPart)) {
		t.Fatalf("message %v does not contain %q", resp.ErrorMessage, msgPart)
	}
}

func hasStatus(resp *kmsg.StreamsGroupHeartbeatResponse, code int8) bool {
	for _, s := range resp.Status {
		if s.StatusCode == code {
			return true
		}
	}
	return false
}

func TestStreamsHeartbeatValidation(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2))
	base := func() *kmsg.StreamsGroupHeartbeatRequest {
		return newTMember("m1", "p1", simpleTopology(0)).request("g")
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		name string
		mod  func(r *kmsg.StreamsGroupHeartbeatRequest)
		err  *kerr.Error
		msg  string
	}{
		{"empty member id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest, "MemberId can't be empty."},
		{"empty group id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Group = "" }, kerr.InvalidRequest, "GroupId can't be empty."},
		{"empty instance id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.InstanceID = str("") }, kerr.InvalidRequest, "InstanceId can't be empty."},
		{"empty rack id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.RackID = str("") }, kerr.InvalidRequest, "RackId can't be empty."},
		{"blank member id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = " " }, kerr.InvalidRequest, "MemberId can't be empty."},
		{"blank group id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Group = "\t" }, kerr.InvalidRequest, "GroupId can't be empty."},
		{"blank instance id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.InstanceID = str("  ") }, kerr.InvalidRequest, "InstanceId can't be empty."},
		{"blank rack id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.RackID = str(" ") }, kerr.InvalidRequest, "RackId can't be empty."},
		{"epoch below -2", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = -3; r.Topology = nil },
			kerr.InvalidRequest, "MemberEpoch is -3, but must be greater than or equal to -2."},
		{"-2 without instance", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = -2; r.Topology = nil }, kerr.InvalidRequest, "InstanceId can't be null."},
		{"no rebalance timeout", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."},
		{"tasks on join", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.ActiveTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}}
		}, kerr.InvalidRequest, "ActiveTasks must be empty when (re-)joining."},
		{"standby tasks on join", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.StandbyTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}}
		}, kerr.InvalidRequest, "StandbyTasks must be empty when (re-)joining."},
		{"warmup tasks on join", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.WarmupTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}}
		}, kerr.InvalidRequest, "WarmupTasks must be empty when (re-)joining."},
		{"regex before other checks", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.MemberID = ""
			r.Topology.Subtopologies[0].SourceTopicRegex = []string{"in.*"}
		}, kerr.InvalidRequest, "Regular expressions for source topics are not supported yet."},
		{"null topology on join", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Topology = nil }, kerr.InvalidRequest, "Topology must be non-null when (re-)joining."},
		{"topology on non-join", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = 3 }, kerr.InvalidRequest, "Topology can only be provided when (re-)joining."},
		{"partial task lists", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.StandbyTasks = nil }, kerr.InvalidRequest, "If one task-type is non-null, all must be non-null."},
		{"source regex", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.Topology.Subtopologies[0].SourceTopicRegex = []string{"in.*"}
		}, kerr.InvalidRequest, "Regular expressions for source topics are not supported yet."},
		{"changelog partitions", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.Topology.Subtopologies[0].StateChangelogTopics[0].NumPartitions = 3
		}, kerr.StreamsInvalidTopology, "must have an undefined partition count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := base()
			c.mod(r)
			wantErr(t, h.hb(r), c.err, c.msg)
		})
	}
	if len(h.st.Groups) != 0 {
		t.Fatalf("invalid requests created groups: %v", sortedKeys(h.st.Groups))
	}
}

func TestStreamsJoinCreatesGroupWithMemberTopologyEpoch(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m := newTMember("m1", "p1", simpleTopology(7))
	resp := h.beat("g", m)
	wantErr(t, resp, nil, "")
	g := h.group("g")
	// A new streams group starts at epoch 1; the join bumps it to 2 (Kafka 4.2+).
	if g == nil || g.TopologyEpoch() != 7 || g.GroupEpoch() != 2 {
		t.Fatalf("group %+v", g)
	}
	if resp.MemberEpoch != 2 || len(resp.ActiveTasks) != 1 || len(resp.ActiveTasks[0].Partitions) != 2 {
		t.Fatalf("join response epoch %d tasks %+v", resp.MemberEpoch, resp.ActiveTasks)
	}
	if g.StoredTopologyEpoch() != -1 || g.LastFailedTopologyEpoch() != -1 {
		t.Fatal("KIP-1331 epochs must default to -1")
	}
	if resp.AcceptableRecoveryLag != StreamsAcceptableRecoveryLag || resp.TopologyDescriptionRequired {
		t.Fatalf("v1 fields: %d %v", resp.AcceptableRecoveryLag, resp.TopologyDescriptionRequired)
	}
	if h.st.Metrics.StreamsRebalances != 1 {
		t.Fatalf("rebalances %d", h.st.Metrics.StreamsRebalances)
	}
}

func TestStreamsJoinOtherGroupTypes(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 1))
	// Non-empty classic group: GROUP_ID_NOT_FOUND.
	cg := newSimpleClassicGroup("classic")
	cg.protocolType = "consumer"
	cg.state = ClassicStable
	cg.members["x"] = &classicMember{id: "x"}
	h.st.Groups["classic"] = cg
	wantErr(t, h.hb(newTMember("m1", "p", simpleTopology(0)).request("classic")), kerr.GroupIDNotFound, "is not a streams group")
	// A member heartbeat or leave names the wrong type too (Kafka's
	// GroupMetadataManager.getStreamsGroupOrThrow); only a missing group is "not found".
	known := newTMember("x", "p", nil)
	known.epoch = 3
	wantErr(t, h.hb(known.request("classic")), kerr.GroupIDNotFound, "Group classic is not a streams group.")
	known.epoch = -1
	wantErr(t, h.hb(known.request("classic")), kerr.GroupIDNotFound, "Group classic is not a streams group.")
	wantErr(t, h.hb(known.request("missing")), kerr.GroupIDNotFound, "Streams group missing not found.")
	// Empty (simple) classic group created by an offset commit: replaced.
	run(h, func(st *State, c *Call[Ack]) {
		defer c.Reply(st, Ack{})
		st.WriteOffset("simple", "input", 0, &OffsetValue{Offset: 5, LeaderEpoch: -1, CommitMs: st.Now.UnixMilli()})
	})
	if _, ok := h.st.Groups["simple"].(*ClassicGroup); !ok {
		t.Fatal("offset commit should have created a simple classic group")
	}
	wantErr(t, h.hb(newTMember("m1", "p", simpleTopology(0)).request("simple")), nil, "")
	if h.group("simple") == nil {
		t.Fatal("empty classic group was not replaced by a streams group")
	}
	if v, ok := h.st.Offsets.Get("simple", "input", 0); !ok || v.Offset != 5 {
		t.Fatal("offsets of the replaced group must stay")
	}
	// A streams heartbeat (non-join) on a classic group id: GROUP_ID_NOT_FOUND.
	m := newTMember("m1", "p", nil)
	m.epoch = 1
	wantErr(t, h.hb(m.request("classic")), kerr.GroupIDNotFound, "")
}

func TestStreamsTopologyEpochRules(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "other", 2, "app-store-changelog", 2))
	m1 := newTMember("m1", "p1", simpleTopology(3))
	wantErr(t, h.beat("g", m1), nil, "")
	other := func(epoch int32) *kmsg.StreamsGroupHeartbeatRequestTopology {
		return topology(epoch, topoSub{id: "0", sources: []string{"other"}})
	}
	// ER = EG, same topology: ok.
	m2 := newTMember("m2", "p2", simpleTopology(3))
	wantErr(t, h.beat("g", m2), nil, "")
	// ER = EG, different topology: STREAMS_INVALID_TOPOLOGY_EPOCH.
	wantErr(t, h.hb(newTMember("m3", "p3", other(3)).request("g")), kerr.StreamsInvalidTopologyEpoch, "differs")
	// ER < EG: STREAMS_TOPOLOGY_FENCED.
	wantErr(t, h.hb(newTMember("m3", "p3", simpleTopology(2)).request("g")), kerr.StreamsTopologyFenced, "")
	// ER > EG+1: STREAMS_INVALID_TOPOLOGY_EPOCH.
	wantErr(t, h.hb(newTMember("m3", "p3", other(5)).request("g")), kerr.StreamsInvalidTopologyEpoch, "more than one above")
	if g := h.group("g"); g.NumMembers() != 2 || g.TopologyEpoch() != 3 {
		t.Fatalf("rejected joins changed the group: members %d epoch %d", g.NumMembers(), g.TopologyEpoch())
	}
	// ER = EG+1: the new topology becomes the group's; the group epoch is bumped.
	before := h.group("g").GroupEpoch()
	m3 := newTMember("m3", "p3", other(4))
	wantErr(t, h.beat("g", m3), nil, "")
	g := h.group("g")
	if g.TopologyEpoch() != 4 || g.Topology().Subtopologies[0].SourceTopics[0] != "other" || g.GroupEpoch() <= before {
		t.Fatalf("upgrade not picked up: epoch %d topo %+v group epoch %d", g.TopologyEpoch(), g.Topology(), g.GroupEpoch())
	}
	if g.ValidatedTopologyEpoch() != 4 {
		t.Fatalf("validated topology epoch %d", g.ValidatedTopologyEpoch())
	}
	// The member still on topology epoch 3 gets STALE_TOPOLOGY.
	resp := h.beat("g", m1)
	wantErr(t, resp, nil, "")
	if !hasStatus(resp, StreamsStatusStaleTopology) {
		t.Fatalf("want STALE_TOPOLOGY, got %+v", resp.Status)
	}
	if hasStatus(h.beat("g", m3), StreamsStatusStaleTopology) {
		t.Fatal("up-to-date member must not get STALE_TOPOLOGY")
	}
	// Every task of the new topology is assigned exactly once after convergence.
	h.converge("g", []*tMember{m1, m2, m3}, 10)
	assertActiveOnce(t, h.group("g"), map[string]int32{"0": 2})
}

func TestStreamsExistingMemberErrors(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4))
	m := newTMember("ghost", "p", nil)
	m.epoch = 5
	wantErr(t, h.hb(m.request("nope")), kerr.GroupIDNotFound, "")
	m1 := newTMember("m1", "p1", simpleTopology(0))
	h.beat("g", m1)
	wantErr(t, h.hb(m.request("g")), kerr.UnknownMemberID, "")
	// Higher epoch than the member's: fenced and removed.
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.beat("g", m2)
	epochBefore := h.group("g").GroupEpoch()
	bad := *m2
	bad.epoch = m2.epoch + 10
	wantErr(t, h.hb(bad.request("g")), kerr.FencedMemberEpoch, "")
	if _, ok := h.group("g").MemberEpoch("m2"); ok {
		t.Fatal("fenced member must be removed")
	}
	if h.group("g").GroupEpoch() != epochBefore+1 {
		t.Fatal("fencing must bump the group epoch")
	}
}

func TestStreamsLostResponsePreviousEpoch(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	h.converge("g", []*tMember{m1}, 5)
	// m2 joins; m1 must give up tasks, then is moved to the new epoch.
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.converge("g", []*tMember{m1, m2}, 10)
	g := h.group("g")
	c := g.currentOf("m1")
	if c.PreviousMemberEpoch >= c.MemberEpoch {
		t.Fatalf("epochs %d/%d", c.MemberEpoch, c.PreviousMemberEpoch)
	}
	// m1 lost its last response: it retries with the previous epoch and owned ⊆ assigned → ok.
	lost := *m1
	lost.epoch = c.PreviousMemberEpoch
	resp := h.hb(lost.request("g"))
	wantErr(t, resp, nil, "")
	if resp.MemberEpoch != c.MemberEpoch || resp.ActiveTasks == nil {
		t.Fatalf("lost-response retry must get epoch %d and tasks, got %d %v", c.MemberEpoch, resp.MemberEpoch, resp.ActiveTasks)
	}
	// The previous epoch with a task it does not own: fenced.
	lost.active = lost.active.clone()
	lost.active[streamsTask{"0", 99}] = 0
	wantErr(t, h.hb(lost.request("g")), kerr.FencedMemberEpoch, "")
}

func TestStreamsMemberMetadataChangeBumpsEpoch(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	h.converge("g", []*tMember{m1}, 5)
	e := h.group("g").GroupEpoch()
	h.beat("g", m1) // nothing changed
	if h.group("g").GroupEpoch() != e {
		t.Fatal("plain heartbeat bumped the epoch")
	}
	req := m1.request("g")
	rack := "r1"
	req.RackID = &rack
	m1.apply(h.hb(req))
	if h.group("g").GroupEpoch() != e+1 {
		t.Fatal("rack change must bump the group epoch")
	}
	req = m1.request("g")
	req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{{Key: "zone", Value: "a"}}
	m1.apply(h.hb(req))
	if h.group("g").GroupEpoch() != e+2 {
		t.Fatal("client tags change must bump the group epoch")
	}
}

func TestStreamsLeaveAndStaticTemporaryLeave(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4))
	inst := "i-1"
	m1 := newTMember("m1", "p1", simpleTopology(0))
	m1.instance = &inst
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.converge("g", []*tMember{m1, m2}, 10)
	g := h.group("g")
	e := g.GroupEpoch()
	owned := g.currentOf("m1").Assigned.Active.clone()
	// -2: static member leaves temporarily: kept, epoch -2, no bump.
	req := m1.request("g")
	req.MemberEpoch = -2
	resp := h.hb(req)
	wantErr(t, resp, nil, "")
	if resp.MemberEpoch != -2 || g.GroupEpoch() != e {
		t.Fatalf("temporary leave: epoch %d group epoch %d (was %d)", resp.MemberEpoch, g.GroupEpoch(), e)
	}
	if ep, ok := g.MemberEpoch("m1"); !ok || ep != -2 {
		t.Fatalf("member epoch %d %v", ep, ok)
	}
	// The static member comes back with a new member id: it takes over without a bump and gets
	// its old tasks.
	back := newTMember("m1b", "p1", simpleTopology(0))
	back.instance = &inst
	wantErr(t, h.beat("g", back), nil, "")
	if _, ok := g.MemberEpoch("m1"); ok {
		t.Fatal("old static member id must be gone")
	}
	if g.GroupEpoch() != e {
		t.Fatalf("static replacement bumped the epoch %d → %d", e, g.GroupEpoch())
	}
	h.converge("g", []*tMember{back, m2}, 10)
	if !g.currentOf("m1b").Assigned.Active.sameKeys(owned) {
		t.Fatal("returning static member must get its old tasks back")
	}
	// A different member id claiming an instance id in use: UNRELEASED_INSTANCE_ID.
	thief := newTMember("m9", "p9", simpleTopology(0))
	thief.instance = &inst
	wantErr(t, h.hb(thief.request("g")), kerr.UnreleasedInstanceID, "")
	// -1: leave; removed and bumped; its tasks go to the other member.
	req = m2.request("g")
	req.MemberEpoch = -1
	resp = h.hb(req)
	wantErr(t, resp, nil, "")
	if resp.MemberEpoch != -1 || g.NumMembers() != 1 || g.GroupEpoch() != e+1 {
		t.Fatalf("leave: epoch %d members %d group epoch %d", resp.MemberEpoch, g.NumMembers(), g.GroupEpoch())
	}
	h.converge("g", []*tMember{back}, 5)
	assertActiveOnce(t, g, map[string]int32{"0": 4})
	// Leave of an unknown member: UNKNOWN_MEMBER_ID.
	req = newTMember("zz", "p", nil).request("g")
	req.MemberEpoch = -1
	wantErr(t, h.hb(req), kerr.UnknownMemberID, "")
}

func assertActiveOnce(t *testing.T, g *StreamsGroup, numTasks map[string]int32) {
	t.Helper()
	seen := map[streamsTask]string{}
	for _, id := range g.MemberIDs() {
		c := g.currentOf(id)
		for task := range c.Assigned.Active {
			if o, dup := seen[task]; dup {
				t.Fatalf("task %v active on %s and %s", task, o, id)
			}
			seen[task] = id
		}
	}
	total := 0
	for sub, n := range numTasks {
		for p := int32(0); p < n; p++ {
			if _, ok := seen[streamsTask{sub, p}]; !ok {
				t.Fatalf("task %s_%d not active anywhere", sub, p)
			}
		}
		total += int(n)
	}
	if len(seen) != total {
		t.Fatalf("%d active tasks, want %d", len(seen), total)
	}
}

func TestStreamsConvergeTwoAndThreeMembers(t *testing.T) {
	for _, n := range []int{2, 3} {
		h := newStreamsHarness(t, newTestTopics("input", 6, "app-store-changelog", 6))
		var ms []*tMember
		for i := 0; i < n; i++ {
			ms = append(ms, newTMember(string(rune('a'+i)), "p"+string(rune('a'+i)), simpleTopology(0)))
			h.converge("g", ms, 20)
			assertActiveOnce(t, h.group("g"), map[string]int32{"0": 6})
		}
		g := h.group("g")
		for _, m := range ms {
			if c := g.currentOf(m.id); c.MemberEpoch != g.GroupEpoch() || len(c.Assigned.Active) != 6/n {
				t.Fatalf("%d members: member %s epoch %d (group %d) tasks %d", n, m.id, c.MemberEpoch, g.GroupEpoch(), len(c.Assigned.Active))
			}
		}
		if g.StateName() != "Stable" {
			t.Fatalf("state %s", g.StateName())
		}
	}
}

func TestStreamsRevokeBeforeAssign(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	h.converge("g", []*tMember{m1}, 5)
	m2 := newTMember("m2", "p2", simpleTopology(0))
	r2 := h.beat("g", m2)
	g := h.group("g")
	if len(m2.active) != 0 || r2.MemberEpoch != g.GroupEpoch() {
		t.Fatalf("m2 must not get a task m1 still holds: %v epoch %d", m2.active, r2.MemberEpoch)
	}
	if c := g.currentOf("m2"); c.State != streamsMemberUnreleasedTasks {
		t.Fatalf("m2 state %s", streamsMemberStateNames[c.State])
	}
	r1 := h.beat("g", m1) // m1 learns to revoke one task
	if c := g.currentOf("m1"); c.State != streamsMemberUnrevokedTasks || len(m1.active) != 1 || r1.MemberEpoch == g.GroupEpoch() {
		t.Fatalf("m1 must be revoking at its old epoch: %s %v %d", streamsMemberStateNames[c.State], m1.active, r1.MemberEpoch)
	}
	h.beat("g", m2) // still unreleased: m1 has not confirmed
	if len(m2.active) != 0 {
		t.Fatal("task given before the revocation was confirmed")
	}
	h.beat("g", m1) // confirms (sends owned without the task)
	h.beat("g", m2)
	if len(m2.active) != 1 || g.StateName() != "Stable" {
		t.Fatalf("m2 active %v state %s", m2.active, g.StateName())
	}
}

func TestStreamsStandbysOnOtherProcesses(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4), "group.streams.num.standby.replicas=1")
	ms := []*tMember{
		newTMember("a1", "pa", simpleTopology(0)), newTMember("a2", "pa", simpleTopology(0)),
		newTMember("b1", "pb", simpleTopology(0)),
	}
	h.converge("g", ms, 20)
	g := h.group("g")
	assertActiveOnce(t, g, map[string]int32{"0": 4})
	proc := map[string]string{"a1": "pa", "a2": "pa", "b1": "pb"}
	activeProc := map[streamsTask]string{}
	standbys := map[streamsTask][]string{}
	for _, id := range g.MemberIDs() {
		c := g.currentOf(id)
		for task := range c.Assigned.Active {
			activeProc[task] = proc[id]
		}
		for task := range c.Assigned.Standby {
			standbys[task] = append(standbys[task], proc[id])
		}
	}
	for p := int32(0); p < 4; p++ {
		task := streamsTask{"0", p}
		if len(standbys[task]) != 1 || standbys[task][0] == activeProc[task] {
			t.Fatalf("task %v: active on %s, standbys on %v", task, activeProc[task], standbys[task])
		}
	}
}

func TestStreamsMissingSourceAndInternalTopics(t *testing.T) {
	topics := newTestTopics()
	h := newStreamsHarness(t, topics)
	topo := topology(0,
		topoSub{id: "0", sources: []string{"in-a", "in-b"}, sinks: []string{"app-rep"}, changelogs: []string{"app-s0-changelog"}},
		topoSub{id: "1", repartition: []kmsg.TopicInfo{{Topic: "app-rep"}}, changelogs: []string{"app-s1-changelog"}},
		topoSub{id: "2", sources: []string{"in-a"}, repartition: []kmsg.TopicInfo{{Topic: "app-rep-fixed", NumPartitions: 7}}},
	)
	m := newTMember("m1", "p1", topo)
	res := h.hbResult(m.request("g"))
	m.apply(res.Response)
	if !hasStatus(res.Response, StreamsStatusMissingSourceTopics) || len(res.Create) != 0 {
		t.Fatalf("want MISSING_SOURCE_TOPICS and nothing to create, got %+v %v", res.Response.Status, res.Create)
	}
	if h.group("g").StateName() != "NotReady" {
		t.Fatalf("state %s", h.group("g").StateName())
	}
	topics.set("in-a", 3)
	topics.set("in-b", 5)
	res = h.hbResult(m.request("g"))
	m.apply(res.Response)
	if !hasStatus(res.Response, StreamsStatusMissingInternalTopics) {
		t.Fatalf("want MISSING_INTERNAL_TOPICS, got %+v", res.Response.Status)
	}
	want := map[string]int32{"app-rep": 5, "app-s0-changelog": 5, "app-s1-changelog": 5, "app-rep-fixed": 7}
	got := res.TopicsToCreate()
	if len(got) != len(want) {
		t.Fatalf("to create %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("to create %v, want %v", got, want)
		}
	}
	// The harness created them (as the service does); the next heartbeat is ready.
	resp := h.beat("g", m)
	if len(resp.Status) != 0 {
		t.Fatalf("statuses after creation: %+v", resp.Status)
	}
	h.converge("g", []*tMember{m}, 5)
	assertActiveOnce(t, h.group("g"), map[string]int32{"0": 5, "1": 5, "2": 7})
	// Deleting a source topic: MISSING_SOURCE_TOPICS again and the epoch moves.
	e := h.group("g").GroupEpoch()
	topics.Delete("in-b")
	if resp := h.beat("g", m); !hasStatus(resp, StreamsStatusMissingSourceTopics) || h.group("g").GroupEpoch() != e+1 {
		t.Fatalf("after deletion: %+v epoch %d", resp.Status, h.group("g").GroupEpoch())
	}
}

func TestStreamsCopartitionedTopicsDiffer(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("left", 3, "right", 4))
	topo := topology(0, topoSub{id: "0", sources: []string{"left", "right"}, copart: [][]int16{{0, 1}}})
	m := newTMember("m1", "p1", topo)
	resp := h.beat("g", m)
	if !hasStatus(resp, StreamsStatusIncorrectlyPartitionedTopics) {
		t.Fatalf("want INCORRECTLY_PARTITIONED_TOPICS, got %+v", resp.Status)
	}
	h.topics.set("right", 3)
	if resp := h.beat("g", m); len(resp.Status) != 0 {
		t.Fatalf("statuses %+v", resp.Status)
	}
	// A derived repartition topic in a copartition group takes the group's partition count.
	h2 := newStreamsHarness(t, newTestTopics("left", 3, "up", 9))
	topo2 := topology(0,
		topoSub{id: "0", sources: []string{"up"}, sinks: []string{"rep"}},
		topoSub{id: "1", sources: []string{"left"}, repartition: []kmsg.TopicInfo{{Topic: "rep"}}, copart: [][]int16{{0}}, copartRep: [][]int16{{0}}},
	)
	res := h2.hbResult(newTMember("m1", "p1", topo2).request("g"))
	if got := res.TopicsToCreate()["rep"]; got != 3 {
		t.Fatalf("copartitioned repartition topic gets %d partitions, want 3", got)
	}
}

func TestStreamsMetadataHashChangeReconfigures(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m := newTMember("m1", "p1", simpleTopology(0))
	h.converge("g", []*tMember{m}, 5)
	g := h.group("g")
	e, hash := g.GroupEpoch(), g.MetadataHash()
	if hash == 0 {
		t.Fatal("metadata hash not computed")
	}
	h.topics.SetRack("rack-1") // rack change alone changes the hash
	h.beat("g", m)
	if g.MetadataHash() == hash || g.GroupEpoch() != e+1 {
		t.Fatalf("rack change: hash %d→%d epoch %d→%d", hash, g.MetadataHash(), e, g.GroupEpoch())
	}
	h.topics.set("input", 4) // more partitions: changelog now wrongly partitioned
	resp := h.beat("g", m)
	if !hasStatus(resp, StreamsStatusIncorrectlyPartitionedTopics) {
		t.Fatalf("want INCORRECTLY_PARTITIONED_TOPICS, got %+v", resp.Status)
	}
	h.topics.set("app-store-changelog", 4)
	h.converge("g", []*tMember{m}, 5)
	assertActiveOnce(t, g, map[string]int32{"0": 4})
}

func TestStreamsInitialRebalanceDelay(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4), "group.streams.initial.rebalance.delay.ms=3000")
	m1 := newTMember("m1", "p1", simpleTopology(0))
	resp := h.beat("g", m1)
	if !hasStatus(resp, StreamsStatusAssignmentDelayed) || len(m1.active) != 0 {
		t.Fatalf("want ASSIGNMENT_DELAYED, got %+v %v", resp.Status, m1.active)
	}
	m2 := newTMember("m2", "p2", simpleTopology(0))
	if resp := h.beat("g", m2); !hasStatus(resp, StreamsStatusAssignmentDelayed) {
		t.Fatal("second member during the delay must see ASSIGNMENT_DELAYED")
	}
	h.advance(3 * time.Second)
	g := h.group("g")
	if g.TargetAssignmentEpoch() != g.GroupEpoch() {
		t.Fatalf("timer did not compute the assignment: target %d group %d", g.TargetAssignmentEpoch(), g.GroupEpoch())
	}
	m1.epoch, m2.epoch = 0, 0 // members still joining after a delayed assignment
	h.converge("g", []*tMember{m1, m2}, 10)
	assertActiveOnce(t, g, map[string]int32{"0": 4})
	if len(m1.active) != 2 || len(m2.active) != 2 {
		t.Fatalf("both members must share after the delay: %v %v", m1.active, m2.active)
	}
}

func TestStreamsShutdownApplication(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.converge("g", []*tMember{m1, m2}, 10)
	req := m1.request("g")
	req.ShutdownApplication = true
	if resp := h.hb(req); !hasStatus(resp, StreamsStatusShutdownApplication) {
		t.Fatalf("requester: %+v", resp.Status)
	}
	if resp := h.beat("g", m2); !hasStatus(resp, StreamsStatusShutdownApplication) {
		t.Fatalf("other member: %+v", resp.Status)
	}
	for _, m := range []*tMember{m1, m2} {
		r := m.request("g")
		r.MemberEpoch = -1
		h.hb(r)
	}
	if h.group("g").ShutdownRequested() {
		t.Fatal("shutdown request must clear when the group is empty")
	}
	m3 := newTMember("m3", "p3", simpleTopology(0))
	if resp := h.beat("g", m3); hasStatus(resp, StreamsStatusShutdownApplication) {
		t.Fatal("a new member after the group emptied must not get SHUTDOWN_APPLICATION")
	}
}

func TestStreamsEndpointsConverge(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4))
	var ms []*tMember
	for i, id := range []string{"a", "b", "c"} {
		m := newTMember(id, "p"+id, simpleTopology(0))
		m.endpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "host-" + id, Port: uint16(8000 + i)}
		ms = append(ms, m)
	}
	h.converge("g", ms, 20)
	g := h.group("g")
	// Two more rounds: the first delivers the latest epoch to members that missed the last
	// change, the second has every member send it back.
	for r := 0; r < 2; r++ {
		for _, m := range ms {
			h.beat("g", m)
		}
	}
	if !g.EndpointsConverged() {
		for _, m := range ms {
			t.Logf("%s soft %+v member %d group %d", m.id, g.soft[m.id], m.endpointEpoch, g.endpointEpoch)
		}
		t.Fatal("endpoint epochs did not converge")
	}
	for _, m := range ms {
		if m.endpointEpoch != g.EndpointInformationEpoch() {
			t.Fatalf("member %s endpoint epoch %d, group %d", m.id, m.endpointEpoch, g.EndpointInformationEpoch())
		}
		// A member with the group's epoch gets no IQ information; its last one is current.
		if resp := h.beat("g", m); resp.PartitionsByUserEndpoint != nil {
			t.Fatal("converged member got PartitionsByUserEndpoint again")
		}
		total := 0
		for _, ep := range m.lastPartitionsByUserEndpoint {
			for _, ap := range ep.ActivePartitions {
				if ap.Topic != "input" {
					t.Fatalf("IQ topic %s", ap.Topic)
				}
				total += len(ap.Partitions)
			}
		}
		if len(m.lastPartitionsByUserEndpoint) != 3 || total != 4 {
			t.Fatalf("member %s IQ view: %d endpoints, %d active partitions", m.id, len(m.lastPartitionsByUserEndpoint), total)
		}
	}
}

func TestStreamsSessionAndRebalanceTimeouts(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.converge("g", []*tMember{m1, m2}, 10)
	g := h.group("g")
	e := g.GroupEpoch()
	for i := 0; i < 5; i++ { // m1 keeps heartbeating, m2 goes silent
		h.advance(10 * time.Second)
		h.beat("g", m1)
	}
	if _, ok := g.MemberEpoch("m2"); ok || g.GroupEpoch() != e+1 {
		t.Fatalf("session expiry must fence m2 (epoch %d→%d)", e, g.GroupEpoch())
	}
	h.converge("g", []*tMember{m1}, 5)
	assertActiveOnce(t, g, map[string]int32{"0": 2})
	// Rebalance timeout: m3 joins, m1 is asked to revoke but never confirms.
	m3 := newTMember("m3", "p3", simpleTopology(0))
	h.beat("g", m3)
	req := m1.request("g")
	m1.apply(h.hb(req))
	if g.currentOf("m1").State != streamsMemberUnrevokedTasks {
		t.Fatal("m1 should be revoking")
	}
	h.advance(31 * time.Second)
	if _, ok := g.MemberEpoch("m1"); ok {
		t.Fatal("rebalance timeout must fence m1")
	}
}

func TestStreamsOffsetCommitValidation(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	h.converge("g", []*tMember{m1}, 5)
	g := h.group("g")
	cases := []struct {
		c    CommitIdentity
		want error
	}{
		{CommitIdentity{MemberID: "m1", GenerationOrEpoch: m1.epoch, APIVersion: 9}, nil},
		{CommitIdentity{MemberID: "m1", GenerationOrEpoch: m1.epoch, APIVersion: 8}, kerr.UnsupportedVersion},
		{CommitIdentity{MemberID: "m1", GenerationOrEpoch: m1.epoch, APIVersion: 3, Transactional: true}, nil},
		{CommitIdentity{MemberID: "m1", GenerationOrEpoch: m1.epoch + 1, APIVersion: 9}, kerr.StaleMemberEpoch},
		{CommitIdentity{MemberID: "m1", GenerationOrEpoch: m1.epoch - 1, APIVersion: 9}, kerr.StaleMemberEpoch},
		{CommitIdentity{MemberID: "zz", GenerationOrEpoch: 1, APIVersion: 9}, kerr.UnknownMemberID},
		{CommitIdentity{GenerationOrEpoch: -1, APIVersion: 9}, kerr.UnknownMemberID},
		{CommitIdentity{GenerationOrEpoch: -1, APIVersion: 3, Transactional: true}, nil},
	}
	for i, c := range cases {
		if err := g.ValidateOffsetCommit(h.st, &c.c); err != c.want {
			t.Fatalf("case %d: %v, want %v", i, err, c.want)
		}
	}
	if err := g.ValidateOffsetFetch(h.st, "m1", m1.epoch); err != nil {
		t.Fatal(err)
	}
	if err := g.ValidateOffsetFetch(h.st, "m1", m1.epoch+1); err != kerr.StaleMemberEpoch {
		t.Fatal(err)
	}
	if err := g.ValidateOffsetFetch(h.st, "zz", 1); err != kerr.UnknownMemberID {
		t.Fatal(err)
	}
	if !g.IsSubscribedToTopic("input") || g.IsSubscribedToTopic("app-store-changelog") {
		t.Fatal("subscription: source topics only")
	}
	if g.ValidateDeleteGroup() != kerr.NonEmptyGroup || g.ValidateOffsetDelete() != nil {
		t.Fatal("delete validation")
	}
	req := m1.request("g")
	req.MemberEpoch = -1
	h.hb(req)
	if g.IsSubscribedToTopic("input") || g.ValidateDeleteGroup() != nil {
		t.Fatal("an Empty group subscribes to nothing and may be deleted")
	}
	if err := g.ValidateOffsetCommit(h.st, &CommitIdentity{GenerationOrEpoch: -1, APIVersion: 9}); err != nil {
		t.Fatal(err)
	}
	base, ok := g.OffsetExpiryBase(h.st.Now)
	if !ok || !base.Equal(h.st.Now) {
		t.Fatal("expiry base is the commit time")
	}
	counts := StreamsGroupCountByState(h.st)
	if counts["Empty"] != 1 || len(counts) != len(StreamsStateNames) {
		t.Fatalf("counts %v", counts)
	}
}

func TestStreamsGroupStates(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2), "group.streams.initial.rebalance.delay.ms=1000")
	m1 := newTMember("m1", "p1", simpleTopology(0))
	h.beat("g", m1)
	g := h.group("g")
	if g.StateName() != "Assigning" {
		t.Fatalf("during the delay: %s", g.StateName())
	}
	h.advance(time.Second)
	if g.StateName() != "Reconciling" {
		t.Fatalf("after the delay: %s", g.StateName())
	}
	m1.epoch = 0
	h.converge("g", []*tMember{m1}, 5)
	if g.StateName() != "Stable" {
		t.Fatal(g.StateName())
	}
	h.topics.Delete("input")
	h.beat("g", m1)
	if g.StateName() != "NotReady" {
		t.Fatal(g.StateName())
	}
	req := m1.request("g")
	req.MemberEpoch = -1
	h.hb(req)
	if g.StateName() != "Empty" {
		t.Fatal(g.StateName())
	}
}
