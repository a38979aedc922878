package coordinator

import (
	"log/slog"
	"time"

	"github.com/muster-io/muster/internal/config"
)

// GroupType is the kind of a group, as ListGroups v5 names it.
type GroupType string

// The group types.
const (
	TypeClassic  GroupType = "classic"
	TypeConsumer GroupType = "consumer"
	TypeStreams  GroupType = "streams"
)

// Group is what every group type answers for the offset, admin and list paths (Kafka's Group
// interface).
type Group interface {
	ID() string
	Type() GroupType
	// StateName is Kafka's state string ("Stable", "PreparingRebalance", "Empty", "NotReady", ...).
	StateName() string
	// ProtocolType as ListGroups reports it ("consumer", "streams", a classic group's own, or "").
	ProtocolType() string
	IsEmpty() bool
	// IsSubscribedToTopic decides OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC and offset expiry
	// (reference §1.9, §5).
	IsSubscribedToTopic(topic string) bool
	// ValidateOffsetCommit returns a kerr error or nil (reference §5).
	ValidateOffsetCommit(st *State, c *CommitIdentity) error
	// ValidateOffsetFetch validates a v9+ member-bound fetch (memberID non-empty or epoch ≥ 0).
	ValidateOffsetFetch(st *State, memberID string, memberEpoch int32) error
	// ValidateOffsetDelete returns a group-level kerr error or nil.
	ValidateOffsetDelete() error
	// ValidateDeleteGroup returns a kerr error or nil.
	ValidateDeleteGroup() error
	// WriteTombstones writes tombstones for all of the group's own records (not its offsets),
	// in Kafka's order, through st.Write.
	WriteTombstones(st *State)
	// OffsetExpiryBase returns the base time for offset expiry of a partition committed at
	// commitTime, and false when offsets of this group must not expire now (reference §5).
	OffsetExpiryBase(commitTime time.Time) (time.Time, bool)
	// Durable is a deterministic value describing exactly the group's durable state, used by the
	// replay-equivalence property (a fresh shard replaying all records must produce equal values).
	Durable() any
}

// CommitIdentity is who commits offsets and how (OffsetCommit / TxnOffsetCommit).
type CommitIdentity struct {
	MemberID          string
	InstanceID        *string
	GenerationOrEpoch int32
	APIVersion        int16
	Transactional     bool
	// Partitions are the request's partitions by topic name (KIP-1251 checks a commit with an
	// older member epoch per partition); nil when unknown.
	Partitions map[string][]int32
}

// State is one shard's deterministic state machine: groups, committed offsets, timers. It is
// owned by one goroutine (the shard loop or a test harness). Durable parts change only by
// replaying records (st.Write replays at once and queues the record for the batch); in-memory
// parts (pending joins, timers) change directly.
type State struct {
	Shard   int32
	Cfg     *Config
	Now     time.Time
	Log     *slog.Logger
	Groups  map[string]Group
	Offsets *Offsets
	Timers  *Timers
	Metrics *ShardMetrics

	// Loading is true while records are replayed from the store (not from a live operation).
	Loading bool

	batch *batch // current batch being built; nil outside an operation
}

// Config is the coordinator's view of the broker configuration.
type Config struct {
	Shards                 int32
	OffsetMetadataMaxBytes int
	OffsetsRetention       time.Duration
	OffsetsRetentionCheck  time.Duration
	InitialRebalanceDelay  time.Duration
	MinSessionTimeout      time.Duration
	MaxSessionTimeout      time.Duration
	GroupMaxSize           int
	Values                 *config.Values
	// Topics answers topic questions (partition counts, ids, racks); nil means no topics known.
	Topics TopicSource
	NodeID int32
	// AdvertisedHost and AdvertisedPort are what FindCoordinator answers.
	AdvertisedHost string
	AdvertisedPort int32
}

// TopicSource is the data plane as the coordinator sees it.
type TopicSource interface {
	// TopicID returns the id and partition count of a topic, ok=false if it does not exist.
	TopicID(name string) (id [16]byte, partitions int32, ok bool)
	// TopicName resolves an id.
	TopicName(id [16]byte) (string, bool)
	// TopicNames lists all topics, sorted.
	TopicNames() []string
	// Rack is this broker's rack ("" = none); every partition's single replica is here.
	Rack() string
	// CreateTopic creates a topic (streams internal topics); an existing topic is not an error.
	CreateTopic(name string, partitions int32, configs map[string]string) error
}

// ConfigFrom derives the coordinator Config from broker config values.
func ConfigFrom(v *config.Values) *Config {
	return &Config{
		Shards:                 int32(v.Int("offsets.topic.num.partitions")),
		OffsetMetadataMaxBytes: int(v.Int("offset.metadata.max.bytes")),
		OffsetsRetention:       v.OffsetsRetention(),
		OffsetsRetentionCheck:  v.Ms("offsets.retention.check.interval.ms"),
		InitialRebalanceDelay:  v.Ms("group.initial.rebalance.delay.ms"),
		MinSessionTimeout:      v.Ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:      v.Ms("group.max.session.timeout.ms"),
		GroupMaxSize:           int(v.Int("group.max.size")),
		Values:                 v,
		NodeID:                 v.NodeID(),
	}
}

// NewState builds an empty shard state.
func NewState(shard int32, cfg *Config, log *slog.Logger) *State {
	if log == nil {
		log = slog.Default()
	}
	st := &State{
		Shard:   shard,
		Cfg:     cfg,
		Log:     log.With("shard", shard),
		Groups:  map[string]Group{},
		Timers:  newTimers(),
		Metrics: &ShardMetrics{},
	}
	st.Offsets = newOffsets()
	return st
}

// Write replays rec into the state at once and adds it to the current batch, so the rest of the
// operation sees its effect. A record that fails to replay is a programming error in the handler
// that built it; it is logged and dropped so the shard keeps serving.
func (st *State) Write(rec Record) {
	if err := st.replay(rec); err != nil {
		st.Log.Error("coordinator: handler produced a record that does not replay", "err", err)
		return
	}
	if st.batch != nil {
		st.batch.records = append(st.batch.records, rec)
	}
}

// Reply releases c's response once every record written so far is durable.
func (st *State) Reply(c *Call, resp any) {
	if c == nil || c.replied {
		return
	}
	c.replied = true
	c.resp = resp
	if st.batch != nil {
		st.batch.replies = append(st.batch.replies, c)
		return
	}
	c.finish()
}

// Group returns a group by id.
func (st *State) Group(id string) (Group, bool) {
	g, ok := st.Groups[id]
	return g, ok
}

// ShardMetrics are per-shard counters, summed by the metrics collector.
type ShardMetrics struct {
	OffsetCommits       int64
	OffsetExpirations   int64
	OffsetDeletions     int64
	CompletedRebalances int64
	ConsumerRebalances  int64
	StreamsRebalances   int64
}
