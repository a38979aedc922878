package coordinator_test

import (
	"crypto/sha256"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

// seedTopics is a fixed in-memory TopicSource for generating real records.
type seedTopics map[string]int32

func (t seedTopics) TopicID(name string) ([16]byte, int32, bool) {
	n, ok := t[name]
	var id [16]byte
	s := sha256.Sum256([]byte(name))
	copy(id[:], s[:16])
	return id, n, ok
}

func (t seedTopics) TopicName(id [16]byte) (string, bool) {
	for n := range t {
		if i, _, _ := t.TopicID(n); i == id {
			return n, true
		}
	}
	return "", false
}

func (t seedTopics) TopicNames() []string {
	var out []string
	for n := range t {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (t seedTopics) Rack() string { return "" }

func (t seedTopics) CreateTopic(name string, partitions int32, _ map[string]string) error {
	if _, ok := t[name]; !ok {
		t[name] = partitions
	}
	return nil
}

// liveRecords drives a Harness through a consumer group (a named and a regex subscriber), a
// streams group with a stateful subtopology, a classic-free offset commit, and returns the
// records written: real bytes of every record type those paths write.
func liveRecords(t testing.TB) []coordinator.Record {
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	topics := seedTopics{"t": 4, "input": 4}
	cfg.Topics = topics
	h := coordinator.NewHarness(cfg)
	for i, sub := range []struct {
		names []string
		regex *string
	}{{names: []string{"t"}}, {regex: strPtr("t.*")}} {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Version = 1
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "cg", "member-"+string(rune('a'+i)), 0, 30000
		r.SubscribedTopicNames, r.SubscribedTopicRegex = sub.names, sub.regex
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		h.Do(coordinator.Meta{APIVersion: 1}, coordinator.ConsumerGroupHeartbeat(r))
		h.Advance(time.Second)
	}
	s := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	s.Version = 0
	s.Group, s.MemberID, s.MemberEpoch, s.RebalanceTimeoutMillis, s.ProcessID = "sg", "s1", 0, 30000, strPtr("p1")
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"input"}
	cl := kmsg.NewTopicInfo()
	cl.Topic = "app-store-changelog"
	st.StateChangelogTopics = append(st.StateChangelogTopics, cl)
	topo.Subtopologies = append(topo.Subtopologies, st)
	s.Topology = &topo
	s.ActiveTasks, s.StandbyTasks, s.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	res, _ := h.Do(coordinator.Meta{APIVersion: 0}, coordinator.StreamsGroupHeartbeat(s)).Response().(*coordinator.StreamsHeartbeatResult)
	if res != nil {
		for name, n := range res.TopicsToCreate() {
			topics.CreateTopic(name, n, nil)
		}
		// Join again now that the internal topics exist: the target assignment is computed
		// and written.
		h.Do(coordinator.Meta{APIVersion: 0}, coordinator.StreamsGroupHeartbeat(s))
	}
	h.Advance(time.Second)
	return h.Latest(0)
}

func strPtr(s string) *string { return &s }

// TestLiveRecordsCoverage: the generated seeds cover the consumer and streams record types, so
// FuzzReplay starts from real bytes of each. (Streams target-assignment records, types 20 and
// 21, are not reached: the single heartbeat sequence here leaves the group waiting for its
// internal topics; FuzzReplay still reaches those replayers from the Enc-shaped seeds.)
func TestLiveRecordsCoverage(t *testing.T) {
	seen := map[int16]bool{}
	for _, r := range liveRecords(t) {
		typ, err := coordinator.RecordType(r.Key)
		if err != nil {
			t.Fatal(err)
		}
		seen[typ] = true
	}
	var types []int
	for typ := range seen {
		types = append(types, int(typ))
	}
	sort.Ints(types)
	t.Logf("record types in the live seeds: %v", types)
	for _, want := range []int16{coordinator.RecConsumerGroupMetadata, coordinator.RecConsumerGroupMemberMetadata,
		coordinator.RecConsumerGroupTargetMetadata, coordinator.RecConsumerGroupTargetMember, coordinator.RecConsumerGroupCurrentMember,
		coordinator.RecConsumerGroupRegex, coordinator.RecStreamsGroupMetadata, coordinator.RecStreamsGroupMemberMetadata,
		coordinator.RecStreamsGroupCurrentMember, coordinator.RecStreamsGroupTopology} {
		if !seen[want] {
			t.Errorf("no record of type %d in the live seeds", want)
		}
	}
}
