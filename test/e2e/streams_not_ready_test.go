package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// KIP-1071 groups whose topology is not ready, over loopback with raw StreamsGroupHeartbeat
// requests (Kafka's GroupMetadataManager.streamsGroupHeartbeat: every join bumps the group epoch
// and a target assignment is computed whatever the topology's state, empty while it cannot be
// configured).

// nrMember is a raw streams member of a topology with one subtopology per source topic.
type nrMember struct {
	id      string
	sources []string
	epoch   int32
	active  []kmsg.TaskIDs
	status  []int8
}

func (m *nrMember) beat(t *testing.T, ctx context.Context, br *kgo.Broker, group string) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, m.id, m.epoch
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = nonNil(m.active), []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		p := "proc-" + m.id
		req.ProcessID = &p
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		for i, src := range m.sources {
			sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
			sub.SubtopologyID = string(rune('0' + i))
			sub.SourceTopics = []string{src}
			topo.Subtopologies = append(topo.Subtopologies, sub)
		}
		req.Topology = &topo
		req.ActiveTasks = []kmsg.TaskIDs{}
	}
	resp, err := req.RequestWith(ctx, br)
	if err != nil {
		t.Fatalf("heartbeat %s: %v", m.id, err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("heartbeat %s: error %d %s", m.id, resp.ErrorCode, strp(resp.ErrorMessage))
	}
	m.epoch = resp.MemberEpoch
	if resp.ActiveTasks != nil {
		m.active = resp.ActiveTasks
	}
	m.status = m.status[:0]
	for _, s := range resp.Status {
		m.status = append(m.status, s.StatusCode)
	}
	return resp
}

func (m *nrMember) has(code int8) bool {
	for _, s := range m.status {
		if s == code {
			return true
		}
	}
	return false
}

func nrDescribe(t *testing.T, ctx context.Context, br *kgo.Broker, group string) kmsg.StreamsGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, br)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("describe %s: %v %+v", group, err, resp)
	}
	return resp.Groups[0]
}

func nrBroker(t *testing.T, ctx context.Context, addr string) (*kgo.Broker, *kadm.Client) {
	t.Helper()
	cl := newClient(t, addr)
	adm := kadm.NewClient(cl)
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil || len(meta.Brokers) != 1 {
		t.Fatalf("metadata: %v", err)
	}
	return cl.Broker(int(meta.Brokers[0].NodeID)), adm
}

