package coordinator

import (
	"crypto/sha256"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/metadata"
)

// testTopics is the streams tests' topic set: ids are the first 16 bytes of SHA-256(name), and
// internal topics the harness creates are listed in created.
type testTopics struct {
	*metadata.Set
	created []string
}

func newTestTopics(kv ...any) *testTopics {
	t := &testTopics{Set: metadata.NewSet()}
	for i := 0; i+1 < len(kv); i += 2 {
		t.set(kv[i].(string), int32(kv[i+1].(int)))
	}
	return t
}

// set creates or resizes a topic.
func (t *testTopics) set(name string, partitions int32) {
	s := sha256.Sum256([]byte(name))
	var id [16]byte
	copy(id[:], s[:16])
	t.AddID(name, id, partitions)
}

// CreateTopic creates an internal topic as the adapters do.
func (t *testTopics) CreateTopic(name string, partitions int32, _ map[string]string) error {
	if _, ok := t.Image().Topic(name); !ok {
		t.set(name, partitions)
		t.created = append(t.created, name)
	}
	return nil
}

// streamsHarness drives one shard State with a manual clock, collecting every written record.
type streamsHarness struct {
	shardDriver
	topics *testTopics
	// autoCreate creates requested internal topics after each heartbeat, as the adapters do.
	autoCreate bool
}

func newStreamsHarness(t testing.TB, topics *testTopics, overrides ...string) *streamsHarness {
	if topics == nil {
		topics = newTestTopics()
	}
	ov := append([]string{"group.streams.initial.rebalance.delay.ms=0"}, overrides...)
	cfg := ConfigFrom(config.Defaults(ov...))
	cfg.Shards = 1
	st := NewState(0, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &testIDs{})
	st.Now = time.UnixMilli(1_700_000_000_000)
	cid := "client"
	h := &streamsHarness{shardDriver: shardDriver{t: t, st: st, meta: Meta{APIVersion: 1, ClientID: &cid, ClientHost: "/127.0.0.1"}},
		topics: topics, autoCreate: true}
	h.image = topics.Image
	return h
}

func (h *streamsHarness) hbResult(req *kmsg.StreamsGroupHeartbeatRequest) *StreamsHeartbeatResult {
	res := run(h, StreamsGroupHeartbeat(req))
	if h.autoCreate {
		for _, t := range res.Create {
			_ = h.topics.CreateTopic(t.Name, t.Partitions, t.Configs)
		}
	}
	return res
}

func (h *streamsHarness) hb(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	return h.hbResult(req).Response
}

func (h *streamsHarness) group(id string) *StreamsGroup {
	g, _ := h.st.Groups[id].(*StreamsGroup)
	return g
}

// --- topologies ---

type topoSub struct {
	id          string
	sources     []string
	sinks       []string
	repartition []kmsg.TopicInfo
	changelogs  []string
	copart      [][]int16 // source-topic index groups
	copartRep   [][]int16
}

func topology(epoch int32, subs ...topoSub) *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = epoch
	for _, s := range subs {
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID = s.id
		st.SourceTopics = s.sources
		st.RepartitionSinkTopics = s.sinks
		st.RepartitionSourceTopics = s.repartition
		for _, c := range s.changelogs {
			ti := kmsg.NewTopicInfo()
			ti.Topic = c
			st.StateChangelogTopics = append(st.StateChangelogTopics, ti)
		}
		for i, c := range s.copart {
			cg := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup()
			cg.SourceTopics = c
			if i < len(s.copartRep) {
				cg.RepartitionSourceTopics = s.copartRep[i]
			}
			st.CopartitionGroups = append(st.CopartitionGroups, cg)
		}
		t.Subtopologies = append(t.Subtopologies, st)
	}
	return &t
}

// simpleTopology: one stateful subtopology reading "input".
func simpleTopology(epoch int32) *kmsg.StreamsGroupHeartbeatRequestTopology {
	return topology(epoch, topoSub{id: "0", sources: []string{"input"}, changelogs: []string{"app-store-changelog"}})
}

// --- members ---

