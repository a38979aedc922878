package bench

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// TestConsumerGroupSettledWaitsForTheBalancedTarget: with Kafka's assignment interval, the
// first member of a KIP-848 group owns every partition at epoch 1 and a member joining right
// after sits at epoch 1 owning nothing — "one epoch, every partition once", yet not settled.
// The broker-side check says so until the balanced target is reached, and then says settled.
func TestConsumerGroupSettledWaitsForTheBalancedTarget(t *testing.T) {
	m := testutil.Start(t, "group.consumer.assignment.interval.ms=1000")
	ctx := context.Background()
	if err := createTopic(ctx, m.Addr(), "settle", 4); err != nil {
		t.Fatal(err)
	}
	c, err := dial(m.Addr(), ClientRaw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	type member struct {
		id    string
		epoch int32
		owned []kmsg.ConsumerGroupHeartbeatRequestTopic
		parts int
	}
	ms := []*member{{id: "settle-a"}, {id: "settle-b"}}
	heartbeat := func(m *member) {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "settle-g", m.id, m.epoch, 60000
		req.Topics = m.owned
		if req.Topics == nil {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		if m.epoch == 0 {
			req.SubscribedTopicNames = []string{"settle"}
		}
		r, err := c.do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := r.(*kmsg.ConsumerGroupHeartbeatResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			t.Fatalf("heartbeat %s: %v", m.id, err)
		}
		m.epoch = resp.MemberEpoch
		if a := resp.Assignment; a != nil {
			m.owned, m.parts = nil, 0
			for _, tp := range a.Topics {
				rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
				rt.TopicID, rt.Partitions = tp.TopicID, tp.Partitions
				m.owned = append(m.owned, rt)
				m.parts += len(tp.Partitions)
			}
		}
	}
	heartbeat(ms[0])
	heartbeat(ms[1])
	if ok, why, err := consumerGroupSettled(ctx, c, "settle-g", ms[1].epoch, 2, 4); err != nil || ok {
		t.Fatalf("settled right after the second join (member epochs %d/%d owning %d/%d): %v %q %v", ms[0].epoch, ms[1].epoch, ms[0].parts, ms[1].parts, ok, why, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		heartbeat(ms[0])
		heartbeat(ms[1])
		if ms[0].epoch == ms[1].epoch && ms[0].parts == 2 && ms[1].parts == 2 {
			ok, why, err := consumerGroupSettled(ctx, c, "settle-g", ms[0].epoch, 2, 4)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			t.Logf("members balanced at epoch %d, broker: %s", ms[0].epoch, why)
		}
		if time.Now().After(deadline) {
			t.Fatalf("never settled: epochs %d/%d owning %d/%d", ms[0].epoch, ms[1].epoch, ms[0].parts, ms[1].parts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The wrong epoch is not settled.
	if ok, _, _ := consumerGroupSettled(ctx, c, "settle-g", ms[0].epoch+1, 2, 4); ok {
		t.Error("settled at an epoch the group is not at")
	}
	// Nor is a group with fewer members than expected.
	if ok, _, _ := consumerGroupSettled(ctx, c, "settle-g", ms[0].epoch, 3, 4); ok {
		t.Error("settled with a member missing")
	}
}
