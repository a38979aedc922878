package coordinator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/muster-io/muster/internal/metadata"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/metahash"
)

// StreamsTopicInfo is an internal topic of a topology (StreamsGroupHeartbeat TopicInfo):
// Partitions 0 means "derive it", ReplicationFactor 0 the broker default.
type StreamsTopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           [][2]string // key, value; in request order
}

// StreamsCopartitionGroup lists indexes into a subtopology's SourceTopics and
// RepartitionSourceTopics whose topics must have equal partition counts.
type StreamsCopartitionGroup struct {
	SourceTopics            []int16
	RepartitionSourceTopics []int16
}

// StreamsSubtopology is one subtopology as the member declared it.
type StreamsSubtopology struct {
	ID                      string
	SourceTopics            []string
	RepartitionSinkTopics   []string
	StateChangelogTopics    []StreamsTopicInfo
	RepartitionSourceTopics []StreamsTopicInfo
	CopartitionGroups       []StreamsCopartitionGroup
}

// StreamsTopology is a group's topology (record StreamsGroupTopology, 23): its epoch and its
// subtopologies sorted by id.
type StreamsTopology struct {
	Epoch         int32
	Subtopologies []StreamsSubtopology
}

// streamsTopologyFromRequest converts and validates the heartbeat's topology. Errors are
// STREAMS_INVALID_TOPOLOGY (130) or INVALID_REQUEST with a message.
func streamsTopologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) (*StreamsTopology, error) {
	out := &StreamsTopology{Epoch: t.Epoch}
	seen := map[string]bool{}
	for _, s := range t.Subtopologies {
		if s.SubtopologyID == "" {
			return nil, Errf(kerr.StreamsInvalidTopology, "Subtopology ids must be non-empty.")
		}
		if seen[s.SubtopologyID] {
			return nil, Errf(kerr.StreamsInvalidTopology, "Subtopology %s is defined twice.", s.SubtopologyID)
		}
		seen[s.SubtopologyID] = true
		if len(s.SourceTopicRegex) > 0 {
			return nil, Errf(kerr.InvalidRequest, "Regular expressions for source topics are not supported yet.")
		}
		sub := StreamsSubtopology{
			ID:                    s.SubtopologyID,
			SourceTopics:          append([]string{}, s.SourceTopics...),
			RepartitionSinkTopics: append([]string{}, s.RepartitionSinkTopics...),
		}
		if len(sub.SourceTopics)+len(s.RepartitionSourceTopics) == 0 {
			return nil, Errf(kerr.StreamsInvalidTopology, "Subtopology %s has no source topics.", s.SubtopologyID)
		}
		for _, ti := range s.StateChangelogTopics {
			if ti.NumPartitions != 0 {
				return nil, Errf(kerr.StreamsInvalidTopology,
					"Changelog topic %s must have an undefined partition count, but it is set to %d.", ti.Topic, ti.NumPartitions)
			}
			sub.StateChangelogTopics = append(sub.StateChangelogTopics, topicInfoFrom(ti))
		}
		for _, ti := range s.RepartitionSourceTopics {
			if ti.NumPartitions < 0 {
				return nil, Errf(kerr.StreamsInvalidTopology, "Repartition topic %s has a negative partition count.", ti.Topic)
			}
			sub.RepartitionSourceTopics = append(sub.RepartitionSourceTopics, topicInfoFrom(ti))
		}
		for _, cg := range s.CopartitionGroups {
			if len(cg.SourceTopicRegex) > 0 {
				return nil, Errf(kerr.InvalidRequest, "Regular expressions for source topics are not supported yet.")
			}
			for _, i := range cg.SourceTopics {
				if i < 0 || int(i) >= len(sub.SourceTopics) {
					return nil, Errf(kerr.StreamsInvalidTopology, "Copartition group of subtopology %s refers to source topic index %d out of range.", s.SubtopologyID, i)
				}
			}
			for _, i := range cg.RepartitionSourceTopics {
				if i < 0 || int(i) >= len(sub.RepartitionSourceTopics) {
					return nil, Errf(kerr.StreamsInvalidTopology, "Copartition group of subtopology %s refers to repartition source topic index %d out of range.", s.SubtopologyID, i)
				}
			}
			sub.CopartitionGroups = append(sub.CopartitionGroups, StreamsCopartitionGroup{
				SourceTopics:            append([]int16{}, cg.SourceTopics...),
				RepartitionSourceTopics: append([]int16{}, cg.RepartitionSourceTopics...),
			})
		}
		out.Subtopologies = append(out.Subtopologies, sub)
	}
	sort.Slice(out.Subtopologies, func(i, j int) bool { return out.Subtopologies[i].ID < out.Subtopologies[j].ID })
	return out, nil
}

