package groups

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

func otOffsetDelete(t *testing.T, addr, group string, tps map[string][]int32) *kmsg.OffsetDeleteResponse {
	t.Helper()
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	for _, topic := range otSortedKeys(tps) {
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = topic
		for _, p := range tps[topic] {
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return otSend[*kmsg.OffsetDeleteResponse](t, addr, 0, req)
}

func otDeleteCodes(resp *kmsg.OffsetDeleteResponse) map[string]int16 {
	out := map[string]int16{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			out[rt.Topic+"/"+string(rune('0'+rp.Partition))] = rp.ErrorCode
		}
	}
	return out
}

// TestOffsetDelete is KIP-496 (Kafka's OffsetMetadataManager.deleteOffsets) with exact codes.
func TestOffsetDelete(t *testing.T) {
	b, _ := otDescribeFixture(t)
	addr := b.Addr()
	before := otMetrics(t, b)

	// Unknown group → GROUP_ID_NOT_FOUND (69), top level, no partitions.
	r := otOffsetDelete(t, addr, "unknown", map[string][]int32{"t1": {0}})
	if r.ErrorCode != 69 || len(r.Topics) != 0 {
		t.Errorf("unknown group: error %d topics %v, want 69 and none", r.ErrorCode, r.Topics)
	}
	// Empty group id → INVALID_GROUP_ID (24).
	if r := otOffsetDelete(t, addr, "", map[string][]int32{"t1": {0}}); r.ErrorCode != 24 {
		t.Errorf("empty group id: error %d, want 24", r.ErrorCode)
	}
	// Classic group, not Empty, protocol type connect → NON_EMPTY_GROUP (68), nothing deleted.
	if r := otOffsetDelete(t, addr, "connect", map[string][]int32{"t1": {0}}); r.ErrorCode != 68 || len(r.Topics) != 0 {
		t.Errorf("connect group: error %d topics %v, want 68", r.ErrorCode, r.Topics)
	}
	if got := otFetchAll(t, addr, "connect"); len(got) != 1 {
		t.Errorf("connect offsets after refused delete: %v", got)
	}

	// Stable consumer group subscribed to t1: every t1 partition → GROUP_SUBSCRIBED_TO_TOPIC (86),
	// nothing deleted; t2 (not subscribed) → NONE, deleted (and NONE without an offset).
	otCommitMember(t, addr, "stable", otStableGen(t, addr), otStableMember(t, addr),
		map[string]map[int32]otOffset{"t2": {0: {3, -1, ""}}})
	r = otOffsetDelete(t, addr, "stable", map[string][]int32{"t1": {0, 1, 2}, "t2": {0, 1}})
	if r.ErrorCode != 0 {
		t.Fatalf("stable: top-level error %d", r.ErrorCode)
	}
	want := map[string]int16{"t1/0": 86, "t1/1": 86, "t1/2": 86, "t2/0": 0, "t2/1": 0}
	if got := otDeleteCodes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("stable: codes %v, want %v", got, want)
	}
	if got := otFetchAll(t, addr, "stable"); !reflect.DeepEqual(got, map[string]otOffset{"t1/1": {7, 2, "s"}}) {
		t.Errorf("stable offsets after delete: %v", got)
	}

	// Empty group: everything deleted, also partitions without offsets answer NONE.
	r = otOffsetDelete(t, addr, "empty", map[string][]int32{"t2": {0, 1}, "t1": {2}})
	want = map[string]int16{"t2/0": 0, "t2/1": 0, "t1/2": 0}
	if got := otDeleteCodes(r); r.ErrorCode != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("empty: error %d codes %v, want %v", r.ErrorCode, got, want)
	}
	if got := otFetchAll(t, addr, "empty"); len(got) != 0 {
		t.Errorf("empty offsets after delete: %v", got)
	}
	// Simple group (no protocol type): deletable, one of its offsets.
	otOffsetDelete(t, addr, "simple", map[string][]int32{"t2": {1}})
	if got := otFetchAll(t, addr, "simple"); len(got) != 2 {
		t.Errorf("simple offsets after delete: %v", got)
	}

	// offset-deletions counts tombstones: stable t2/0, empty t2/0 and t2/1, simple t2/1.
	after := otMetrics(t, b)
	if d := after["muster_group_coordinator_offset_deletions_total"] - before["muster_group_coordinator_offset_deletions_total"]; d != 4 {
		t.Errorf("offset_deletions_total moved by %v, want 4", d)
	}
	if d := after["muster_group_coordinator_offset_count"] - before["muster_group_coordinator_offset_count"]; d != -3 {
		// +1 commit (stable t2/0) −4 deletions.
		t.Errorf("offset_count moved by %v, want -3", d)
	}

	// Deletions are durable.
	b = b.Restart()
	if got := otFetchAll(t, b.Addr(), "empty"); len(got) != 0 {
		t.Errorf("empty offsets after restart: %v", got)
	}
}

