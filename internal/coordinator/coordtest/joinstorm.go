package coordtest

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// JoinStormResult is the outcome of SimulateConsumerJoinStorm.
type JoinStormResult struct {
	Members     int
	Partitions  int32
	Steps       int           // heartbeat rounds after the joins until Stable
	Heartbeats  int           // ConsumerGroupHeartbeat requests sent, the joins included
	Settled     time.Duration // manual-clock time from the joins until the group is Stable
	Assignments int           // target assignments computed (TargetAssignmentMetadata records)
	Records     int           // records written
}

// SimulateConsumerJoinStorm measures a KIP-848 join storm on one shard with a manual clock:
// members consumers (model clients that own exactly the last assignment they were given) join
// one group subscribed to a single topic of partitions partitions at the same instant; then, in
// steps of the heartbeat interval, every member heartbeats, until the group is Stable (at most
// maxSteps rounds, else an error). The outcome is checked through ConsumerGroupDescribe: every
// member at the assignment epoch and owning its target, every partition owned once. The caller
// measures CPU time around the call.
func SimulateConsumerJoinStorm(cfg *coordinator.Config, members int, partitions int32, maxSteps int) (JoinStormResult, error) {
	res := JoinStormResult{Members: members, Partitions: partitions}
	h := New(cfg)
	h.WithTopics(nil).Add("storm", partitions)
	cid := "storm"
	h.Meta = coordinator.Meta{ClientID: &cid, ClientHost: "/127.0.0.1"}

	type client struct {
		id    string
		epoch int32
		owned []kmsg.ConsumerGroupHeartbeatRequestTopic
	}
	beat := func(cl *client, join bool) error {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = 1
		req.Group = "storm"
		req.MemberID = cl.id
		req.MemberEpoch = cl.epoch
		req.RebalanceTimeoutMillis = -1
		req.Topics = cl.owned
		if join {
			req.MemberEpoch = 0
			req.RebalanceTimeoutMillis = 60000
			req.SubscribedTopicNames = []string{"storm"}
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		res.Heartbeats++
		r := Do(h, coordinator.ConsumerGroupHeartbeat(req))
		resp := r.Resp
		if !r.Done() || resp == nil {
			return fmt.Errorf("member %s: no response", cl.id)
		}
		if resp.ErrorCode != 0 {
			return fmt.Errorf("member %s: error %d", cl.id, resp.ErrorCode)
		}
		cl.epoch = resp.MemberEpoch
		if resp.Assignment != nil {
			cl.owned = cl.owned[:0:0]
			for _, t := range resp.Assignment.Topics {
				cl.owned = append(cl.owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: t.Partitions})
			}
		}
		return nil
	}
	describe := func() kmsg.ConsumerGroupDescribeResponseGroup {
		return Do(h, coordinator.ConsumerGroupDescribe([]string{"storm"}, 1)).Resp[0]
	}
	clients := make([]*client, members)
	for i := range clients {
		clients[i] = &client{id: fmt.Sprintf("storm-member-%07d", i)}
		if err := beat(clients[i], true); err != nil {
			return res, err
		}
	}
	start := h.Clock.Now()
	for describe().State != coordinator.ConsumerStateStable {
		if res.Steps++; res.Steps > maxSteps {
			return res, fmt.Errorf("not stable after %d heartbeat rounds", maxSteps)
		}
		h.Advance(cfg.Consumer.HeartbeatInterval)
		for _, cl := range clients {
			if err := beat(cl, false); err != nil {
				return res, err
			}
		}
	}
	res.Settled = h.Clock.Now().Sub(start)
	res.Records = len(h.Log)
	for _, r := range h.Log {
		if typ, _ := coordinator.RecordType(r.Key); typ == coordinator.RecConsumerGroupTargetMetadata && r.Value != nil {
			res.Assignments++
		}
	}
	// Check the outcome: every member is at the group's target assignment epoch and owns exactly
	// its target assignment, and every partition is owned exactly once.
	d := describe()
	if d.Epoch != d.AssignmentEpoch {
		return res, fmt.Errorf("group epoch %d ahead of the assignment epoch %d", d.Epoch, d.AssignmentEpoch)
	}
	target := map[string]int{}
	for _, m := range d.Members {
		n := 0
		for _, t := range m.TargetAssignment.TopicPartitions {
			n += len(t.Partitions)
		}
		target[m.MemberID] = n
	}
	seen := make(map[int32]bool, partitions)
	for _, cl := range clients {
		if cl.epoch != d.AssignmentEpoch {
			return res, fmt.Errorf("member %s at epoch %d, target epoch %d", cl.id, cl.epoch, d.AssignmentEpoch)
		}
		n := 0
		for _, t := range cl.owned {
			for _, p := range t.Partitions {
				if seen[p] {
					return res, fmt.Errorf("partition %d owned twice", p)
				}
				seen[p] = true
				n++
			}
		}
		if n != target[cl.id] {
			return res, fmt.Errorf("member %s owns %d partitions, not its target of %d", cl.id, n, target[cl.id])
		}
	}
	if int32(len(seen)) != partitions {
		return res, fmt.Errorf("%d of %d partitions owned", len(seen), partitions)
	}
	return res, nil
}
