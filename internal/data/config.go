package data

import (
	"strconv"
	"time"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/store/diskguard"
)

// Config is the broker configuration the data plane needs.
type Config struct {
	NodeID         int32
	AdvertisedHost string
	AdvertisedPort int32
	Rack           string // broker.rack ("" = none)
	ClusterID      string
	// NumPartitions is num.partitions: the partition count of auto-created
	// topics and of CreateTopics with NumPartitions -1. Default 1.
	NumPartitions int32
	// DefaultReplicationFactor is default.replication.factor, reported only
	// (the single node holds the one replica). Default 1.
	DefaultReplicationFactor int16
	// AutoCreateTopics is auto.create.topics.enable (Open cannot tell an unset
	// bool from false, so the server passes Kafka's default, true).
	AutoCreateTopics bool
	// Now is the clock for LogAppendTime and timestamps. Default time.Now.
	Now func() time.Time
	// RetentionCheckInterval is log.retention.check.interval.ms: how often
	// the background loop enforces retention. Default 5 minutes.
	RetentionCheckInterval time.Duration
	// Guard decides which writes the store takes (a full or failed disk); every commit goes
	// through it. nil: every write is attempted (tests).
	Guard *diskguard.Guard
	// ProducerIDBlocks, when set, reserves n consecutive producer ids and returns the first
	// (cluster mode: a counter every node shares); nil: blocks are reserved in the data dir.
	ProducerIDBlocks func(n int64) (int64, error)

	// Values is the static broker configuration (file and overrides): the
	// broker-wide defaults of topic configs (log.*, message.max.bytes), the
	// log cleaner's settings, producer.id.expiration.ms and the bounds of
	// group configs. Dynamic broker configs (IncrementalAlterConfigs on the
	// BROKER resource) are applied on top. When nil, Open builds it from the
	// legacy fields below.
	Values *config.Values

	// ProducerIDExpiration is producer.id.expiration.ms when Values is nil.
	// Default 24h (Kafka's default).
	ProducerIDExpiration time.Duration
	// LogRetentionMs is log.retention.ms when Values is nil; -1 = unlimited,
	// 0 = Kafka's default (7 days).
	LogRetentionMs int64
	// LogRetentionBytes is log.retention.bytes when Values is nil; -1 =
	// unlimited, 0 = Kafka's default (-1).
	LogRetentionBytes int64
}

func (c *Config) setDefaults() {
	if c.NumPartitions <= 0 {
		c.NumPartitions = 1
	}
	if c.DefaultReplicationFactor <= 0 {
		c.DefaultReplicationFactor = 1
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 5 * time.Minute
	}
	if c.Values == nil {
		c.Values = c.legacyValues()
	}
}

// legacyValues is the static configuration the legacy fields describe.
func (c *Config) legacyValues() *config.Values {
	o := []string{
		"node.id=" + strconv.Itoa(int(c.NodeID)),
		"num.partitions=" + strconv.Itoa(int(c.NumPartitions)),
		"auto.create.topics.enable=" + strconv.FormatBool(c.AutoCreateTopics),
	}
	if c.Rack != "" {
		o = append(o, "broker.rack="+c.Rack)
	}
	if c.ProducerIDExpiration > 0 {
		o = append(o, "producer.id.expiration.ms="+strconv.FormatInt(c.ProducerIDExpiration.Milliseconds(), 10))
	}
	if c.LogRetentionMs != 0 {
		o = append(o, "log.retention.ms="+strconv.FormatInt(max(c.LogRetentionMs, -1), 10))
	}
	if c.LogRetentionBytes != 0 {
		o = append(o, "log.retention.bytes="+strconv.FormatInt(max(c.LogRetentionBytes, -1), 10))
	}
	if c.RetentionCheckInterval > 0 {
		o = append(o, "log.retention.check.interval.ms="+strconv.FormatInt(c.RetentionCheckInterval.Milliseconds(), 10))
	}
	v, err := config.Parse(nil, o)
	if err != nil {
		return config.Defaults()
	}
	return v
}

// Topic config names and values the data plane acts on (Kafka's TopicConfig).
const (
	cfgCleanupPolicy   = config.TopicCleanupPolicy
	cfgMaxMessageBytes = config.TopicMaxMessageBytes
	cfgTimestampType   = config.TopicMessageTimestampType
	cfgRetentionMs     = config.TopicRetentionMs
	cfgRetentionBytes  = config.TopicRetentionBytes

	timestampCreateTime    = "CreateTime"
	timestampLogAppendTime = "LogAppendTime"

	maxPartitionsPerTopic = 1 << 16 // guard against absurd requests (memory), not a Kafka limit
)

// validateTopicConfig reports why name=value is not a valid topic config
// with the default broker configuration ("" when it is).
func validateTopicConfig(name string, value *string) string {
	return config.ValidateTopicConfigs(config.Defaults(), map[string]*string{name: value})
}