func topicInfoFrom(ti kmsg.TopicInfo) StreamsTopicInfo {
	out := StreamsTopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor}
	for _, c := range ti.Configs {
		out.Configs = append(out.Configs, [2]string{c.Key, c.Value})
	}
	return out
}

// sameAs reports whether two topologies have equal content (epoch excluded).
func (t *StreamsTopology) sameAs(o *StreamsTopology) bool {
	a, b := *t, *o
	a.Epoch, b.Epoch = 0, 0
	return string(encodeStreamsTopology(&a)) == string(encodeStreamsTopology(&b))
}

// requiredTopics are the topics whose metadata the group hashes (KIP-1101): source, repartition
// source and changelog topics, sorted and distinct.
func (t *StreamsTopology) requiredTopics() []string {
	set := map[string]bool{}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			set[n] = true
		}
		for _, ti := range s.RepartitionSourceTopics {
			set[ti.Name] = true
		}
		for _, ti := range s.StateChangelogTopics {
			set[ti.Name] = true
		}
	}
	return sortedKeys(set)
}

// Streams heartbeat status codes (StreamsGroupHeartbeatResponse.Status.StatusCode).
const (
	StreamsStatusStaleTopology                int8 = 0
	StreamsStatusMissingSourceTopics          int8 = 1
	StreamsStatusIncorrectlyPartitionedTopics int8 = 2
	StreamsStatusMissingInternalTopics        int8 = 3
	StreamsStatusShutdownApplication          int8 = 4
	StreamsStatusAssignmentDelayed            int8 = 5
)

// StreamsInternalTopic is an internal topic the broker must create.
type StreamsInternalTopic struct {
	Name       string
	Partitions int32
	Configs    map[string]string
}

// configuredTopology is the topology checked against the topics that exist (Kafka's
// ConfiguredTopology): task counts per subtopology, or the reason it is not ready.
type configuredTopology struct {
	epoch    int32
	numTasks map[string]int32 // per subtopology id; only when ready
	// partitions of every internal topic (derived or explicit).
	internalPartitions map[string]int32
	statusCode         int8 // -1 when ready
	statusDetail       string
	toCreate           []StreamsInternalTopic
	// invalid is STREAMS_INVALID_TOPOLOGY when a repartition topic's partition count can be
	// neither read from the topology nor derived (Kafka's RepartitionTopics.setup).
	invalid error
}

// undecidableRepartition is Kafka's check in streams.topics.RepartitionTopics.setup, made after
// the partition counts of repartition topics were derived (repart): a subtopology writing to a
// repartition topic without an explicit count whose inputs all lack a count is a loop that cannot
// be resolved; a repartition source topic still without a count is never written to.
func undecidableRepartition(t *StreamsTopology, repart map[string]int32, inputCount func(*StreamsSubtopology) int32) error {
	for i := range t.Subtopologies {
		s := &t.Subtopologies[i]
		for _, sink := range s.RepartitionSinkTopics {
			if !explicitRepartition(t, sink) && inputCount(s) == 0 {
				return Errf(kerr.StreamsInvalidTopology, "Failed to compute number of partitions for all repartition topics. "+
					"There may be loops in the topology that cannot be resolved.")
			}
		}
	}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if repart[ti.Name] == 0 {
				return Errf(kerr.StreamsInvalidTopology, "Failed to compute number of partitions for all repartition topics, "+
					"because a repartition source topic is never used as a sink topic.")
			}
		}
	}
	return nil
}

func (c *configuredTopology) ready() bool { return c != nil && c.statusCode < 0 }