type tMember struct {
	id, process                  string
	instance                     *string
	epoch                        int32
	active, standby, warmup      streamsTasks
	endpointEpoch                int32
	endpoint                     *kmsg.StreamsGroupHeartbeatRequestUserEndpoint
	topo                         *kmsg.StreamsGroupHeartbeatRequestTopology
	lastStatus                   []int8
	lastErr                      int16
	lastPartitionsByUserEndpoint []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint
}

func newTMember(id, process string, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *tMember {
	return &tMember{id: id, process: process, topo: topo, active: streamsTasks{}, standby: streamsTasks{}, warmup: streamsTasks{}}
}

func (m *tMember) request(group string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group = group
	req.MemberID = m.id
	req.MemberEpoch = m.epoch
	req.EndpointInformationEpoch = m.endpointEpoch
	req.InstanceID = m.instance
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topology = m.topo
		p := m.process
		req.ProcessID = &p
		req.UserEndpoint = m.endpoint
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	} else {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = taskIDs(m.active), taskIDs(m.standby), taskIDs(m.warmup)
	}
	return req
}

func fromTaskIDs(l []kmsg.TaskIDs) streamsTasks {
	out := streamsTasks{}
	for _, t := range l {
		for _, p := range t.Partitions {
			out[streamsTask{t.SubtopologyID, p}] = 0
		}
	}
	return out
}

// apply takes a heartbeat response as a well-behaved member would.
func (m *tMember) apply(resp *kmsg.StreamsGroupHeartbeatResponse) {
	m.lastErr = resp.ErrorCode
	m.lastStatus = nil
	for _, s := range resp.Status {
		m.lastStatus = append(m.lastStatus, s.StatusCode)
	}
	if resp.ErrorCode != 0 {
		return
	}
	m.epoch = resp.MemberEpoch
	if resp.ActiveTasks != nil {
		m.active, m.standby, m.warmup = fromTaskIDs(resp.ActiveTasks), fromTaskIDs(resp.StandbyTasks), fromTaskIDs(resp.WarmupTasks)
	}
	m.endpointEpoch = resp.EndpointInformationEpoch
	if resp.PartitionsByUserEndpoint != nil {
		m.lastPartitionsByUserEndpoint = resp.PartitionsByUserEndpoint
	}
}

func (h *streamsHarness) beat(group string, m *tMember) *kmsg.StreamsGroupHeartbeatResponse {
	resp := h.hb(m.request(group))
	m.apply(resp)
	return resp
}

// converge heartbeats every member round-robin until the group is Stable and a full round
// changed nothing, or fails after maxRounds.
func (h *streamsHarness) converge(group string, ms []*tMember, maxRounds int) int {
	for round := 1; round <= maxRounds; round++ {
		for _, m := range ms {
			h.beat(group, m)
		}
		if g := h.group(group); g != nil && g.State() == StreamsStable {
			same := true
			for _, m := range ms {
				c := g.currentOf(m.id)
				if m.epoch != c.MemberEpoch || !m.active.sameKeys(c.Assigned.Active) {
					same = false
				}
			}
			if same {
				return round
			}
		}
	}
	if h.t != nil {
		h.t.Fatalf("group %s did not converge in %d rounds (state %s)", group, maxRounds, h.group(group).StateName())
	}
	return -1
}

// replayed rebuilds a fresh State from the log (last value per key, in the given key order).
func replayed(t *testing.T, h *streamsHarness, order func([]Record)) *State {
	last := map[string]int{}
	var recs []Record
	for _, r := range h.records {
		if i, ok := last[string(r.Key)]; ok {
			recs[i] = r
			continue
		}
		last[string(r.Key)] = len(recs)
		recs = append(recs, r)
	}
	order(recs)
	st := NewState(0, h.st.Cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &testIDs{})
	for _, r := range recs {
		if err := st.Replay(r); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	st.Loading = false
	return st
}

func keyOrder(recs []Record) {
	sort.Slice(recs, func(i, j int) bool { return string(recs[i].Key) < string(recs[j].Key) })
}
