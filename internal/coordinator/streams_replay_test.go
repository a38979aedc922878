package coordinator

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsWorkload drives a group through joins, an upgrade, leaves, a fencing, a temporary
// static leave and a deletion, so that the log holds every streams record type, values and
// tombstones.
func streamsWorkload(t *testing.T) *streamsHarness {
	h := newStreamsHarness(t, newTestTopics("input", 4, "other", 3), "group.streams.num.standby.replicas=1")
	inst := "static-1"
	a := newTMember("a", "pa", simpleTopology(0))
	b := newTMember("b", "pb", simpleTopology(0))
	c := newTMember("c", "pc", simpleTopology(0))
	c.instance = &inst
	c.endpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "c", Port: 1}
	h.converge("g", []*tMember{a, b, c}, 20)
	up := newTMember("d", "pd", topology(1, topoSub{id: "0", sources: []string{"input"}, changelogs: []string{"app-store-changelog"}},
		topoSub{id: "1", sources: []string{"other"}}))
	h.beat("g", up)
	h.converge("g", []*tMember{a, b, c, up}, 20)
	req := b.request("g")
	req.MemberEpoch = -1
	h.hb(req)
	req = c.request("g")
	req.MemberEpoch = -2
	h.hb(req)
	bad := *a
	bad.epoch += 5
	h.hb(bad.request("g"))
	// A second group that is deleted again.
	x := newTMember("x", "px", simpleTopology(0))
	h.converge("gone", []*tMember{x}, 5)
	req = x.request("gone")
	req.MemberEpoch = -1
	h.hb(req)
	run(h, func(st *State, c *Call[Ack]) {
		defer c.Reply(st, Ack{})
		g := st.Groups["gone"]
		if err := g.ValidateDeleteGroup(); err != nil {
			t.Errorf("delete: %v", err)
		}
		g.WriteTombstones(st)
	})
	if h.group("gone") != nil {
		t.Fatal("tombstones must remove the group")
	}
	// A third group created over an offset-commit simple group.
	run(h, func(st *State, c *Call[Ack]) {
		defer c.Reply(st, Ack{})
		st.WriteOffset("conv", "input", 1, &OffsetValue{Offset: 9, LeaderEpoch: -1, CommitMs: st.Now.UnixMilli()})
	})
	h.converge("conv", []*tMember{newTMember("y", "py", simpleTopology(0))}, 5)
	return h
}

func TestStreamsReplayEquivalence(t *testing.T) {
	h := streamsWorkload(t)
	want := durableView(h.st)
	if len(want) == 0 {
		t.Fatal("empty state")
	}
	for seed := int64(0); seed < 20; seed++ {
		st := replayed(t, h, func(rs []Record) {
			rand.New(rand.NewSource(seed)).Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		})
		if got := durableView(st); !reflect.DeepEqual(got, want) {
			for k := range want {
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("seed %d: %s\n got %+v\nwant %+v", seed, k, got[k], want[k])
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("seed %d: extra %s", seed, k)
				}
			}
			t.FailNow()
		}
	}
	st := replayed(t, h, keyOrder)
	if !reflect.DeepEqual(durableView(st), want) {
		t.Fatal("key-order replay differs")
	}
	// A reloaded group keeps working: derived state (holders, configured topology) rebuilds.
	g := st.Groups["g"].(*StreamsGroup)
	if g.StateName() != h.group("g").StateName() {
		t.Fatalf("state after reload %s, live %s", g.StateName(), h.group("g").StateName())
	}
	if !reflect.DeepEqual(g.holders, h.group("g").holders) {
		t.Fatal("task holder index differs after reload")
	}
}