// configureStreamsTopology checks a topology against the topic source (Kafka's
// InternalTopicManager.configureTopics): missing source topics → MISSING_SOURCE_TOPICS; source
// topics of a copartition group with different partition counts, or existing internal topics
// with the wrong count → INCORRECTLY_PARTITIONED_TOPICS; internal topics that do not exist →
// MISSING_INTERNAL_TOPICS with the topics to create. Repartition topics without an explicit
// count get the largest partition count among the source topics of the subtopologies writing
// to them (transitively) or, in a copartition group, the group's count; changelog topics get
// the subtopology's task count (the largest partition count of its source topics).
func configureStreamsTopology(t *StreamsTopology, topics *metadata.Image) *configuredTopology {
	c := &configuredTopology{epoch: t.Epoch, statusCode: -1, internalPartitions: map[string]int32{}}
	parts := func(name string) (int32, bool) {
		if topics == nil {
			return 0, false
		}
		_, n, ok := topics.TopicID(name)
		return n, ok
	}
	// 1. Source topics must exist.
	var missing []string
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			if _, ok := parts(n); !ok {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		c.statusCode = StreamsStatusMissingSourceTopics
		c.statusDetail = "Source topics " + summarizeTopics(dedupSorted(missing)) + " are missing."
		return c
	}
	// 2. Repartition topic partition counts: explicit, else derived (fixpoint over writers).
	repart := map[string]int32{}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Partitions > 0 {
				repart[ti.Name] = ti.Partitions
			} else if _, ok := repart[ti.Name]; !ok {
				repart[ti.Name] = 0
			}
		}
	}
	inputCount := func(s *StreamsSubtopology) int32 {
		var max int32
		for _, n := range s.SourceTopics {
			if p, _ := parts(n); p > max {
				max = p
			}
		}
		for _, ti := range s.RepartitionSourceTopics {
			if p := repart[ti.Name]; p > max {
				max = p
			}
		}
		return max
	}
	for changed := true; changed; {
		changed = false
		for i := range t.Subtopologies {
			s := &t.Subtopologies[i]
			n := inputCount(s)
			for _, sink := range s.RepartitionSinkTopics {
				if cur, ok := repart[sink]; ok && !explicitRepartition(t, sink) && n > cur {
					repart[sink] = n
					changed = true
				}
			}
		}
	}
	if err := undecidableRepartition(t, repart, inputCount); err != nil {
		c.invalid = err
		c.statusCode = StreamsStatusIncorrectlyPartitionedTopics
		c.statusDetail = *ErrorMessage(err)
		return c
	}
	// 3. Copartition groups: external source topics must agree; derived repartition topics
	// follow them.
	var incorrect []string
	for _, s := range t.Subtopologies {
		for _, cg := range s.CopartitionGroups {
			var want int32 = -1
			for _, i := range cg.SourceTopics {
				p, _ := parts(s.SourceTopics[i])
				if want >= 0 && p != want {
					incorrect = append(incorrect, fmt.Sprintf("copartitioned source topics of subtopology %s have different partition counts", s.ID))
				}
				if p > want {
					want = p
				}
			}
			for _, i := range cg.RepartitionSourceTopics {
				ti := s.RepartitionSourceTopics[i]
				if ti.Partitions > 0 {
					if want >= 0 && ti.Partitions != want {
						incorrect = append(incorrect, fmt.Sprintf("copartitioned repartition topic %s has %d partitions, want %d", ti.Name, ti.Partitions, want))
					}
					continue
				}
				if want > 0 {
					repart[ti.Name] = want
				}
			}
		}
	}
	if len(incorrect) > 0 {
		c.statusCode = StreamsStatusIncorrectlyPartitionedTopics
		c.statusDetail = "Following topics are not copartitioned correctly: " + strings.Join(dedupSorted(incorrect), "; ") + "."
		return c
	}
	// 4. Task counts and changelog partitions.
	c.numTasks = map[string]int32{}
	for i := range t.Subtopologies {
		s := &t.Subtopologies[i]
		n := inputCount(s)
		c.numTasks[s.ID] = n
		for _, ti := range s.StateChangelogTopics {
			c.internalPartitions[ti.Name] = n
		}
	}
	for name, n := range repart {
		c.internalPartitions[name] = n
	}
	// 5. Internal topics: create missing ones, reject wrongly partitioned existing ones.
	var wrong []string
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			c.checkInternal(ti, false, parts, &wrong)
		}
		for _, ti := range s.StateChangelogTopics {
			c.checkInternal(ti, true, parts, &wrong)
		}
	}
	if len(wrong) > 0 {
		c.numTasks = nil
		c.toCreate = nil
		c.statusCode = StreamsStatusIncorrectlyPartitionedTopics
		// Kafka's InternalTopicManager.missingInternalTopics stops at the first such topic.
		c.statusDetail = dedupSorted(wrong)[0]
		return c
	}
	if len(c.toCreate) > 0 {
		sort.Slice(c.toCreate, func(i, j int) bool { return c.toCreate[i].Name < c.toCreate[j].Name })
		names := make([]string, len(c.toCreate))
		for i, x := range c.toCreate {
			names[i] = x.Name
		}
		c.numTasks = nil
		c.statusCode = StreamsStatusMissingInternalTopics
		c.statusDetail = "Internal topics are missing: " + summarizeTopics(names)
	}
	return c
}

