package coordinator

import (
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
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

// joinStormTopics is a one-topic TopicSource for the simulation.
type joinStormTopics struct {
	parts int32
}

var joinStormTopicID = [16]byte{0x4a, 0x53, 15: 1}

func (t joinStormTopics) TopicID(name string) ([16]byte, int32, bool) {
	if name != "storm" {
		return [16]byte{}, 0, false
	}
	return joinStormTopicID, t.parts, true
}

func (t joinStormTopics) TopicName(id [16]byte) (string, bool) {
	return "storm", id == joinStormTopicID
}
func (joinStormTopics) TopicNames() []string                               { return []string{"storm"} }
func (joinStormTopics) Rack() string                                       { return "" }
func (joinStormTopics) CreateTopic(string, int32, map[string]string) error { return nil }

// SimulateConsumerJoinStorm measures a KIP-848 join storm on one shard with a manual clock:
// members consumers (model clients that own exactly the last assignment they were given) join
// one group subscribed to a single topic of partitions partitions at the same instant; then, in
// steps of group.consumer.heartbeat.interval.ms, every member heartbeats, until the group is
// Stable (at most maxSteps rounds, else an error). overrides are broker config key=value pairs
// (for example group.consumer.assignment.interval.ms=0 to compute a target on every epoch bump).
// The caller measures CPU time around the call.
func SimulateConsumerJoinStorm(members int, partitions int32, maxSteps int, overrides ...string) (JoinStormResult, error) {
	res := JoinStormResult{Members: members, Partitions: partitions}
	vals := config.Defaults(overrides...)
	cfg := ConfigFrom(vals)
	cfg.Topics = joinStormTopics{parts: partitions}
	h := NewHarness(cfg)
	step := time.Duration(vals.Int("group.consumer.heartbeat.interval.ms")) * time.Millisecond
	cid := "storm"
	meta := Meta{ClientID: &cid, ClientHost: "/127.0.0.1"}

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
		resp, _ := h.Do(meta, ConsumerGroupHeartbeat(req)).Response().(*kmsg.ConsumerGroupHeartbeatResponse)
		if resp == nil {
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
	clients := make([]*client, members)
	for i := range clients {
		clients[i] = &client{id: fmt.Sprintf("storm-member-%07d", i)}
		if err := beat(clients[i], true); err != nil {
			return res, err
		}
	}
	start := h.Clock.Now()
	stable := func() bool {
		g, ok := h.St.Groups["storm"].(*ConsumerGroup)
		return ok && g.StateName() == ConsumerStateStable
	}
	for !stable() {
		if res.Steps++; res.Steps > maxSteps {
			return res, fmt.Errorf("not stable after %d heartbeat rounds", maxSteps)
		}
		h.Advance(step)
		for _, cl := range clients {
			if err := beat(cl, false); err != nil {
				return res, err
			}
		}
	}
	res.Settled = h.Clock.Now().Sub(start)
	res.Records = len(h.Log)
	targetMeta := string(cgTargetMetaKey("storm"))
	for _, r := range h.Log {
		if r.Value != nil && string(r.Key) == targetMeta {
			res.Assignments++
		}
	}
	// Check the outcome: every member is at the group's target assignment epoch and owns exactly
	// its target assignment, and every partition is owned exactly once.
	g := h.St.Groups["storm"].(*ConsumerGroup)
	if g.epoch != g.assignmentEpoch {
		return res, fmt.Errorf("group epoch %d ahead of the assignment epoch %d", g.epoch, g.assignmentEpoch)
	}
	for _, cl := range clients {
		if cl.epoch != g.assignmentEpoch {
			return res, fmt.Errorf("member %s at epoch %d, target epoch %d", cl.id, cl.epoch, g.assignmentEpoch)
		}
		owned := topicPartitions{}
		for _, t := range cl.owned {
			owned[t.TopicID] = append(owned[t.TopicID], t.Partitions...)
		}
		if !equalTP(normalizeTP(owned), normalizeTP(g.targets[cl.id])) {
			return res, fmt.Errorf("member %s owns %d partitions, not its target of %d", cl.id, countPartitions(owned), countPartitions(g.targets[cl.id]))
		}
	}
	seen := make(map[int32]bool, partitions)
	for _, cl := range clients {
		for _, t := range cl.owned {
			for _, p := range t.Partitions {
				if seen[p] {
					return res, fmt.Errorf("partition %d owned twice", p)
				}
				seen[p] = true
			}
		}
	}
	if int32(len(seen)) != partitions {
		missing := []int32{}
		for p := int32(0); p < partitions && len(missing) < 5; p++ {
			if !seen[p] {
				missing = append(missing, p)
			}
		}
		sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
		return res, fmt.Errorf("%d of %d partitions owned (missing e.g. %v)", len(seen), partitions, missing)
	}
	return res, nil
}

func countPartitions(a topicPartitions) int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}
