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
)

// testTopics is an in-memory TopicSource for streams tests.
type testTopics struct {
	parts   map[string]int32
	rack    string
	created []string
}

func newTestTopics(kv ...any) *testTopics {
	t := &testTopics{parts: map[string]int32{}}
	for i := 0; i+1 < len(kv); i += 2 {
		t.parts[kv[i].(string)] = int32(kv[i+1].(int))
	}
	return t
}

func (t *testTopics) TopicID(name string) ([16]byte, int32, bool) {
	n, ok := t.parts[name]
	if !ok {
		return [16]byte{}, 0, false
	}
	var id [16]byte
	s := sha256.Sum256([]byte(name))
	copy(id[:], s[:16])
	return id, n, true
}

func (t *testTopics) TopicName(id [16]byte) (string, bool) {
	for n := range t.parts {
		if i, _, _ := t.TopicID(n); i == id {
			return n, true
		}
	}
	return "", false
}

func (t *testTopics) TopicNames() []string { return sortedKeys(t.parts) }
func (t *testTopics) Rack() string         { return t.rack }
func (t *testTopics) CreateTopic(name string, partitions int32, _ map[string]string) error {
	if _, ok := t.parts[name]; !ok {
		t.parts[name] = partitions
		t.created = append(t.created, name)
	}
	return nil
}

// streamsHarness drives one shard State with a manual clock, collecting every written record.
type streamsHarness struct {
	t      *testing.T
	st     *State
	topics *testTopics
	log    []Record
	// autoCreate creates requested internal topics after each heartbeat, as the service does.
	autoCreate bool
}

func newStreamsHarness(t testing.TB, topics *testTopics, overrides ...string) *streamsHarness {
	if topics == nil {
		topics = newTestTopics()
	}
	ov := append([]string{"group.streams.initial.rebalance.delay.ms=0"}, overrides...)
	cfg := &Config{Shards: 1, Values: config.Defaults(ov...), Topics: topics}
	st := NewState(0, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	st.Now = time.UnixMilli(1_700_000_000_000)
	tt, _ := t.(*testing.T)
	return &streamsHarness{t: tt, st: st, topics: topics, autoCreate: true}
}

func (h *streamsHarness) run(op func(*State, *Call)) any {
	h.st.batch = &batch{}
	cid := "client"
	c := &Call{op: op, done: make(chan struct{}), Meta: Meta{APIVersion: 1, ClientID: &cid, ClientHost: "/127.0.0.1"}}
	op(h.st, c)
	h.log = append(h.log, h.st.batch.records...)
	h.st.batch = nil
	return c.resp
}

// advance moves the clock and runs due timers.
func (h *streamsHarness) advance(d time.Duration) {
	h.st.Now = h.st.Now.Add(d)
	for {
		tm := h.st.Timers.popDue(h.st.Now)
		if tm == nil {
			return
		}
		h.st.batch = &batch{}
		tm.fn(h.st)
		h.log = append(h.log, h.st.batch.records...)
		h.st.batch = nil
	}
}

func (h *streamsHarness) hbResult(req *kmsg.StreamsGroupHeartbeatRequest) *StreamsHeartbeatResult {
	res := h.run(StreamsGroupHeartbeat(req)).(*StreamsHeartbeatResult)
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
	recs := dedupe(append([]Record(nil), h.log...))
	order(recs)
	st := NewState(0, h.st.Cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	st.Loading = true
	for _, r := range recs {
		if err := st.replay(r); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	st.Loading = false
	return st
}

func keyOrder(recs []Record) {
	sort.Slice(recs, func(i, j int) bool { return string(recs[i].Key) < string(recs[j].Key) })
}
