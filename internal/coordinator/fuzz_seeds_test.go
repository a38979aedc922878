package coordinator_test

import (
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// liveRecords drives a Harness through a consumer group (a named and a regex subscriber), a
// streams group with a stateful subtopology, a classic-free offset commit, and returns the
// records written: real bytes of every record type those paths write.
func liveRecords(t testing.TB) []coordinator.Record {
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	h := coordtest.New(cfg)
	topics := h.WithTopics(nil)
	topics.Add("t", 4)
	topics.Add("input", 4)
	for i, sub := range []struct {
		names []string
		regex *string
	}{{names: []string{"t"}}, {regex: strPtr("t.*")}} {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Version = 1
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "cg", "member-"+string(rune('a'+i)), 0, 30000
		r.SubscribedTopicNames, r.SubscribedTopicRegex = sub.names, sub.regex
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		coordtest.DoMeta(h, coordinator.Meta{APIVersion: 1}, coordinator.ConsumerGroupHeartbeat(r))
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
	res := coordtest.DoMeta(h, coordinator.Meta{APIVersion: 0}, coordinator.StreamsGroupHeartbeat(s)).Resp
	if res != nil {
		for name, n := range res.TopicsToCreate() {
			topics.CreateTopic(name, n, nil)
		}
		// Join again now that the internal topics exist: the target assignment is computed
		// and written.
		coordtest.DoMeta(h, coordinator.Meta{APIVersion: 0}, coordinator.StreamsGroupHeartbeat(s))
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
