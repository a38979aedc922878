package coordinator

import (
	"io"
	"log/slog"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/metadata"
)

// cgHarness drives one shard State directly: every operation runs in its own batch, written
// records are collected, timers fire when the manual clock is advanced.
type cgHarness struct {
	shardDriver
	topics *metadata.Set
}

var cgT0 = time.UnixMilli(1_700_000_000_000)

// newCGHarness builds a harness; group.consumer.assignment.interval.ms defaults to 0 here (every
// epoch bump computes a target at once) unless overridden.
func newCGHarness(t testing.TB, overrides ...string) *cgHarness {
	topics := metadata.NewSet()
	overrides = append([]string{"group.consumer.assignment.interval.ms=0"}, overrides...)
	cfg := ConfigFrom(config.Defaults(overrides...))
	st := NewState(0, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &testIDs{})
	st.Now = cgT0
	cid := "client"
	h := &cgHarness{shardDriver: shardDriver{t: t, st: st, meta: Meta{ClientID: &cid, ClientHost: "/127.0.0.1"}}, topics: topics}
	h.image = topics.Image
	return h
}

func (h *cgHarness) hb(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	return run(h, ConsumerGroupHeartbeat(req))
}

func (h *cgHarness) group(id string) *ConsumerGroup {
	g, _ := h.st.Groups[id].(*ConsumerGroup)
	return g
}

// joinReq is a v1 join (member epoch 0) subscribing to names.
func joinReq(group, member string, names ...string) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group = group
	r.MemberID = member
	r.MemberEpoch = 0
	r.RebalanceTimeoutMillis = 30000
	r.SubscribedTopicNames = append([]string{}, names...)
	r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return r
}

// hbReq is a v1 steady heartbeat reporting owned partitions.
func hbReq(group, member string, epoch int32, owned topicPartitions) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group = group
	r.MemberID = member
	r.MemberEpoch = epoch
	r.RebalanceTimeoutMillis = -1
	if owned != nil {
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, t := range sortedTopicIDs(owned) {
			r.Topics = append(r.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t, Partitions: owned[t]})
		}
	}
	return r
}

func respTP(a *kmsg.ConsumerGroupHeartbeatResponseAssignment) topicPartitions {
	out := topicPartitions{}
	for _, t := range a.Topics {
		out[t.TopicID] = append(out[t.TopicID], t.Partitions...)
	}
	return normalizeTP(out)
}

// cgClient models a KIP-848 consumer: it owns exactly the last assignment it received (it
// revokes and takes partitions at once) and heartbeats with what it owns.
type cgClient struct {
	group, id string
	epoch     int32
	owned     topicPartitions
	gone      bool
}

func (h *cgHarness) joinClient(group, id string, names ...string) *cgClient {
	c := &cgClient{group: group, id: id}
	resp := h.hb(joinReq(group, id, names...))
	if resp.ErrorCode != 0 {
		h.t.Fatalf("join %s: error %d %v", id, resp.ErrorCode, resp.ErrorMessage)
	}
	c.epoch = resp.MemberEpoch
	c.owned = respTP(resp.Assignment)
	return c
}

func (h *cgHarness) beat(c *cgClient) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := h.hb(hbReq(c.group, c.id, c.epoch, c.owned))
	if resp.ErrorCode != 0 {
		h.t.Fatalf("heartbeat %s: error %d %v", c.id, resp.ErrorCode, deref(resp.ErrorMessage))
	}
	c.epoch = resp.MemberEpoch
	if resp.Assignment != nil {
		c.owned = respTP(resp.Assignment)
	}
	return resp
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// checkNoDoubleOwnership fails if two clients own the same partition.
func checkNoDoubleOwnership(t testing.TB, clients []*cgClient) {
	t.Helper()
	seen := map[[16]byte]map[int32]string{}
	for _, c := range clients {
		if c.gone {
			continue
		}
		for tid, ps := range c.owned {
			if seen[tid] == nil {
				seen[tid] = map[int32]string{}
			}
			for _, p := range ps {
				if o, ok := seen[tid][p]; ok {
					t.Fatalf("partition %x/%d owned by %s and %s", tid[15], p, o, c.id)
				}
				seen[tid][p] = c.id
			}
		}
	}
}

// settle heartbeats every live client until the group is Stable (bounded rounds).
func (h *cgHarness) settle(group string, clients []*cgClient) {
	h.t.Helper()
	for round := 0; round < 20; round++ {
		for _, c := range clients {
			if !c.gone {
				h.beat(c)
				checkNoDoubleOwnership(h.t, clients)
			}
		}
		if g := h.group(group); g != nil && g.StateName() == ConsumerStateStable {
			return
		}
	}
	h.t.Fatalf("group %s did not stabilize: %s", group, h.group(group).StateName())
}

// checkReplayEquivalence replays the last record of every key written so far, in a shuffled
// order, into a fresh State and compares every group's Durable value and every committed
// offset (durableView, as coordtest.CheckReplay does).
func (h *cgHarness) checkReplayEquivalence(seed int64) {
	h.t.Helper()
	last := map[string]Record{}
	for _, r := range h.records {
		last[string(r.Key)] = r
	}
	recs := make([]Record, 0, len(last))
	for _, k := range sortedKeys(last) {
		recs = append(recs, last[k])
	}
	rand.New(rand.NewSource(seed)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	fresh := NewState(0, h.st.Cfg, h.st.Log, &testIDs{})
	for _, r := range recs {
		if err := fresh.Replay(r); err != nil {
			h.t.Fatalf("replay: %v", err)
		}
	}
	fresh.Loading = false
	if a, b := sortedKeys(h.st.Groups), sortedKeys(fresh.Groups); !reflect.DeepEqual(a, b) {
		h.t.Fatalf("groups differ after replay: live %v, replayed %v", a, b)
	}
	for id, g := range h.st.Groups {
		if a, b := g.Durable(), fresh.Groups[id].Durable(); !reflect.DeepEqual(a, b) {
			h.t.Fatalf("group %s differs after replay:\nlive     %+v\nreplayed %+v", id, a, b)
		}
	}
	if a, b := durableView(h.st), durableView(fresh); !reflect.DeepEqual(a, b) {
		h.t.Fatalf("durable state differs after replay:\nlive     %+v\nreplayed %+v", a, b)
	}
}

func tp(pairs ...any) topicPartitions {
	out := topicPartitions{}
	for i := 0; i < len(pairs); i += 2 {
		id := pairs[i].([16]byte)
		out[id] = append(out[id], pairs[i+1].([]int32)...)
	}
	return normalizeTP(out)
}

func countTP(a topicPartitions) int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}