// TestStreamsJoinWithMissingSourceTopic: with auto.create.topics.enable=false and the source
// topic missing, a joining member gets member epoch = group epoch >= 1, no tasks and
// MISSING_SOURCE_TOPICS; the group is NotReady. When the topic is created, the next heartbeat
// bumps the group epoch and the tasks flow; the group becomes Stable.
func TestStreamsJoinWithMissingSourceTopic(t *testing.T) {
	b := testutil.Start(t, "auto.create.topics.enable=false", "group.streams.initial.rebalance.delay.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	br, adm := nrBroker(t, ctx, b.Addr())

	m := &nrMember{id: "m1", sources: []string{"events"}}
	resp := m.beat(t, ctx, br, "app")
	g := nrDescribe(t, ctx, br, "app")
	if m.epoch < 1 || m.epoch != g.Epoch || countTasks(resp.ActiveTasks) != 0 || resp.ActiveTasks == nil ||
		!m.has(coordinator.StreamsStatusMissingSourceTopics) {
		t.Fatalf("join: member epoch %d (group epoch %d), tasks %v, status %v; want epoch = group epoch >= 1, no tasks, MISSING_SOURCE_TOPICS",
			m.epoch, g.Epoch, resp.ActiveTasks, m.status)
	}
	if g.State != "NotReady" {
		t.Fatalf("group state %s, want NotReady", g.State)
	}
	joined := g.Epoch

	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	m.beat(t, ctx, br, "app")
	if m.epoch <= joined || countTasks(m.active) != 3 || len(m.status) != 0 {
		t.Fatalf("after the topic appeared: epoch %d (joined at %d), tasks %v, status %v", m.epoch, joined, m.active, m.status)
	}
	m.beat(t, ctx, br, "app")
	if g := nrDescribe(t, ctx, br, "app"); g.State != "Stable" || g.Epoch != m.epoch {
		t.Fatalf("group %s at epoch %d, member at %d", g.State, g.Epoch, m.epoch)
	}
}

// TestStreamsJoinWithMissingSourceTopicDuringInitialDelay: with the default initial rebalance
// delay the first join still gets a member epoch >= 1 (the empty target of the delay), both
// statuses, and the member moves to the group epoch when the delay ends.
func TestStreamsJoinWithMissingSourceTopicDuringInitialDelay(t *testing.T) {
	clock := coordtest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := testutil.StartIn(t, t.TempDir(), clock, "auto.create.topics.enable=false")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	br, _ := nrBroker(t, ctx, b.Addr())

	m := &nrMember{id: "m1", sources: []string{"events"}}
	m.beat(t, ctx, br, "app")
	if m.epoch < 1 || !m.has(coordinator.StreamsStatusMissingSourceTopics) || !m.has(coordinator.StreamsStatusAssignmentDelayed) {
		t.Fatalf("join during the delay: epoch %d status %v", m.epoch, m.status)
	}
	clock.Advance(3 * time.Second)
	eventually(t, "member at the group epoch after the delay", func() bool {
		m.beat(t, ctx, br, "app")
		return m.epoch == nrDescribe(t, ctx, br, "app").Epoch && !m.has(coordinator.StreamsStatusAssignmentDelayed)
	})
	if !m.has(coordinator.StreamsStatusMissingSourceTopics) {
		t.Fatalf("status %v, want MISSING_SOURCE_TOPICS", m.status)
	}
}

// TestStreamsSourceTopicDeletedUnderRunningGroup: two members share the tasks of two
// subtopologies; one source topic is deleted. The metadata hash change reconfigures the
// topology, which cannot be configured any more: the members' tasks are revoked through the
// normal reconciliation, MISSING_SOURCE_TOPICS is reported until the topic returns, and then the
// tasks flow again.
func TestStreamsSourceTopicDeletedUnderRunningGroup(t *testing.T) {
	b := testutil.Start(t, "auto.create.topics.enable=false", "group.streams.initial.rebalance.delay.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	br, adm := nrBroker(t, ctx, b.Addr())
	for _, topic := range []string{"clicks", "views"} {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	ms := []*nrMember{{id: "a", sources: []string{"clicks", "views"}}, {id: "b", sources: []string{"clicks", "views"}}}
	converge := func(what string, tasks int, cond func() bool) {
		t.Helper()
		for round := 0; round < 20; round++ {
			for _, m := range ms {
				m.beat(t, ctx, br, "app")
			}
			g := nrDescribe(t, ctx, br, "app")
			if countTasks(ms[0].active)+countTasks(ms[1].active) == tasks && ms[0].epoch == g.Epoch && ms[1].epoch == g.Epoch && cond() {
				return
			}
		}
		t.Fatalf("%s: did not converge: a=%v %v b=%v %v", what, ms[0].active, ms[0].status, ms[1].active, ms[1].status)
	}
	converge("start", 4, func() bool { return nrDescribe(t, ctx, br, "app").State == "Stable" })

	if _, err := adm.DeleteTopics(ctx, "views"); err != nil {
		t.Fatal(err)
	}
	converge("after the deletion", 0, func() bool {
		return ms[0].has(coordinator.StreamsStatusMissingSourceTopics) && ms[1].has(coordinator.StreamsStatusMissingSourceTopics) &&
			nrDescribe(t, ctx, br, "app").State == "NotReady"
	})
	for _, mem := range nrDescribe(t, ctx, br, "app").Members {
		if n := countTasks(mem.Assignment.ActiveTasks); n != 0 {
			t.Fatalf("member %s still owns %d tasks after the source topic was deleted", mem.MemberID, n)
		}
	}

	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "views"); err != nil {
		t.Fatal(err)
	}
	converge("after the topic returned", 4, func() bool {
		return len(ms[0].status) == 0 && len(ms[1].status) == 0 && nrDescribe(t, ctx, br, "app").State == "Stable"
	})
}