func TestStreamsRecordsRoundTripAndCorrupt(t *testing.T) {
	m := &streamsMemberMeta{ClientID: "c", ClientHost: "h", RebalanceTimeout: 5, TopologyEpoch: 2, ProcessID: "p",
		UserEndpoint: &streamsEndpoint{Host: "x", Port: 65535}, ClientTags: map[string]string{"a": "1", "b": "2"}}
	got, err := decodeStreamsMemberMeta(encodeStreamsMemberMeta(m))
	if err != nil || !got.equal(m) {
		t.Fatalf("member metadata round trip: %v %+v", err, got)
	}
	v := &streamsMetadataValue{Epoch: 3, MetadataHash: -5, ValidatedTopologyEpoch: 2, StoredTopologyEpoch: 7, LastFailedTopologyEpoch: 6,
		LastAssignmentConfigs: map[string]string{"num.standby.replicas": "1"}}
	gv, err := decodeStreamsMetadata(encodeStreamsMetadata(v))
	if err != nil || !reflect.DeepEqual(gv, v) {
		t.Fatalf("metadata round trip: %v %+v", err, gv)
	}
	c := &streamsCurrent{MemberEpoch: 4, PreviousMemberEpoch: 3, State: 1, Assigned: newStreamsTaskSet(), PendingRevocation: newStreamsTaskSet()}
	c.Assigned.Active[streamsTask{"0", 1}] = 4
	c.PendingRevocation.Standby[streamsTask{"1", 0}] = 0
	gc, err := decodeStreamsCurrent(encodeStreamsCurrent(c))
	if err != nil || !reflect.DeepEqual(gc, c) {
		t.Fatalf("current round trip: %v %+v", err, gc)
	}
	tp, _ := streamsTopologyFromRequest(topology(3, topoSub{id: "0", sources: []string{"a"}, sinks: []string{"r"},
		changelogs: []string{"cl"}, repartition: []kmsg.TopicInfo{{Topic: "r", NumPartitions: 2}}, copart: [][]int16{{0}}}))
	gt, err := decodeStreamsTopology(encodeStreamsTopology(tp))
	if err != nil || !gt.sameAs(tp) || gt.Epoch != 3 {
		t.Fatalf("topology round trip: %v %+v", err, gt)
	}
	// Truncations and bad versions are ErrCorruptRecord, never a panic.
	st := NewState(0, testConfig(), nil, &testIDs{})
	for _, typ := range []int16{RecStreamsGroupMetadata, RecStreamsGroupMemberMetadata, RecStreamsGroupTargetMetadata,
		RecStreamsGroupTargetMember, RecStreamsGroupCurrentMember, RecStreamsGroupTopology} {
		var key []byte
		if typ == RecStreamsGroupMemberMetadata || typ == RecStreamsGroupTargetMember || typ == RecStreamsGroupCurrentMember {
			key = groupKey(typ, "g", "m")
		} else {
			key = groupKey(typ, "g")
		}
		for _, val := range [][]byte{{0}, {0, 1, 0, 0}, {0, 0, 0xff, 0xff, 0xff}} {
			if err := st.replay(Record{Key: key, Value: val}); err == nil {
				t.Fatalf("type %d value %x: want an error", typ, val)
			}
		}
		if err := st.replay(Record{Key: key[:3]}); err == nil {
			t.Fatalf("type %d: truncated key accepted", typ)
		}
	}
}

