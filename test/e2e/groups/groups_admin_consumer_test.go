package groups

import (
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// otConsumerJoin joins a KIP-848 consumer group with ConsumerGroupHeartbeat v1 (client-chosen
// member id, epoch 0) subscribed to topics and returns the member epoch.
func otConsumerJoin(t *testing.T, addr, group, member string, topics ...string) int32 {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, member, 0
	req.RebalanceTimeoutMillis = 30000
	req.SubscribedTopicNames = topics
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp := otSend[*kmsg.ConsumerGroupHeartbeatResponse](t, addr, 1, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("consumer heartbeat %s: error %d", group, resp.ErrorCode)
	}
	return resp.MemberEpoch
}

func otConsumerLeave(t *testing.T, addr, group, member string) {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, member, -1
	if resp := otSend[*kmsg.ConsumerGroupHeartbeatResponse](t, addr, 1, req); resp.ErrorCode != 0 {
		t.Fatalf("consumer leave %s: error %d", group, resp.ErrorCode)
	}
}

// TestAdminOnConsumerGroup: the offset and group admin RPCs on a KIP-848 consumer group —
// ListGroups type/protocol/filters, DescribeGroups (not a classic group), OffsetDelete allowed
// while members exist but refused per subscribed topic, DeleteGroups NON_EMPTY_GROUP until
// Empty, offsets readable (also after a restart), gauges by protocol and state.
func TestAdminOnConsumerGroup(t *testing.T) {
	b, _ := otDescribeFixture(t)
	addr := b.Addr()
	const member = "2MjDGQ4vT2uJIL0nQ8OuYw"
	epoch := otConsumerJoin(t, addr, "cg", member, "t1")
	otCommitAt(t, addr, 9, "cg", epoch, member, -1, map[string]map[int32]otOffset{
		"t1": {0: {11, -1, "a"}}, "t2": {0: {12, -1, "b"}, 1: {13, -1, ""}},
	})
	if got := otFetchAll(t, addr, "cg"); len(got) != 3 {
		t.Fatalf("consumer group offsets %v", got)
	}

	// ListGroups v5: type consumer, protocol type consumer; filters.
	listed := otListed(t, addr)
	if got := listed["cg"]; got != "consumer/consumer/Reconciling" && got != "consumer/consumer/Stable" && got != "consumer/consumer/Assigning" {
		t.Errorf("cg listed as %q", got)
	}
	req := kmsg.NewPtrListGroupsRequest()
	req.TypesFilter = []string{"Consumer"}
	var ids []string
	for _, g := range otSend[*kmsg.ListGroupsResponse](t, addr, 5, req).Groups {
		ids = append(ids, g.Group)
	}
	if !reflect.DeepEqual(ids, []string{"cg"}) {
		t.Errorf("types filter consumer: %v", ids)
	}
	req.TypesFilter = []string{"classic"}
	ids = nil
	for _, g := range otSend[*kmsg.ListGroupsResponse](t, addr, 5, req).Groups {
		ids = append(ids, g.Group)
	}
	sort.Strings(ids)
	if !reflect.DeepEqual(ids, []string{"connect", "empty", "simple", "stable"}) {
		t.Errorf("types filter classic: %v", ids)
	}

	// DescribeGroups: a consumer group is not a classic group.
	for v := int16(0); v <= 6; v++ {
		d := otDescribe(t, addr, v, "cg")[0]
		wantCode := int16(0)
		if v >= 6 {
			wantCode = 69
		}
		if d.State != "Dead" || d.ErrorCode != wantCode || len(d.Members) != 0 {
			t.Errorf("v%d describe cg: %+v", v, d)
		}
		if v >= 6 && (d.ErrorMessage == nil || *d.ErrorMessage != "Group cg is not a classic group.") {
			t.Errorf("v%d describe cg message %v", v, d.ErrorMessage)
		}
	}

	// OffsetDelete: no group-level check; subscribed t1 refused, t2 deleted.
	r := otOffsetDelete(t, addr, "cg", map[string][]int32{"t1": {0}, "t2": {0, 1}})
	if want := map[string]int16{"t1/0": 86, "t2/0": 0, "t2/1": 0}; r.ErrorCode != 0 || !reflect.DeepEqual(otDeleteCodes(r), want) {
		t.Errorf("offset delete: error %d codes %v, want %v", r.ErrorCode, otDeleteCodes(r), want)
	}
	if got := otFetchAll(t, addr, "cg"); !reflect.DeepEqual(got, map[string]otOffset{"t1/0": {11, -1, "a"}}) {
		t.Errorf("after offset delete: %v", got)
	}

	// DeleteGroups: NON_EMPTY_GROUP while the member is there.
	dreq := kmsg.NewPtrDeleteGroupsRequest()
	dreq.Groups = []string{"cg"}
	if g := otSend[*kmsg.DeleteGroupsResponse](t, addr, 2, dreq).Groups[0]; g.ErrorCode != 68 {
		t.Errorf("delete non-empty consumer group: %d, want 68", g.ErrorCode)
	}
	m := otMetrics(t, b)
	if m[`muster_group_coordinator_group_count{protocol="consumer"}`] != 1 {
		t.Errorf("consumer group gauge %v", m[`muster_group_coordinator_group_count{protocol="consumer"}`])
	}

	// A restart loads offsets before the group records; the group comes back as a consumer group
	// with its offsets.
	b = b.Restart()
	addr = b.Addr()
	if got := otListed(t, addr)["cg"]; len(got) < 9 || got[:9] != "consumer/" {
		t.Errorf("after restart cg listed as %q", got)
	}
	if got := otFetchAll(t, addr, "cg"); !reflect.DeepEqual(got, map[string]otOffset{"t1/0": {11, -1, "a"}}) {
		t.Errorf("after restart: %v", got)
	}

	// Empty: deletable, offsets go with it.
	otConsumerLeave(t, addr, "cg", member)
	if got := otListed(t, addr)["cg"]; got != "consumer/consumer/Empty" {
		t.Errorf("after leave cg listed as %q", got)
	}
	if g := otSend[*kmsg.DeleteGroupsResponse](t, addr, 3, dreq).Groups[0]; g.ErrorCode != 0 {
		t.Errorf("delete empty consumer group: %d", g.ErrorCode)
	}
	if _, ok := otListed(t, addr)["cg"]; ok {
		t.Errorf("cg still listed after delete")
	}
	if got := otFetchAll(t, addr, "cg"); len(got) != 0 {
		t.Errorf("cg offsets after delete: %v", got)
	}
	if m := otMetrics(t, b); m[`muster_group_coordinator_group_count{protocol="consumer"}`] != 0 {
		t.Errorf("consumer group gauge after delete %v", m[`muster_group_coordinator_group_count{protocol="consumer"}`])
	}
}

// TestOffsetExpiryConsumerGroup (Kafka's GroupCoordinatorShard.cleanupGroupMetadata): a consumer
// group's offsets expire from their commit time, except those of topics a member subscribes to;
// once Empty with no offsets left the group is deleted (its records tombstoned: it stays gone after
// a restart).
func TestOffsetExpiryConsumerGroup(t *testing.T) {
	clock := coordtest.NewManualClock(time.UnixMilli(1_800_000_000_000))
	b := testutil.StartIn(t, t.TempDir(), clock, "offsets.retention.ms=1000", "offsets.retention.check.interval.ms=100")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 1, "t2": 1})
	const member = "Xq3p5lC3S0mCgmYj0y3zqA"
	epoch := otConsumerJoin(t, addr, "cg", member, "t1")
	otCommitAt(t, addr, 9, "cg", epoch, member, -1, map[string]map[int32]otOffset{"t1": {0: {1, -1, ""}}, "t2": {0: {2, -1, ""}}})
	for i := 0; i < 10; i++ {
		clock.Advance(100 * time.Millisecond)
	}
	if got := otSettledFetch(t, addr, "cg"); !reflect.DeepEqual(got, map[string]otOffset{"t1/0": {1, -1, ""}}) {
		t.Fatalf("after retention: %v, want only subscribed t1/0", got)
	}
	otConsumerLeave(t, addr, "cg", member)
	clock.Advance(100 * time.Millisecond) // commit time + 1.1 s: t1/0 expires now that nobody subscribes
	if got := otSettledFetch(t, addr, "cg"); len(got) != 0 {
		t.Errorf("after leaving: %v, want expired", got)
	}
	if _, ok := otListed(t, addr)["cg"]; ok {
		t.Errorf("empty consumer group without offsets not deleted")
	}
	b = b.Restart()
	if _, ok := otListed(t, b.Addr())["cg"]; ok {
		t.Errorf("expired consumer group back after restart")
	}
}
