package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

type rawStreamsMember struct {
	id, process             string
	epoch                   int32
	endpointEpoch           int32
	active, standby, warmup []kmsg.TaskIDs
	statuses                []int8
}

func (m *rawStreamsMember) request(group string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.EndpointInformationEpoch = group, m.id, m.epoch, m.endpointEpoch
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		p := m.process
		req.ProcessID = &p
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID = "0"
		sub.SourceTopics = []string{"words"}
		cl := kmsg.NewTopicInfo()
		cl.Topic = "wordcount-store-changelog"
		sub.StateChangelogTopics = []kmsg.TopicInfo{cl}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub}
		req.Topology = &topo
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	} else {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = nonNil(m.active), nonNil(m.standby), nonNil(m.warmup)
	}
	return req
}

func nonNil(t []kmsg.TaskIDs) []kmsg.TaskIDs {
	if t == nil {
		return []kmsg.TaskIDs{}
	}
	return t
}

func countTasks(t []kmsg.TaskIDs) int {
	n := 0
	for _, x := range t {
		n += len(x.Partitions)
	}
	return n
}

// TestStreamsGroupTwoMembersRawHeartbeats drives two streams members with raw
// StreamsGroupHeartbeat requests over loopback: the broker creates the changelog topic, the
// members converge on 2+2 of the 4 tasks, and StreamsGroupDescribe shows a Stable group.
func TestStreamsGroupTwoMembersRawHeartbeats(t *testing.T) {
	b := testutil.Start(t, "group.streams.initial.rebalance.delay.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "words"); err != nil {
		t.Fatal(err)
	}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil || len(meta.Brokers) != 1 {
		t.Fatalf("metadata: %v", err)
	}
	// kgo does not shard KIP-1071 requests itself; the single broker is every group's
	// coordinator, so requests go to it directly.
	br := cl.Broker(int(meta.Brokers[0].NodeID))
	ms := []*rawStreamsMember{{id: "member-a", process: "proc-a"}, {id: "member-b", process: "proc-b"}}
	stable := false
	for round := 0; round < 30 && !stable; round++ {
		for _, m := range ms {
			resp, err := m.request("wordcount").RequestWith(ctx, br)
			if err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			if resp.ErrorCode != 0 {
				t.Fatalf("heartbeat error %d %v", resp.ErrorCode, resp.ErrorMessage)
			}
			m.epoch, m.endpointEpoch = resp.MemberEpoch, resp.EndpointInformationEpoch
			if resp.ActiveTasks != nil {
				m.active, m.standby, m.warmup = resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks
			}
			m.statuses = m.statuses[:0]
			for _, s := range resp.Status {
				m.statuses = append(m.statuses, s.StatusCode)
			}
		}
		dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
		dreq.Groups = []string{"wordcount"}
		dresp, err := dreq.RequestWith(ctx, br)
		if err != nil {
			t.Fatal(err)
		}
		g := dresp.Groups[0]
		stable = g.ErrorCode == 0 && g.State == "Stable" && countTasks(ms[0].active) == 2 && countTasks(ms[1].active) == 2 &&
			ms[0].epoch == g.Epoch && ms[1].epoch == g.Epoch
	}
	if !stable {
		t.Fatalf("did not converge: a=%v b=%v statuses %v %v", ms[0].active, ms[1].active, ms[0].statuses, ms[1].statuses)
	}
	topics, err := adm.ListTopics(ctx, "wordcount-store-changelog")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := topics["wordcount-store-changelog"]; !ok || len(d.Partitions) != 4 {
		t.Fatalf("changelog topic not created with 4 partitions: %+v", topics)
	}
	// Both leave; the group is Empty.
	for _, m := range ms {
		req := m.request("wordcount")
		req.MemberEpoch = -1
		resp, err := req.RequestWith(ctx, br)
		if err != nil || resp.ErrorCode != 0 || resp.MemberEpoch != -1 {
			t.Fatalf("leave: %v %+v", err, resp)
		}
	}
	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups = []string{"wordcount"}
	dresp, err := dreq.RequestWith(ctx, br)
	if err != nil || dresp.Groups[0].State != "Empty" {
		t.Fatalf("after leave: %v %+v", err, dresp)
	}
}