// otStableMember / otStableGen read the "stable" group's only member with DescribeGroups.
func otStableMember(t *testing.T, addr string) string {
	d := otDescribe(t, addr, 5, "stable")[0]
	return d.Members[0].MemberID
}

func otStableGen(t *testing.T, addr string) int32 {
	// The fixture's groups each completed exactly one rebalance.
	return 1
}

func otDescribe(t *testing.T, addr string, v int16, groups ...string) []kmsg.DescribeGroupsResponseGroup {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = groups
	return otSend[*kmsg.DescribeGroupsResponse](t, addr, v, req).Groups
}

// TestDeleteGroups (Kafka's GroupCoordinatorShard.deleteGroups): unknown → GROUP_ID_NOT_FOUND, not
// Empty → NON_EMPTY_GROUP, Empty → deleted with its offsets and records (gone after a restart);
// v0–v3.
func TestDeleteGroups(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		b, _ := otDescribeFixture(t)
		addr := b.Addr()
		before := otMetrics(t, b)
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"empty", "stable", "unknown", "simple", "connect", ""}
		resp := otSend[*kmsg.DeleteGroupsResponse](t, addr, v, req)
		got := map[string]int16{}
		msgs := map[string]string{}
		for _, g := range resp.Groups {
			got[g.Group] = g.ErrorCode
			if g.ErrorMessage != nil {
				msgs[g.Group] = *g.ErrorMessage
			}
		}
		want := map[string]int16{"empty": 0, "stable": 68, "unknown": 69, "simple": 0, "connect": 68, "": 69}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d codes %v, want %v", v, got, want)
		}
		// Like Kafka's shard, these errors carry no ErrorMessage (v3 has the field).
		wantMsgs := map[string]string{}
		if !reflect.DeepEqual(msgs, wantMsgs) {
			t.Errorf("v%d messages %q, want %q", v, msgs, wantMsgs)
		}
		check := func(b *testutil.Broker, when string) {
			listed := otListed(t, b.Addr())
			for _, g := range []string{"empty", "simple"} {
				if _, ok := listed[g]; ok {
					t.Errorf("v%d %s: deleted group %s still listed", v, when, g)
				}
				if o := otFetchAll(t, b.Addr(), g); len(o) != 0 {
					t.Errorf("v%d %s: deleted group %s still has offsets %v", v, when, g, o)
				}
			}
			for _, g := range []string{"stable", "connect"} {
				if _, ok := listed[g]; !ok {
					t.Errorf("v%d %s: group %s gone", v, when, g)
				}
			}
		}
		check(b, "now")
		after := otMetrics(t, b)
		if d := after["muster_group_coordinator_offset_count"] - before["muster_group_coordinator_offset_count"]; d != -5 {
			t.Errorf("v%d offset_count moved by %v, want -5", v, d)
		}
		if d := after[`muster_group_coordinator_group_count{protocol="classic"}`] - before[`muster_group_coordinator_group_count{protocol="classic"}`]; d != -2 {
			t.Errorf("v%d group_count{classic} moved by %v, want -2", v, d)
		}
		check(b.Restart(), "after restart")
	}
}

