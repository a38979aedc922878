package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A repartition source topic without a partition count that no subtopology writes to, or whose
// count only a cycle of repartition topics could decide, makes the topology invalid: the joining
// heartbeat fails with STREAMS_INVALID_TOPOLOGY and no group is created (Kafka's
// streams.topics.RepartitionTopics.setup, thrown out of InternalTopicManager.configureTopics),
// instead of asking for internal topics of zero partitions.
func TestStreamsRepartitionCountUndecidable(t *testing.T) {
	cases := []struct {
		name string
		topo *kmsg.StreamsGroupHeartbeatRequestTopology
		msg  string
	}{
		{"never a sink", topology(0,
			topoSub{id: "0", sources: []string{"input"}},
			topoSub{id: "1", repartition: []kmsg.TopicInfo{{Topic: "app-rep"}}},
		), "a repartition source topic is never used as a sink topic"},
		{"cycle", topology(0,
			topoSub{id: "0", sources: []string{"input"}},
			topoSub{id: "1", repartition: []kmsg.TopicInfo{{Topic: "app-rep-a"}}, sinks: []string{"app-rep-b"}},
			topoSub{id: "2", repartition: []kmsg.TopicInfo{{Topic: "app-rep-b"}}, sinks: []string{"app-rep-a"}},
		), "There may be loops in the topology"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newStreamsHarness(t, newTestTopics("input", 2))
			res := h.hbResult(newTMember("m1", "p1", c.topo).request("g"))
			wantErr(t, res.Response, kerr.StreamsInvalidTopology, c.msg)
			if len(res.Create) != 0 || len(h.st.Groups) != 0 {
				t.Fatalf("to create %v, groups %v", res.Create, sortedKeys(h.st.Groups))
			}
		})
	}
	// A source topic missing comes first: MISSING_SOURCE_TOPICS, as Kafka checks it before
	// deciding repartition counts.
	h := newStreamsHarness(t, newTestTopics())
	res := h.hbResult(newTMember("m1", "p1", cases[0].topo).request("g"))
	if res.Response.ErrorCode != 0 || !hasStatus(res.Response, StreamsStatusMissingSourceTopics) {
		t.Fatalf("missing source: error %d status %+v", res.Response.ErrorCode, res.Response.Status)
	}
}