func TestStreamsDescribe(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 2, "app-store-changelog", 2))
	inst, rack := "i1", "r1"
	m := newTMember("m1", "p1", simpleTopology(5))
	m.instance = &inst
	m.endpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "iq", Port: 7070}
	req := m.request("g")
	req.RackID = &rack
	req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{{Key: "zone", Value: "z1"}}
	req.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 1, Offset: 40}}
	req.TaskEndOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 1, Offset: 50}}
	m.apply(h.hb(req))
	h.converge("g", []*tMember{m}, 5)
	run(h, func(st *State, c *Call[Ack]) {
		st.Groups["classic"] = newSimpleClassicGroup("classic")
		c.Reply(st, Ack{})
	})

	out := run(h, DescribeStreamsGroups([]string{"g", "nope", "", "classic"}, 1)).Groups
	if len(out) != 4 {
		t.Fatalf("%d groups", len(out))
	}
	d := out[0]
	g := h.group("g")
	if d.ErrorCode != 0 || d.Group != "g" || d.State != "Stable" || d.Epoch != g.GroupEpoch() || d.AssignmentEpoch != g.TargetAssignmentEpoch() {
		t.Fatalf("group fields %+v", d)
	}
	if d.AssignorName == nil || *d.AssignorName != "sticky" || d.TopologyDescriptionStatus != 0 || d.TopologyDescription != nil {
		t.Fatalf("v1 fields %v %d", d.AssignorName, d.TopologyDescriptionStatus)
	}
	if d.AuthorizedOperations != -2147483648 {
		t.Fatalf("authorized operations %d", d.AuthorizedOperations)
	}
	tp := d.Topology
	if tp == nil || tp.Epoch != 5 || len(tp.Subtopologies) != 1 {
		t.Fatalf("topology %+v", tp)
	}
	s := tp.Subtopologies[0]
	if s.SubtopologyID != "0" || !reflect.DeepEqual(s.SourceTopics, []string{"input"}) || len(s.StateChangelogTopics) != 1 ||
		s.StateChangelogTopics[0].Topic != "app-store-changelog" || s.StateChangelogTopics[0].NumPartitions != 2 {
		t.Fatalf("subtopology %+v", s)
	}
	if len(d.Members) != 1 {
		t.Fatalf("members %d", len(d.Members))
	}
	dm := d.Members[0]
	if dm.MemberID != "m1" || dm.MemberEpoch != g.GroupEpoch() || *dm.InstanceID != "i1" || *dm.RackID != "r1" ||
		dm.ClientID != "client" || dm.ClientHost != "/127.0.0.1" || dm.TopologyEpoch != 5 || dm.ProcessID != "p1" || dm.IsClassic {
		t.Fatalf("member fields %+v", dm)
	}
	if dm.UserEndpoint == nil || dm.UserEndpoint.Host != "iq" || dm.UserEndpoint.Port != 7070 {
		t.Fatalf("endpoint %+v", dm.UserEndpoint)
	}
	if len(dm.ClientTags) != 1 || dm.ClientTags[0].Key != "zone" || dm.ClientTags[0].Value != "z1" {
		t.Fatalf("tags %+v", dm.ClientTags)
	}
	if len(dm.TaskOffsets) != 1 || dm.TaskOffsets[0].Offset != 40 || len(dm.TaskEndOffsets) != 1 || dm.TaskEndOffsets[0].Offset != 50 {
		t.Fatalf("task offsets %+v %+v", dm.TaskOffsets, dm.TaskEndOffsets)
	}
	want := []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0, 1}}}
	if !reflect.DeepEqual(dm.Assignment.ActiveTasks, want) || !reflect.DeepEqual(dm.TargetAssignment.ActiveTasks, want) ||
		len(dm.Assignment.StandbyTasks) != 0 || len(dm.TargetAssignment.WarmupTasks) != 0 {
		t.Fatalf("assignment %+v target %+v", dm.Assignment, dm.TargetAssignment)
	}
	for i, wantCode := range []*kerr.Error{nil, kerr.GroupIDNotFound, kerr.InvalidGroupID, kerr.GroupIDNotFound} {
		var code int16
		if wantCode != nil {
			code = wantCode.Code
		}
		if out[i].ErrorCode != code || (code != 0 && out[i].ErrorMessage == nil) {
			t.Fatalf("group %d: code %d, want %d", i, out[i].ErrorCode, code)
		}
	}
	// v0: no v1 fields; NotReady group lists the declared topology.
	h.topics.Delete("input")
	h.beat("g", m)
	d0 := run(h, DescribeStreamsGroups([]string{"g"}, 0)).Groups[0]
	if d0.AssignorName != nil || d0.State != "NotReady" || d0.Topology == nil || len(d0.Topology.Subtopologies) != 1 {
		t.Fatalf("v0 NotReady %+v", d0)
	}
}
