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

// The MISSING_SOURCE_TOPICS and MISSING_INTERNAL_TOPICS details name at most three topics and
// count the rest (Kafka's InternalTopicManager.summarizeTopics); the internal topics' detail has
// no closing period.
func TestStreamsStatusDetailSummarizesTopics(t *testing.T) {
	topo := topology(0, topoSub{id: "0", sources: []string{"in-a", "in-b", "in-c", "in-d", "in-e"},
		changelogs: []string{"app-s1-changelog", "app-s2-changelog", "app-s3-changelog", "app-s4-changelog"}})
	topics := newTestTopics()
	h := newStreamsHarness(t, topics)
	detail := func(resp *kmsg.StreamsGroupHeartbeatResponse, code int8) string {
		for _, s := range resp.Status {
			if s.StatusCode == code {
				return s.StatusDetail
			}
		}
		return ""
	}
	m := newTMember("m1", "p1", topo)
	res := h.hbResult(m.request("g"))
	m.apply(res.Response)
	if got, want := detail(res.Response, StreamsStatusMissingSourceTopics), "Source topics in-a, in-b, in-c and 2 additional topics are missing."; got != want {
		t.Fatalf("missing source detail %q, want %q", got, want)
	}
	for _, n := range []string{"in-a", "in-b", "in-c", "in-d", "in-e"} {
		topics.set(n, 2)
	}
	res = h.hbResult(m.request("g"))
	if got, want := detail(res.Response, StreamsStatusMissingInternalTopics), "Internal topics are missing: app-s1-changelog, app-s2-changelog, app-s3-changelog and 1 additional topics"; got != want {
		t.Fatalf("missing internal detail %q, want %q", got, want)
	}
}

// An existing internal topic with another partition count is INCORRECTLY_PARTITIONED_TOPICS
// with Kafka's detail (InternalTopicManager.missingInternalTopics).
func TestStreamsExistingInternalTopicDetail(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 2))
	resp := h.hb(newTMember("m1", "p1", simpleTopology(0)).request("g"))
	for _, s := range resp.Status {
		if s.StatusCode == StreamsStatusIncorrectlyPartitionedTopics {
			if want := "Existing topic app-store-changelog has different number of partitions: expected 4, found 2"; s.StatusDetail != want {
				t.Fatalf("detail %q, want %q", s.StatusDetail, want)
			}
			return
		}
	}
	t.Fatalf("no INCORRECTLY_PARTITIONED_TOPICS status: %+v", resp.Status)
}
