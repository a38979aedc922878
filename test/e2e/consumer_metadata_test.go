package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// rawMember is a KIP-848 member driven by raw ConsumerGroupHeartbeat requests: it owns exactly
// the last assignment it was given.
type rawMember struct {
	t     *testing.T
	cl    *kgo.Client
	group string
	id    string
	epoch int32
	owned []kmsg.ConsumerGroupHeartbeatRequestTopic
}

func (m *rawMember) heartbeat(ctx context.Context, join bool, topics ...string) *kmsg.ConsumerGroupHeartbeatResponse {
	m.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group = m.group
	req.MemberID = m.id
	req.MemberEpoch = m.epoch
	req.RebalanceTimeoutMillis = -1
	req.Topics = m.owned
	if join {
		req.MemberEpoch = 0
		req.RebalanceTimeoutMillis = 30000
		req.SubscribedTopicNames = topics
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		m.t.Fatalf("heartbeat: %v", err)
	}
	if resp.ErrorCode != 0 {
		m.t.Fatalf("heartbeat: error %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	m.id = *resp.MemberID
	m.epoch = resp.MemberEpoch
	if resp.Assignment != nil {
		m.owned = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, t := range resp.Assignment.Topics {
			m.owned = append(m.owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: t.Partitions})
		}
	}
	return resp
}

func (m *rawMember) ownedCount() int {
	n := 0
	for _, t := range m.owned {
		n += len(t.Partitions)
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// groupEpoch reads the group epoch and the target assignment epoch with ConsumerGroupDescribe.
func groupEpoch(ctx context.Context, t *testing.T, cl *kgo.Client, group string) (int32, int32) {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("describe %s: %v %+v", group, err, resp)
	}
	return resp.Groups[0].Epoch, resp.Groups[0].AssignmentEpoch
}

// TestConsumerGroupMetadataHashE2E (KIP-1101): adding partitions to a subscribed topic bumps the
// group epoch and assigns the new partitions; resizing an unsubscribed topic does not; a restart
// with the same broker.rack keeps the epoch (the stored hash matches) and a restart with another
// rack bumps it exactly once.
func TestConsumerGroupMetadataHashE2E(t *testing.T) {
	dir := t.TempDir()
	// Every epoch bump computes its target at once (no assignment interval): the test drives
	// heartbeats faster than group.consumer.assignment.interval.ms.
	b := testutil.StartIn(t, dir, nil, "broker.rack=r1", "group.consumer.assignment.interval.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "hashed"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "unrelated"); err != nil {
		t.Fatal(err)
	}
	m := &rawMember{t: t, cl: cl, group: "kip1101", id: "raw-member-kip1101-000001"}
	m.heartbeat(ctx, true, "hashed")
	m.heartbeat(ctx, false)
	if m.epoch != 1 || m.ownedCount() != 2 {
		t.Fatalf("after join: epoch %d, %d partitions; want 1, 2", m.epoch, m.ownedCount())
	}

	// An unsubscribed topic grows: no bump.
	if _, err := adm.UpdatePartitions(ctx, 4, "unrelated"); err != nil {
		t.Fatal(err)
	}
	m.heartbeat(ctx, false)
	if ge, _ := groupEpoch(ctx, t, cl, "kip1101"); ge != 1 || m.epoch != 1 {
		t.Fatalf("unsubscribed topic resized: group epoch %d, member epoch %d; want 1, 1", ge, m.epoch)
	}

	// The subscribed topic grows: the epoch bumps and the new partitions are assigned.
	if _, err := adm.UpdatePartitions(ctx, 4, "hashed"); err != nil {
		t.Fatal(err)
	}
	m.heartbeat(ctx, false)
	m.heartbeat(ctx, false)
	if ge, ae := groupEpoch(ctx, t, cl, "kip1101"); ge != 2 || ae != 2 || m.epoch != 2 || m.ownedCount() != 4 {
		t.Fatalf("subscribed topic resized: group epoch %d, assignment epoch %d, member epoch %d, %d partitions %+v; want 2, 2, 2, 4",
			ge, ae, m.epoch, m.ownedCount(), m.owned)
	}

	restart := func(rack string) {
		b.Close()
		b = testutil.StartIn(t, dir, nil, "broker.rack="+rack, "group.consumer.assignment.interval.ms=0")
		cl = newClient(t, b.Addr())
		m.cl = cl
	}
	// Same rack: the stored hash matches, no bump.
	restart("r1")
	m.heartbeat(ctx, false)
	m.heartbeat(ctx, false)
	if ge, _ := groupEpoch(ctx, t, cl, "kip1101"); ge != 2 || m.epoch != 2 {
		t.Fatalf("restart, same rack: group epoch %d, member epoch %d; want 2, 2", ge, m.epoch)
	}
	// Another rack: the partitions' racks changed, the hash differs, one bump.
	restart("r2")
	for i := 0; i < 3; i++ {
		m.heartbeat(ctx, false)
	}
	if ge, ae := groupEpoch(ctx, t, cl, "kip1101"); ge != 3 || ae != 3 || m.epoch != 3 || m.ownedCount() != 4 {
		t.Fatalf("restart, new rack: group epoch %d, assignment epoch %d, member epoch %d, %d partitions; want 3, 3, 3, 4",
			ge, ae, m.epoch, m.ownedCount())
	}
}
