package config

import (
	"math"
	"strconv"
	"strings"
)

func f64(v float64) *float64 { return &v }

const maxLong = "9223372036854775807"

// logDefs are Kafka's log, segment and log-cleaner broker keys (KafkaConfig / ServerLogConfigs /
// CleanerConfig): the broker-wide defaults of the topic configs (see TopicDefs for which topic
// config each one backs). Keys muster does not act on are accepted and reported, so that
// DescribeConfigs shows the same defaults and synonyms as Kafka.
var logDefs = []Def{
	{Name: "log.segment.bytes", Kind: Int, Default: "1073741824", Min: i64(1 << 20), Doc: "the most bytes a log segment holds before a new one is rolled (default of segment.bytes)"},
	{Name: "log.roll.ms", Kind: Long, Default: "", Min: i64(1), Doc: "the most time between the first and the newest record of a segment before a new one is rolled; wins over log.roll.hours when set (default of segment.ms)"},
	{Name: "log.roll.hours", Kind: Int, Default: "168", Min: i64(1), Doc: "log.roll.ms in hours"},
	{Name: "log.roll.jitter.ms", Kind: Long, Default: "", Min: i64(0), Doc: "accepted; default of segment.jitter.ms (muster rolls without jitter)"},
	{Name: "log.roll.jitter.hours", Kind: Int, Default: "0", Min: i64(0), Doc: "log.roll.jitter.ms in hours"},
	{Name: "log.cleanup.policy", Kind: List, Default: "delete", OneOf: []string{"compact", "delete"}, Doc: "default cleanup.policy of topics: delete (retention), compact (log compaction) or both"},
	{Name: "log.cleaner.enable", Kind: Bool, Default: "true", Doc: "run the log cleaner, which compacts topics whose cleanup.policy includes compact"},
	{Name: "log.cleaner.threads", Kind: Int, Default: "1", Min: i64(0), Doc: "partitions the log cleaner compacts at once (0 = none)"},
	{Name: "log.cleaner.backoff.ms", Kind: Long, Default: "15000", Min: i64(0), Doc: "how long the log cleaner sleeps when no log needs cleaning"},
	{Name: "log.cleaner.min.cleanable.ratio", Kind: Double, Default: "0.5", FMin: f64(0), FMax: f64(1), Doc: "default min.cleanable.dirty.ratio of topics"},
	{Name: "log.cleaner.delete.retention.ms", Kind: Long, Default: "86400000", Min: i64(0), Doc: "default delete.retention.ms of topics: how long tombstones stay after their first cleaning"},
	{Name: "log.cleaner.min.compaction.lag.ms", Kind: Long, Default: "0", Min: i64(0), Doc: "default min.compaction.lag.ms of topics"},
	{Name: "log.cleaner.max.compaction.lag.ms", Kind: Long, Default: maxLong, Min: i64(1), Doc: "default max.compaction.lag.ms of topics"},
	{Name: "log.cleaner.dedupe.buffer.size", Kind: Long, Default: "134217728", Min: i64(0), Doc: "memory for the cleaner's key → offset map, shared by its threads (24 bytes per key)"},
	{Name: "log.cleaner.io.buffer.load.factor", Kind: Double, Default: "0.9", Doc: "how full the cleaner's key → offset map may get"},
	{Name: "log.cleaner.io.buffer.size", Kind: Int, Default: "524288", Min: i64(0), Doc: "accepted for compatibility"},
	{Name: "log.cleaner.io.max.bytes.per.second", Kind: Double, Default: "1.7976931348623157E308", Doc: "accepted for compatibility (the cleaner is not throttled)"},
	{Name: "message.max.bytes", Kind: Int, Default: "1048588", Min: i64(0), Doc: "default max.message.bytes of topics: the largest record batch accepted"},
	{Name: "log.message.timestamp.type", Kind: String, Default: "CreateTime", OneOf: []string{"CreateTime", "LogAppendTime"}, Doc: "default message.timestamp.type of topics"},
	{Name: "log.message.timestamp.before.max.ms", Kind: Long, Default: maxLong, Min: i64(0), Doc: "accepted; default of message.timestamp.before.max.ms"},
	{Name: "log.message.timestamp.after.max.ms", Kind: Long, Default: "3600000", Min: i64(0), Doc: "accepted; default of message.timestamp.after.max.ms"},
	{Name: "log.index.size.max.bytes", Kind: Int, Default: "10485760", Min: i64(4), Doc: "accepted; default of segment.index.bytes"},
	{Name: "log.index.interval.bytes", Kind: Int, Default: "4096", Min: i64(0), Doc: "accepted; default of index.interval.bytes"},
	{Name: "log.flush.interval.messages", Kind: Long, Default: maxLong, Min: i64(1), Doc: "accepted; default of flush.messages (muster syncs every acknowledged write)"},
	{Name: "log.flush.interval.ms", Kind: Long, Default: "", Doc: "accepted; default of flush.ms"},
	{Name: "log.flush.scheduler.interval.ms", Kind: Long, Default: maxLong, Doc: "accepted; default of flush.ms when log.flush.interval.ms is unset"},
	{Name: "log.segment.delete.delay.ms", Kind: Long, Default: "60000", Min: i64(0), Doc: "accepted; default of file.delete.delay.ms"},
	{Name: "log.preallocate", Kind: Bool, Default: "false", Doc: "accepted; default of preallocate"},
	{Name: "log.local.retention.ms", Kind: Long, Default: "-2", Min: i64(-2), Doc: "accepted; default of local.retention.ms"},
	{Name: "log.local.retention.bytes", Kind: Long, Default: "-2", Min: i64(-2), Doc: "accepted; default of local.retention.bytes"},
	{Name: "min.insync.replicas", Kind: Int, Default: "1", Min: i64(1), Doc: "accepted; default of min.insync.replicas (one replica)"},
	{Name: "compression.type", Kind: String, Default: "producer", OneOf: compressionTypes, Doc: "accepted; default of compression.type (batches are stored as produced)"},
	{Name: "compression.gzip.level", Kind: Int, Default: "-1", Check: gzipLevel, Doc: "accepted; default of compression.gzip.level"},
	{Name: "compression.lz4.level", Kind: Int, Default: "9", Min: i64(1), Max: i64(17), Doc: "accepted; default of compression.lz4.level"},
	{Name: "compression.zstd.level", Kind: Int, Default: "3", Min: i64(-131072), Max: i64(22), Doc: "accepted; default of compression.zstd.level"},
	{Name: "unclean.leader.election.enable", Kind: Bool, Default: "false", Doc: "accepted; default of unclean.leader.election.enable"},
}

var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// gzipLevel is Kafka's gzip level validator: -1 (default) or 1..9.
func gzipLevel(v string) string {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err == nil && (n == -1 || n >= 1 && n <= 9) {
		return ""
	}
	return "Value must be between 1 and 9"
}

// LogRollMs is the broker's default segment.ms: log.roll.ms, else log.roll.hours in ms.
func (v *Values) LogRollMs() int64 {
	if v.IsSet("log.roll.ms") {
		return v.Int("log.roll.ms")
	}
	h := v.Int("log.roll.hours")
	if h > math.MaxInt64/3_600_000 {
		return math.MaxInt64
	}
	return h * 3_600_000
}
