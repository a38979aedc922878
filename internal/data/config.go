package data

import (
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
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
	// ProducerIDExpiration is producer.id.expiration.ms: an idempotent
	// producer's sequence state in a partition is dropped this long after its
	// last append there. Default 24h (Kafka's default).
	ProducerIDExpiration time.Duration
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
	if c.ProducerIDExpiration <= 0 {
		c.ProducerIDExpiration = 24 * time.Hour
	}
}

// Topic config names and values muster understands.
const (
	cfgCleanupPolicy   = "cleanup.policy"
	cfgMaxMessageBytes = "max.message.bytes"
	cfgTimestampType   = "message.timestamp.type"

	timestampCreateTime    = "CreateTime"
	timestampLogAppendTime = "LogAppendTime"

	defaultMaxMessageBytes = 1048588 // Kafka's message.max.bytes default
	maxPartitionsPerTopic  = 1 << 16 // guard against absurd requests (memory), not a Kafka limit
)

// topicConfigDef is one Kafka topic-level config: its default and type.
type topicConfigDef struct {
	def string
	typ kmsg.ConfigType
}

// topicConfigDefs lists Kafka 4's topic-level configs with their defaults.
// muster stores and reports them all; it acts on message.timestamp.type and
// max.message.bytes (retention and compaction are not enforced).
var topicConfigDefs = map[string]topicConfigDef{
	cfgCleanupPolicy:                          {"delete", kmsg.ConfigTypeList},
	"compression.type":                        {"producer", kmsg.ConfigTypeString},
	"compression.gzip.level":                  {"-1", kmsg.ConfigTypeInt},
	"compression.lz4.level":                   {"9", kmsg.ConfigTypeInt},
	"compression.zstd.level":                  {"3", kmsg.ConfigTypeInt},
	"delete.retention.ms":                     {"86400000", kmsg.ConfigTypeLong},
	"file.delete.delay.ms":                    {"60000", kmsg.ConfigTypeLong},
	"flush.messages":                          {"9223372036854775807", kmsg.ConfigTypeLong},
	"flush.ms":                                {"9223372036854775807", kmsg.ConfigTypeLong},
	"follower.replication.throttled.replicas": {"", kmsg.ConfigTypeList},
	"index.interval.bytes":                    {"4096", kmsg.ConfigTypeInt},
	"leader.replication.throttled.replicas":   {"", kmsg.ConfigTypeList},
	"local.retention.bytes":                   {"-2", kmsg.ConfigTypeLong},
	"local.retention.ms":                      {"-2", kmsg.ConfigTypeLong},
	"max.compaction.lag.ms":                   {"9223372036854775807", kmsg.ConfigTypeLong},
	cfgMaxMessageBytes:                        {strconv.Itoa(defaultMaxMessageBytes), kmsg.ConfigTypeInt},
	"message.timestamp.after.max.ms":          {"3600000", kmsg.ConfigTypeLong},
	"message.timestamp.before.max.ms":         {"9223372036854775807", kmsg.ConfigTypeLong},
	cfgTimestampType:                          {timestampCreateTime, kmsg.ConfigTypeString},
	"min.cleanable.dirty.ratio":               {"0.5", kmsg.ConfigTypeDouble},
	"min.compaction.lag.ms":                   {"0", kmsg.ConfigTypeLong},
	"min.insync.replicas":                     {"1", kmsg.ConfigTypeInt},
	"preallocate":                             {"false", kmsg.ConfigTypeBoolean},
	"remote.storage.enable":                   {"false", kmsg.ConfigTypeBoolean},
	"retention.bytes":                         {"-1", kmsg.ConfigTypeLong},
	"retention.ms":                            {"604800000", kmsg.ConfigTypeLong},
	"segment.bytes":                           {"1073741824", kmsg.ConfigTypeInt},
	"segment.index.bytes":                     {"10485760", kmsg.ConfigTypeInt},
	"segment.jitter.ms":                       {"0", kmsg.ConfigTypeLong},
	"segment.ms":                              {"604800000", kmsg.ConfigTypeLong},
	"unclean.leader.election.enable":          {"false", kmsg.ConfigTypeBoolean},
}

// validateTopicConfig reports why name=value is not a valid topic config
// ("" when it is): unknown names and values that do not parse as the
// config's type are INVALID_CONFIG in Kafka.
func validateTopicConfig(name string, value *string) string {
	def, ok := topicConfigDefs[name]
	if !ok {
		return "Unknown topic config name: " + name
	}
	if value == nil {
		return "Null value not supported for topic config " + name
	}
	v := *value
	var err error
	switch def.typ {
	case kmsg.ConfigTypeInt:
		_, err = strconv.ParseInt(v, 10, 32)
	case kmsg.ConfigTypeLong:
		_, err = strconv.ParseInt(v, 10, 64)
	case kmsg.ConfigTypeDouble:
		_, err = strconv.ParseFloat(v, 64)
	case kmsg.ConfigTypeBoolean:
		_, err = strconv.ParseBool(v)
	}
	if err != nil {
		return "Invalid value " + v + " for configuration " + name
	}
	switch name {
	case cfgTimestampType:
		if v != timestampCreateTime && v != timestampLogAppendTime {
			return "Invalid value " + v + " for configuration " + name + ": String must be one of: CreateTime, LogAppendTime"
		}
	case cfgCleanupPolicy:
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "delete" && p != "compact" {
				return "Invalid value " + v + " for configuration " + name
			}
		}
	case cfgMaxMessageBytes:
		if n, _ := strconv.Atoi(v); n < 0 {
			return "Invalid value " + v + " for configuration " + name
		}
	}
	return ""
}