func (c *configuredTopology) checkInternal(ti StreamsTopicInfo, changelog bool, parts func(string) (int32, bool), wrong *[]string) {
	want := c.internalPartitions[ti.Name]
	have, ok := parts(ti.Name)
	if ok {
		if want > 0 && have != want {
			*wrong = append(*wrong, fmt.Sprintf("Existing topic %s has different number of partitions: expected %d, found %d", ti.Name, want, have))
		}
		return
	}
	for _, x := range c.toCreate {
		if x.Name == ti.Name {
			return
		}
	}
	if want <= 0 {
		want = 1
	}
	cfg := map[string]string{}
	if changelog {
		cfg["cleanup.policy"] = "compact"
	} else {
		cfg["cleanup.policy"] = "delete"
	}
	for _, kv := range ti.Configs {
		cfg[kv[0]] = kv[1]
	}
	c.toCreate = append(c.toCreate, StreamsInternalTopic{Name: ti.Name, Partitions: want, Configs: cfg})
}

func explicitRepartition(t *StreamsTopology, name string) bool {
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Name == name && ti.Partitions > 0 {
				return true
			}
		}
	}
	return false
}

// summarizeTopics names at most three topics and counts the rest, as Kafka's
// InternalTopicManager.summarizeTopics does for the status details.
func summarizeTopics(names []string) string {
	if len(names) == 0 {
		return "<none>"
	}
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d additional topics", len(names)-3)
}

func dedupSorted(xs []string) []string {
	set := map[string]bool{}
	for _, x := range xs {
		set[x] = true
	}
	return sortedKeys(set)
}

// streamsTopicHash caches one topic's KIP-1101 hash by the inputs that determine it.
type streamsTopicHash struct {
	id         [16]byte
	partitions int32
	rack       string
	hash       int64
}

// computeMetadataHash is the KIP-1101 group hash over the topology's required topics that exist
// (absent topics are left out, as Kafka does). Each partition's single replica is on this
// broker, whose rack is topics.Rack().
func (g *StreamsGroup) computeMetadataHash(topics *metadata.Image) int64 {
	if g.topology == nil || topics == nil {
		return 0
	}
	rack := topics.Rack()
	// The steady heartbeat: same topology, same rack, every required topic with the same id and
	// partition count as when the hash was last computed.
	if m := &g.hashMemo; m.topo == g.topology && m.epoch == g.topology.Epoch && m.rack == rack && m.valid {
		same := true
		for _, in := range m.inputs {
			id, n, ok := topics.TopicID(in.name)
			if ok != in.ok || id != in.id || n != in.partitions {
				same = false
				break
			}
		}
		if same {
			return m.hash
		}
	}
	memo := streamsHashMemo{topo: g.topology, epoch: g.topology.Epoch, rack: rack, valid: true}
	hashes := map[string]int64{}
	for _, name := range g.topology.requiredTopics() {
		id, n, ok := topics.TopicID(name)
		memo.inputs = append(memo.inputs, streamsHashInput{name: name, ok: ok, id: id, partitions: n})
		if !ok {
			continue
		}
		if c, ok := g.hashCache[name]; ok && c.id == id && c.partitions == n && c.rack == rack {
			hashes[name] = c.hash
			continue
		}
		var racks func(int32) []string
		if rack != "" {
			rs := []string{rack}
			racks = func(int32) []string { return rs }
		}
		h := metahash.TopicHash(id, name, n, racks)
		g.hashCache[name] = streamsTopicHash{id: id, partitions: n, rack: rack, hash: h}
		hashes[name] = h
	}
	memo.hash = metahash.GroupHash(hashes)
	g.hashMemo = memo
	return memo.hash
}

// streamsHashMemo is the last computed metadata hash of a streams group and its inputs (in
// memory only): it stays valid while the topology (same object and epoch), the rack and every
// required topic's existence, id and partition count are unchanged.
type streamsHashMemo struct {
	valid  bool
	topo   *StreamsTopology
	epoch  int32
	rack   string
	inputs []streamsHashInput
	hash   int64
}

type streamsHashInput struct {
	name       string
	ok         bool
	id         [16]byte
	partitions int32
}
