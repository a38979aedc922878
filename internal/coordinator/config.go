package coordinator

import (
	"time"
)

// Config is the coordinator's typed view of the broker configuration, built once by ConfigFrom
// when the configuration is loaded; shards read its fields directly.
type Config struct {
	// Shards is the number of coordinator shards (offsets.topic.num.partitions).
	Shards               int32
	Offsets              OffsetsConfig
	Classic              ClassicConfig
	Consumer             ConsumerConfig
	Streams              StreamsConfig
	Share                ShareConfig
	TopologyDescriptions TopologyDescriptionConfig
	History              HistoryConfig
}

// HistoryConfig configures rebalance history (muster.rebalance.*).
type HistoryConfig struct {
	// MaxEvents is how many events each group keeps (muster.rebalance.history.max.events); 0
	// writes no history records (rebalances are still counted and logged).
	MaxEvents int
	// LogInterval rate-limits the INFO line of epoch bumps per group
	// (muster.rebalance.log.interval.ms; 0 = every bump).
	LogInterval time.Duration
}

// OffsetsConfig configures committed offsets (Kafka's offset.* / offsets.* keys).
type OffsetsConfig struct {
	MetadataMaxBytes int           // offset.metadata.max.bytes
	Retention        time.Duration // offsets.retention.minutes (or offsets.retention.ms)
	RetentionCheck   time.Duration // offsets.retention.check.interval.ms
}

// ClassicConfig configures classic groups (Kafka's group.* keys).
type ClassicConfig struct {
	InitialRebalanceDelay time.Duration // group.initial.rebalance.delay.ms
	MinSessionTimeout     time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout     time.Duration // group.max.session.timeout.ms
	MaxSize               int           // group.max.size
}

// ConsumerConfig configures KIP-848 consumer groups (group.consumer.*).
type ConsumerConfig struct {
	Enabled            bool          // "consumer" in group.coordinator.rebalance.protocols
	SessionTimeout     time.Duration // group.consumer.session.timeout.ms
	HeartbeatInterval  time.Duration // group.consumer.heartbeat.interval.ms
	MaxSize            int           // group.consumer.max.size
	AssignmentInterval time.Duration // group.consumer.assignment.interval.ms
	// Assignors are the server assignors by name, the first being the default
	// (group.consumer.assignors).
	Assignors []string
	// MigrationPolicy is group.consumer.migration.policy: disabled, upgrade, downgrade or
	// bidirectional.
	MigrationPolicy      string
	RegexRefreshInterval time.Duration // group.consumer.regex.refresh.interval.ms
}

// UpgradeEnabled reports whether classic groups may become consumer groups.
func (c ConsumerConfig) UpgradeEnabled() bool {
	return c.MigrationPolicy == "upgrade" || c.MigrationPolicy == "bidirectional"
}

// DowngradeEnabled reports whether consumer groups may become classic groups.
func (c ConsumerConfig) DowngradeEnabled() bool {
	return c.MigrationPolicy == "downgrade" || c.MigrationPolicy == "bidirectional"
}

// StreamsConfig configures KIP-1071 streams groups (group.streams.*).
type StreamsConfig struct {
	Enabled               bool          // "streams" in group.coordinator.rebalance.protocols
	SessionTimeout        time.Duration // group.streams.session.timeout.ms
	HeartbeatInterval     time.Duration // group.streams.heartbeat.interval.ms
	MaxSize               int           // group.streams.max.size
	NumStandbyReplicas    int           // group.streams.num.standby.replicas
	NumWarmupReplicas     int           // group.streams.num.warmup.replicas
	InitialRebalanceDelay time.Duration // group.streams.initial.rebalance.delay.ms
}

// TopologyDescriptionConfig is what shards need of KIP-1331 (the plugin itself is called by the
// adapters, never from a shard).
type TopologyDescriptionConfig struct {
	// PluginConfigured is true when group.streams.topology.description.plugin.class names a
	// plugin: offset expiry then keeps a streams group whose description is still stored.
	PluginConfigured bool
}

// ConfigValues reads broker config keys (internal/config's Values); the core reads them once,
// in ConfigFrom, and never imports the parser.
type ConfigValues interface {
	Int(name string) int64
	Ms(name string) time.Duration
	String(name string) string
	List(name string) []string
	OffsetsRetention() time.Duration
}

// ConfigFrom derives the coordinator Config from broker config values.
func ConfigFrom(v ConfigValues) *Config {
	protocols := map[string]bool{}
	for _, p := range v.List("group.coordinator.rebalance.protocols") {
		protocols[p] = true
	}
	return &Config{
		Shards: int32(v.Int("offsets.topic.num.partitions")),
		Offsets: OffsetsConfig{
			MetadataMaxBytes: int(v.Int("offset.metadata.max.bytes")),
			Retention:        v.OffsetsRetention(),
			RetentionCheck:   v.Ms("offsets.retention.check.interval.ms"),
		},
		Classic: ClassicConfig{
			InitialRebalanceDelay: v.Ms("group.initial.rebalance.delay.ms"),
			MinSessionTimeout:     v.Ms("group.min.session.timeout.ms"),
			MaxSessionTimeout:     v.Ms("group.max.session.timeout.ms"),
			MaxSize:               int(v.Int("group.max.size")),
		},
		Consumer: ConsumerConfig{
			Enabled:              protocols["consumer"],
			SessionTimeout:       v.Ms("group.consumer.session.timeout.ms"),
			HeartbeatInterval:    v.Ms("group.consumer.heartbeat.interval.ms"),
			MaxSize:              int(v.Int("group.consumer.max.size")),
			AssignmentInterval:   v.Ms("group.consumer.assignment.interval.ms"),
			Assignors:            v.List("group.consumer.assignors"),
			MigrationPolicy:      v.String("group.consumer.migration.policy"),
			RegexRefreshInterval: v.Ms("group.consumer.regex.refresh.interval.ms"),
		},
		Streams: StreamsConfig{
			Enabled:               protocols["streams"],
			SessionTimeout:        v.Ms("group.streams.session.timeout.ms"),
			HeartbeatInterval:     v.Ms("group.streams.heartbeat.interval.ms"),
			MaxSize:               int(v.Int("group.streams.max.size")),
			NumStandbyReplicas:    int(v.Int("group.streams.num.standby.replicas")),
			NumWarmupReplicas:     int(v.Int("group.streams.num.warmup.replicas")),
			InitialRebalanceDelay: v.Ms("group.streams.initial.rebalance.delay.ms"),
		},
		Share: shareConfigFrom(v),
		TopologyDescriptions: TopologyDescriptionConfig{
			PluginConfigured: v.String("group.streams.topology.description.plugin.class") != "",
		},
		History: HistoryConfig{
			MaxEvents:   int(v.Int("muster.rebalance.history.max.events")),
			LogInterval: v.Ms("muster.rebalance.log.interval.ms"),
		},
	}
}
