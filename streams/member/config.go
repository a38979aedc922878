package member

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config configures a Member. Brokers, GroupID and Topology are required;
// every other field has a Kafka Streams default.
type Config struct {
	// Brokers are the bootstrap servers, host:port.
	Brokers []string
	// GroupID is the streams group id (Kafka Streams' application.id).
	GroupID string
	// ProcessID identifies the client process (all stream threads of one
	// Kafka Streams instance share it). Default: a random UUID.
	ProcessID string
	// InstanceID makes the member static (group.instance.id); empty = dynamic.
	InstanceID string
	// RackID is the client rack (client.rack); empty = none.
	RackID string
	// UserEndpoint is the interactive-query endpoint "host:port"
	// (application.server); empty = none.
	UserEndpoint string
	// ClientTags are the rack-aware assignment tags (client.tag.*).
	ClientTags map[string]string
	// RebalanceTimeout bounds how long the member may take to revoke tasks
	// (max.poll.interval.ms). Default 5 minutes.
	RebalanceTimeout time.Duration
	// Topology is what the member joins with; sent on every join (epoch 0).
	Topology Topology
	// TopologyDescription is the KIP-1331 description pushed when the broker
	// solicits it; nil disables the push.
	TopologyDescription *TopologyDescription
	// PushEnabled is topology.description.push.enabled. nil means the
	// default, true; set it to a pointer to false to disable the push.
	PushEnabled *bool

	// OnAssigned is called from the heartbeat loop with the tasks newly
	// assigned to the member, after any revocation of the same response.
	OnAssigned func(active, standby, warmup TaskSet)
	// OnRevoked is called from the heartbeat loop with the tasks the member
	// must give up (revocation, fencing, leaving). The tasks are no longer
	// reported once it returns. It should commit their offsets first
	// (CommitTaskOffsets) while the member epoch is still valid.
	OnRevoked func(active, standby, warmup TaskSet)
	// OnLost, if set, is called instead of OnRevoked when tasks are lost
	// rather than handed over: the coordinator fenced the member
	// (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) or a fatal error ended the
	// loop. Offsets can no longer be committed for lost tasks.
	OnLost func(active, standby, warmup TaskSet)
	// OnShutdownRequested is called once when a heartbeat response first
	// carries the SHUTDOWN_APPLICATION status.
	OnShutdownRequested func()

	// Logger receives WARN/ERROR/DEBUG events. Default: slog.Default().
	Logger *slog.Logger
	// Clock drives the heartbeat loop. Default: the real clock.
	Clock Clock
	// RequestTimeout bounds each request. Default 30 s.
	RequestTimeout time.Duration
	// RetryBackoff is the first delay before retrying a failed request or a
	// failed coordinator lookup; it doubles up to 1 s. Default 100 ms.
	RetryBackoff time.Duration
	// ClientOpts are extra franz-go options (TLS, SASL, client id, ...).
	ClientOpts []kgo.Opt

	// ProcessingGuarantee is processing.guarantee: AtLeastOnce (default) or ExactlyOnceV2,
	// which enables NewTransactionalProducer.
	ProcessingGuarantee string
	// TransactionTimeout is the transaction.timeout.ms of the member's transactional
	// producers. Default 10 s (Kafka Streams' default under exactly_once_v2).
	TransactionTimeout time.Duration
}

// Topology is the topology metadata a member joins with (the Topology field
// of StreamsGroupHeartbeat).
type Topology struct {
	// Epoch is the topology epoch; bump it when the topology changes.
	Epoch int32
	// Subtopologies are sent in the given order.
	Subtopologies []Subtopology
}

// Subtopology is one subtopology of the topology metadata.
type Subtopology struct {
	// ID is the subtopology id, "0", "1", ...
	ID string
	// SourceTopics are the user input topics.
	SourceTopics []string
	// RepartitionSinkTopics are the repartition topics this subtopology writes.
	RepartitionSinkTopics []string
	// RepartitionSourceTopics are the repartition topics it reads.
	RepartitionSourceTopics []TopicInfo
	// StateChangelogTopics are its stores' changelogs; their Partitions must
	// be 0 (the broker derives them from the task count).
	StateChangelogTopics []TopicInfo
	// CopartitionGroups list topics that must be co-partitioned, by name;
	// every name must be one of SourceTopics or RepartitionSourceTopics.
	CopartitionGroups []CopartitionGroup
}

// TopicInfo describes an internal topic.
type TopicInfo struct {
	Name string
	// Partitions is the partition count; 0 = derived by the broker.
	Partitions int32
	// ReplicationFactor is the replication factor; 0 = broker default.
	ReplicationFactor int16
	// Configs are topic configs (sent sorted by key).
	Configs map[string]string
}

// CopartitionGroup names topics that must have the same partition count.
type CopartitionGroup struct {
	SourceTopics            []string
	RepartitionSourceTopics []string
}

const (
	defaultRebalanceTimeout = 5 * time.Minute
	defaultRequestTimeout   = 30 * time.Second
	defaultRetryBackoff     = 100 * time.Millisecond
	maxRetryBackoff         = time.Second
)

