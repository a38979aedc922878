package groups

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// otStreamsJoin joins a KIP-1071 streams group with one subtopology reading source and returns
// the member epoch.
func otStreamsJoin(t *testing.T, addr, group, member, source string) int32 {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, member, 0
	req.RebalanceTimeoutMillis = 30000
	proc := "proc-" + member
	req.ProcessID = &proc
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	sub.SubtopologyID = "0"
	sub.SourceTopics = []string{source}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	resp := otSend[*kmsg.StreamsGroupHeartbeatResponse](t, addr, 0, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("streams heartbeat %s: error %d %v", group, resp.ErrorCode, resp.ErrorMessage)
	}
	return resp.MemberEpoch
}

// TestAdminOnStreamsGroup: ListGroups (type and protocol type "streams", case-insensitive state
// filter), DescribeGroups (not a classic group), OffsetDelete refused per source topic while the
// group has members, DeleteGroups NON_EMPTY_GROUP.
func TestAdminOnStreamsGroup(t *testing.T) {
	b, _ := otDescribeFixture(t)
	addr := b.Addr()
	epoch := otStreamsJoin(t, addr, "sg", "m1", "t1")
	codes := otCommitAt(t, addr, 9, "sg", epoch, "m1", -1, map[string]map[int32]otOffset{"t2": {0: {5, -1, ""}}})
	if codes["t2/0"] != 0 || len(otFetchAll(t, addr, "sg")) != 1 {
		t.Fatalf("member commit at the member epoch: %v", codes)
	}
	listed := otListed(t, addr)["sg"]
	parts := strings.Split(listed, "/")
	if len(parts) != 3 || parts[0] != "streams" || parts[1] != "streams" {
		t.Fatalf("sg listed as %q", listed)
	}
	state := parts[2]
	req := kmsg.NewPtrListGroupsRequest()
	filter := strings.ToUpper(state)
	if state == "NotReady" {
		filter = "NOT_READY"
	}
	req.StatesFilter, req.TypesFilter = []string{filter}, []string{"STREAMS"}
	var ids []string
	for _, g := range otSend[*kmsg.ListGroupsResponse](t, addr, 5, req).Groups {
		ids = append(ids, g.Group)
	}
	if !reflect.DeepEqual(ids, []string{"sg"}) {
		t.Errorf("state %q type STREAMS filter: %v", filter, ids)
	}
	d := otDescribe(t, addr, 6, "sg")[0]
	if d.ErrorCode != 69 || d.State != "Dead" || d.ErrorMessage == nil || *d.ErrorMessage != "Group sg is not a classic group." {
		t.Errorf("describe streams group: %+v", d)
	}
	r := otOffsetDelete(t, addr, "sg", map[string][]int32{"t1": {0, 1}, "t2": {0}})
	if want := map[string]int16{"t1/0": 86, "t1/1": 86, "t2/0": 0}; r.ErrorCode != 0 || !reflect.DeepEqual(otDeleteCodes(r), want) {
		t.Errorf("offset delete: error %d codes %v, want %v", r.ErrorCode, otDeleteCodes(r), want)
	}
	if got := otFetchAll(t, addr, "sg"); len(got) != 0 {
		t.Errorf("streams group offsets after delete: %v", got)
	}
	dreq := kmsg.NewPtrDeleteGroupsRequest()
	dreq.Groups = []string{"sg"}
	if g := otSend[*kmsg.DeleteGroupsResponse](t, addr, 3, dreq).Groups[0]; g.ErrorCode != 68 {
		t.Errorf("delete non-empty streams group: %d, want 68", g.ErrorCode)
	}
	// Offsets load before the group's records on a restart: the group must come back as a
	// streams group with its offsets.
	otCommitAt(t, addr, 9, "sg", epoch, "m1", -1, map[string]map[int32]otOffset{"t2": {1: {6, -1, "x"}}})
	b = b.Restart()
	addr = b.Addr()
	if got := otListed(t, addr)["sg"]; !strings.HasPrefix(got, "streams/streams/") {
		t.Errorf("after restart sg listed as %q", got)
	}
	if got := otFetchAll(t, addr, "sg"); !reflect.DeepEqual(got, map[string]otOffset{"t2/1": {6, -1, "x"}}) {
		t.Errorf("after restart sg offsets %v", got)
	}
	if m := otMetrics(t, b); m[`muster_group_coordinator_group_count{protocol="streams"}`] != 1 || m[`muster_group_coordinator_streams_group_count{state="`+state+`"}`] != 1 {
		t.Errorf("streams gauges: %v / %v", m[`muster_group_coordinator_group_count{protocol="streams"}`], m[`muster_group_coordinator_streams_group_count{state="`+state+`"}`])
	}
}