// TestListGroups (Kafka's GroupMetadataManager.listGroups): v0–v5, StatesFilter (v4+) and
// TypesFilter (v5+) case-insensitive, unknown type matches nothing, GroupType on v5.
func TestListGroups(t *testing.T) {
	b, _ := otDescribeFixture(t)
	addr := b.Addr()
	all := []string{"connect", "empty", "simple", "stable"}
	for v := int16(0); v <= 5; v++ {
		resp := otSend[*kmsg.ListGroupsResponse](t, addr, v, kmsg.NewPtrListGroupsRequest())
		var ids []string
		for _, g := range resp.Groups {
			ids = append(ids, g.Group)
			wantPT := map[string]string{"connect": "connect", "empty": "consumer", "simple": "", "stable": "consumer"}[g.Group]
			if g.ProtocolType != wantPT {
				t.Errorf("v%d %s protocol type %q, want %q", v, g.Group, g.ProtocolType, wantPT)
			}
			wantType := ""
			if v >= 5 {
				wantType = "classic"
			}
			if g.GroupType != wantType {
				t.Errorf("v%d %s group type %q, want %q", v, g.Group, g.GroupType, wantType)
			}
			wantState := ""
			if v >= 4 {
				wantState = map[string]string{"connect": "Stable", "empty": "Empty", "simple": "Empty", "stable": "Stable"}[g.Group]
			}
			if g.GroupState != wantState {
				t.Errorf("v%d %s state %q, want %q", v, g.Group, g.GroupState, wantState)
			}
		}
		sort.Strings(ids)
		if resp.ErrorCode != 0 || !reflect.DeepEqual(ids, all) {
			t.Errorf("v%d: error %d groups %v, want %v", v, resp.ErrorCode, ids, all)
		}
	}
	list := func(v int16, states, types []string) string {
		req := kmsg.NewPtrListGroupsRequest()
		req.StatesFilter, req.TypesFilter = states, types
		resp := otSend[*kmsg.ListGroupsResponse](t, addr, v, req)
		var ids []string
		for _, g := range resp.Groups {
			ids = append(ids, g.Group)
		}
		sort.Strings(ids)
		return strings.Join(ids, ",")
	}
	for _, tc := range []struct {
		v             int16
		states, types []string
		want          string
	}{
		{4, []string{"EMPTY"}, nil, "empty,simple"},
		{4, []string{" stable "}, nil, "connect,stable"},
		{4, []string{"Stable", "empty"}, nil, "connect,empty,simple,stable"},
		{4, []string{"PreparingRebalance"}, nil, ""},
		{4, []string{"bogus"}, nil, ""},
		{5, nil, []string{"CLASSIC"}, "connect,empty,simple,stable"},
		{5, nil, []string{"Consumer"}, ""},
		{5, nil, []string{"bogus"}, ""},
		{5, []string{"stable"}, []string{"classic", "streams"}, "connect,stable"},
	} {
		if got := list(tc.v, tc.states, tc.types); got != tc.want {
			t.Errorf("v%d states %q types %q: %q, want %q", tc.v, tc.states, tc.types, got, tc.want)
		}
	}
}

// TestDescribeGroups (Kafka's GroupMetadataManager.describeGroups): v0–v6; unknown → Dead, with
// GROUP_ID_NOT_FOUND and a message on v6 only; Stable → members with metadata and assignment and
// the protocol name; Empty → no members.
func TestDescribeGroups(t *testing.T) {
	b, _ := otDescribeFixture(t)
	addr := b.Addr()
	for v := int16(0); v <= 6; v++ {
		ds := otDescribe(t, addr, v, "stable", "empty", "unknown")
		if len(ds) != 3 {
			t.Fatalf("v%d: %d groups", v, len(ds))
		}
		st, em, un := ds[0], ds[1], ds[2]
		if st.ErrorCode != 0 || st.State != "Stable" || st.ProtocolType != "consumer" || st.Protocol != "range" || len(st.Members) != 1 {
			t.Errorf("v%d stable: %+v", v, st)
		} else {
			var meta kmsg.ConsumerMemberMetadata
			if err := meta.ReadFrom(st.Members[0].ProtocolMetadata); err != nil || !reflect.DeepEqual(meta.Topics, []string{"t1"}) {
				t.Errorf("v%d stable member metadata %v (%v)", v, meta.Topics, err)
			}
			if len(st.Members[0].MemberAssignment) == 0 {
				t.Errorf("v%d stable member has no assignment", v)
			}
		}
		if em.ErrorCode != 0 || em.State != "Empty" || em.ProtocolType != "consumer" || len(em.Members) != 0 {
			t.Errorf("v%d empty: %+v", v, em)
		}
		wantCode := int16(0)
		var wantMsg *string
		if v >= 6 {
			wantCode = 69
			m := "Group unknown not found."
			wantMsg = &m
		}
		if un.State != "Dead" || un.ErrorCode != wantCode || !reflect.DeepEqual(un.ErrorMessage, wantMsg) || un.Group != "unknown" {
			t.Errorf("v%d unknown: state %q code %d message %v", v, un.State, un.ErrorCode, un.ErrorMessage)
		}
	}
}