// normalized checks c and fills defaults.
func (c Config) normalized() (Config, error) {
	if len(c.Brokers) == 0 {
		return c, errors.New("member: Brokers is required")
	}
	if strings.TrimSpace(c.GroupID) == "" {
		return c, errors.New("member: GroupID is required")
	}
	if len(c.Topology.Subtopologies) == 0 {
		return c, errors.New("member: Topology needs at least one subtopology")
	}
	if c.Topology.Epoch < 0 {
		return c, fmt.Errorf("member: topology epoch %d is negative", c.Topology.Epoch)
	}
	if _, err := c.Topology.toWire(); err != nil {
		return c, err
	}
	if c.UserEndpoint != "" {
		if _, err := parseEndpoint(c.UserEndpoint); err != nil {
			return c, err
		}
	}
	if c.ProcessID == "" {
		c.ProcessID = newUUID()
	}
	if c.RebalanceTimeout <= 0 {
		c.RebalanceTimeout = defaultRebalanceTimeout
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = defaultRequestTimeout
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = defaultRetryBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch c.ProcessingGuarantee {
	case "":
		c.ProcessingGuarantee = AtLeastOnce
	case AtLeastOnce, ExactlyOnceV2:
	default:
		return c, fmt.Errorf("member: processing guarantee %q is not %s or %s", c.ProcessingGuarantee, AtLeastOnce, ExactlyOnceV2)
	}
	if c.TransactionTimeout <= 0 {
		c.TransactionTimeout = 10 * time.Second
	}
	if c.Clock == nil {
		c.Clock = RealClock()
	}
	if c.TopologyDescription != nil {
		if err := c.TopologyDescription.Validate(); err != nil {
			return c, fmt.Errorf("member: TopologyDescription: %w", err)
		}
		c.TopologyDescription = c.TopologyDescription.Clone()
	}
	return c, nil
}

// pushEnabled is topology.description.push.enabled (default true).
func (c *Config) pushEnabled() bool { return c.PushEnabled == nil || *c.PushEnabled }

// toWire converts the topology metadata; it fails on a copartition group
// naming a topic the subtopology does not read, or on an empty id.
func (t Topology) toWire() (*kmsg.StreamsGroupHeartbeatRequestTopology, error) {
	w := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	w.Epoch = t.Epoch
	seen := map[string]bool{}
	for _, s := range t.Subtopologies {
		if s.ID == "" {
			return nil, errors.New("member: subtopology with empty id")
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("member: duplicate subtopology %q", s.ID)
		}
		seen[s.ID] = true
		ws := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		ws.SubtopologyID = s.ID
		ws.SourceTopics = append([]string{}, s.SourceTopics...)
		ws.SourceTopicRegex = []string{}
		ws.RepartitionSinkTopics = append([]string{}, s.RepartitionSinkTopics...)
		ws.RepartitionSourceTopics = topicInfosToWire(s.RepartitionSourceTopics)
		ws.StateChangelogTopics = topicInfosToWire(s.StateChangelogTopics)
		ws.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{}
		for _, g := range s.CopartitionGroups {
			wg := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup()
			wg.SourceTopicRegex = []int16{}
			for _, name := range g.SourceTopics {
				i := slices.Index(s.SourceTopics, name)
				if i < 0 {
					return nil, fmt.Errorf("member: subtopology %q: copartitioned source topic %q is not a source topic", s.ID, name)
				}
				wg.SourceTopics = append(wg.SourceTopics, int16(i))
			}
			for _, name := range g.RepartitionSourceTopics {
				i := slices.IndexFunc(s.RepartitionSourceTopics, func(ti TopicInfo) bool { return ti.Name == name })
				if i < 0 {
					return nil, fmt.Errorf("member: subtopology %q: copartitioned repartition topic %q is not a repartition source topic", s.ID, name)
				}
				wg.RepartitionSourceTopics = append(wg.RepartitionSourceTopics, int16(i))
			}
			if wg.SourceTopics == nil {
				wg.SourceTopics = []int16{}
			}
			if wg.RepartitionSourceTopics == nil {
				wg.RepartitionSourceTopics = []int16{}
			}
			ws.CopartitionGroups = append(ws.CopartitionGroups, wg)
		}
		w.Subtopologies = append(w.Subtopologies, ws)
	}
	return &w, nil
}

func topicInfosToWire(in []TopicInfo) []kmsg.TopicInfo {
	out := make([]kmsg.TopicInfo, 0, len(in))
	for _, ti := range in {
		w := kmsg.NewTopicInfo()
		w.Topic, w.NumPartitions, w.ReplicationFactor = ti.Name, ti.Partitions, ti.ReplicationFactor
		keys := make([]string, 0, len(ti.Configs))
		for k := range ti.Configs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.Configs = []kmsg.TopicInfoConfig{}
		for _, k := range keys {
			c := kmsg.NewTopicInfoConfig()
			c.Key, c.Value = k, ti.Configs[k]
			w.Configs = append(w.Configs, c)
		}
		out = append(out, w)
	}
	return out
}
