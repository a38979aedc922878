package data

import (
	"math"
	"strconv"
	"strings"

	"github.com/muster-io/muster/internal/config"
)

// logConfig is one topic's effective log configuration (Kafka's LogConfig): its overrides over
// the broker's defaults in force. It is immutable; a config change installs a new one.
type logConfig struct {
	retentionMs, retentionBytes int64 // -1 = unlimited
	delete, compact             bool  // cleanup.policy
	segmentBytes                int64
	// segmentMs is the most time a segment stays active: segment.ms, or for a compacted topic
	// the smaller of segment.ms and max.compaction.lag.ms (Kafka's LogConfig.maxSegmentMs).
	segmentMs          int64
	deleteRetentionMs  int64
	minCompactionLagMs int64
	maxCompactionLagMs int64
	minCleanableRatio  float64
	maxMessageBytes    int
	logAppendTime      bool
	// timestampBeforeMs and timestampAfterMs bound a CreateTime record's timestamp around the
	// broker's clock: message.timestamp.before.max.ms and message.timestamp.after.max.ms.
	timestampBeforeMs, timestampAfterMs int64
}

// newLogConfig computes a topic's log configuration from its overrides and the broker
// configuration in force (both already validated).
func newLogConfig(eff *config.Values, overrides map[string]string) *logConfig {
	get := func(name string) string {
		if v, ok := overrides[name]; ok {
			return strings.TrimSpace(v)
		}
		return eff.TopicDefault(name)
	}
	i64 := func(name string) int64 {
		n, _ := strconv.ParseInt(get(name), 10, 64)
		return n
	}
	lc := &logConfig{
		retentionMs:        max(i64(config.TopicRetentionMs), -1),
		retentionBytes:     i64(config.TopicRetentionBytes),
		segmentBytes:       i64(config.TopicSegmentBytes),
		segmentMs:          i64(config.TopicSegmentMs),
		deleteRetentionMs:  i64(config.TopicDeleteRetentionMs),
		minCompactionLagMs: i64(config.TopicMinCompactionLagMs),
		maxCompactionLagMs: i64(config.TopicMaxCompactionLagMs),
		maxMessageBytes:    int(i64(config.TopicMaxMessageBytes)),
		logAppendTime:      get(config.TopicMessageTimestampType) == timestampLogAppendTime,
		timestampBeforeMs:  i64(config.TopicMessageTimestampBeforeMaxMs),
		timestampAfterMs:   i64(config.TopicMessageTimestampAfterMaxMs),
	}
	if lc.retentionBytes < 0 {
		lc.retentionBytes = -1
	}
	if v, ok := overrides[config.TopicInternalSegmentBytes]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			lc.segmentBytes = n
		}
	}
	lc.minCleanableRatio, _ = strconv.ParseFloat(get(config.TopicMinCleanableDirtyRatio), 64)
	for _, p := range config.KafkaList(get(config.TopicCleanupPolicy)) {
		lc.delete = lc.delete || p == "delete"
		lc.compact = lc.compact || p == "compact"
	}
	if lc.compact && lc.maxCompactionLagMs > 0 {
		lc.segmentMs = min(lc.segmentMs, lc.maxCompactionLagMs)
	}
	if lc.segmentMs <= 0 {
		lc.segmentMs = math.MaxInt64
	}
	if lc.segmentBytes <= 0 {
		lc.segmentBytes = math.MaxInt32
	}
	return lc
}