// TestUnknownTopicPartitions: like KafkaApis, OffsetCommit and OffsetDelete answer partitions of a
// topic that does not exist, or beyond its partition count, UNKNOWN_TOPIC_OR_PARTITION (3) and
// handle the others normally, in request order.
func TestUnknownTopicPartitions(t *testing.T) {
	b := testutil.Start(t)
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 2})
	codes := otCommitAt(t, addr, 8, "g", -1, "", -1, map[string]map[int32]otOffset{
		"t1": {0: {1, -1, ""}, 2: {2, -1, ""}}, "nosuch": {0: {3, -1, ""}},
	})
	if want := map[string]int16{"t1/0": 0, "t1/2": 3, "nosuch/0": 3}; !reflect.DeepEqual(codes, want) {
		t.Errorf("commit codes %v, want %v", codes, want)
	}
	if got := otFetchAll(t, addr, "g"); !reflect.DeepEqual(got, map[string]otOffset{"t1/0": {1, -1, ""}}) {
		t.Errorf("committed %v", got)
	}
	// Only unknown partitions: nothing reaches the coordinator, no group is created.
	otCommitAt(t, addr, 8, "ghost", -1, "", -1, map[string]map[int32]otOffset{"nosuch": {0: {3, -1, ""}}})
	if _, ok := otListed(t, addr)["ghost"]; ok {
		t.Errorf("a commit of unknown partitions created group ghost")
	}
	r := otOffsetDelete(t, addr, "g", map[string][]int32{"t1": {5, 0}, "nosuch": {1}})
	if r.ErrorCode != 0 || len(r.Topics) != 2 || r.Topics[1].Topic != "t1" || r.Topics[1].Partitions[0].Partition != 5 {
		t.Fatalf("delete response %+v", r)
	}
	if want := map[string]int16{"t1/5": 3, "t1/0": 0, "nosuch/1": 3}; !reflect.DeepEqual(otDeleteCodes(r), want) {
		t.Errorf("delete codes %v, want %v", otDeleteCodes(r), want)
	}
	if got := otFetchAll(t, addr, "g"); len(got) != 0 {
		t.Errorf("offsets after delete %v", got)
	}
	// The group check still applies when every partition is unknown.
	if r := otOffsetDelete(t, addr, "unknown", map[string][]int32{"nosuch": {0}}); r.ErrorCode != 69 {
		t.Errorf("unknown group, unknown topic: error %d, want 69", r.ErrorCode)
	}
}

// TestOffsetCommitValidation (Kafka's OffsetMetadataManager.commitOffset): group/member checks of
// OffsetCommit, whole-request errors copied to every partition.
func TestOffsetCommitValidation(t *testing.T) {
	b, _ := otDescribeFixture(t)
	addr := b.Addr()
	one := map[string]map[int32]otOffset{"t1": {0: {1, -1, ""}, 1: {2, -1, ""}}}
	st := otStableMember(t, addr)
	for _, tc := range []struct {
		name    string
		version int16
		group   string
		gen     int32
		member  string
		want    int16
	}{
		{"unknown group, generation ≥ 0, v8", 8, "nope", 1, "m", 22},
		{"unknown group, generation ≥ 0, v9", 9, "nope", 1, "m", 69},
		{"unknown group, admin", 9, "nope2", -1, "", 0},
		{"Stable group, admin commit", 8, "stable", -1, "", 25},
		{"Stable group, unknown member", 8, "stable", 1, "ghost", 25},
		{"Stable group, wrong generation", 8, "stable", 7, st, 22},
		{"Stable group, member", 8, "stable", 1, st, 0},
		{"Empty group, admin commit", 8, "empty", -1, "", 0},
	} {
		codes := otCommitAt(t, addr, tc.version, tc.group, tc.gen, tc.member, -1, one)
		if codes["t1/0"] != tc.want || codes["t1/1"] != tc.want {
			t.Errorf("%s: codes %v, want %d on every partition", tc.name, codes, tc.want)
		}
	}
	if _, ok := otListed(t, addr)["nope"]; ok {
		t.Errorf("a refused commit created group nope")
	}
	if otListed(t, addr)["nope2"] != "classic//Empty" {
		t.Errorf("an admin commit did not create simple group nope2: %q", otListed(t, addr)["nope2"])
	}
}
