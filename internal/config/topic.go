package config

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// TopicDef is one Kafka topic-level config (Kafka's LogConfig): its type, bounds and default,
// and Server, the broker key whose value is the topic's default (ServerTopicConfigSynonyms;
// "" when Kafka has none). Internal configs are accepted but not listed by DescribeConfigs.
type TopicDef struct {
	Def
	Server   string
	Internal bool
}

// Topic config names muster acts on.
const (
	TopicCleanupPolicy        = "cleanup.policy"
	TopicDeleteRetentionMs    = "delete.retention.ms"
	TopicMaxCompactionLagMs   = "max.compaction.lag.ms"
	TopicMaxMessageBytes      = "max.message.bytes"
	TopicMessageTimestampType = "message.timestamp.type"
	// TopicMessageTimestampBeforeMaxMs and TopicMessageTimestampAfterMaxMs bound CreateTime
	// timestamps (Kafka's LogValidator rejects a record outside them with INVALID_TIMESTAMP).
	TopicMessageTimestampBeforeMaxMs = "message.timestamp.before.max.ms"
	TopicMessageTimestampAfterMaxMs  = "message.timestamp.after.max.ms"
	TopicMinCleanableDirtyRatio      = "min.cleanable.dirty.ratio"
	TopicMinCompactionLagMs          = "min.compaction.lag.ms"
	TopicRemoteStorageEnable         = "remote.storage.enable"
	TopicRetentionBytes              = "retention.bytes"
	TopicRetentionMs                 = "retention.ms"
	TopicSegmentBytes                = "segment.bytes"
	TopicSegmentMs                   = "segment.ms"
	// TopicInternalSegmentBytes is Kafka's internal.segment.bytes (KAFKA-19080): a segment size
	// below segment.bytes' 1 MiB minimum, for tests; it wins over segment.bytes when set.
	TopicInternalSegmentBytes = "internal.segment.bytes"
)

// TopicDefs are Kafka 4's topic configs. muster acts on cleanup.policy, retention.ms,
// retention.bytes, segment.bytes, segment.ms, delete.retention.ms, min/max.compaction.lag.ms,
// min.cleanable.dirty.ratio, max.message.bytes and message.timestamp.type; the others are
// validated, stored and reported.
var TopicDefs = []TopicDef{
	{Def{Name: TopicCleanupPolicy, Kind: List, Default: "delete", OneOf: []string{"compact", "delete"}, Doc: "delete: old segments are removed by retention.ms and retention.bytes; compact: the log cleaner keeps the latest record of each key; both may be given."}, "log.cleanup.policy", false},
	{Def{Name: "compression.type", Kind: String, Default: "producer", OneOf: compressionTypes, Doc: "Final compression of the topic's batches (muster stores batches as produced)."}, "compression.type", false},
	{Def{Name: "compression.gzip.level", Kind: Int, Default: "-1", Check: gzipLevel, Doc: "gzip level used when compression.type is gzip."}, "compression.gzip.level", false},
	{Def{Name: "compression.lz4.level", Kind: Int, Default: "9", Min: i64(1), Max: i64(17), Doc: "lz4 level used when compression.type is lz4."}, "compression.lz4.level", false},
	{Def{Name: "compression.zstd.level", Kind: Int, Default: "3", Min: i64(-131072), Max: i64(22), Doc: "zstd level used when compression.type is zstd."}, "compression.zstd.level", false},
	{Def{Name: TopicDeleteRetentionMs, Kind: Long, Default: "86400000", Min: i64(0), Doc: "How long a tombstone of a compacted topic stays readable after the cleaning that first reached it."}, "log.cleaner.delete.retention.ms", false},
	{Def{Name: "file.delete.delay.ms", Kind: Long, Default: "60000", Min: i64(0), Doc: "Delay before a deleted segment's files go (accepted; muster deletes at once)."}, "log.segment.delete.delay.ms", false},
	{Def{Name: "flush.messages", Kind: Long, Default: maxLong, Min: i64(1), Doc: "Records between forced flushes (accepted; muster syncs every acknowledged write)."}, "log.flush.interval.messages", false},
	{Def{Name: "flush.ms", Kind: Long, Default: maxLong, Min: i64(0), Doc: "Time between forced flushes (accepted; muster syncs every acknowledged write)."}, "log.flush.interval.ms", false},
	{Def{Name: "follower.replication.throttled.replicas", Kind: List, Default: "", Check: throttledReplicas, Doc: "Replicas whose follower replication is throttled (one replica: accepted)."}, "", false},
	{Def{Name: "index.interval.bytes", Kind: Int, Default: "4096", Min: i64(0), Doc: "Bytes between offset index entries (accepted)."}, "log.index.interval.bytes", false},
	{Def{Name: "leader.replication.throttled.replicas", Kind: List, Default: "", Check: throttledReplicas, Doc: "Replicas whose leader replication is throttled (one replica: accepted)."}, "", false},
	{Def{Name: "local.retention.bytes", Kind: Long, Default: "-2", Min: i64(-2), Doc: "Tiered storage local retention in bytes (accepted)."}, "log.local.retention.bytes", false},
	{Def{Name: "local.retention.ms", Kind: Long, Default: "-2", Min: i64(-2), Doc: "Tiered storage local retention in ms (accepted)."}, "log.local.retention.ms", false},
	{Def{Name: TopicMaxCompactionLagMs, Kind: Long, Default: maxLong, Min: i64(1), Doc: "The longest a record may stay uncompacted: a segment older than this is cleaned whatever the dirty ratio, and the active segment rolls at this age."}, "log.cleaner.max.compaction.lag.ms", false},
	{Def{Name: TopicMaxMessageBytes, Kind: Int, Default: "1048588", Min: i64(0), Doc: "The largest record batch the topic accepts."}, "message.max.bytes", false},
	{Def{Name: TopicMessageTimestampAfterMaxMs, Kind: Long, Default: "3600000", Min: i64(0), Doc: "How far in the future a CreateTime timestamp may be; a record further ahead is rejected (INVALID_TIMESTAMP)."}, "log.message.timestamp.after.max.ms", false},
	{Def{Name: TopicMessageTimestampBeforeMaxMs, Kind: Long, Default: maxLong, Min: i64(0), Doc: "How far in the past a CreateTime timestamp may be; an older record is rejected (INVALID_TIMESTAMP)."}, "log.message.timestamp.before.max.ms", false},
	{Def{Name: TopicMessageTimestampType, Kind: String, Default: "CreateTime", OneOf: []string{"CreateTime", "LogAppendTime"}, Doc: "CreateTime keeps the producer's timestamps; LogAppendTime stamps the broker's time."}, "log.message.timestamp.type", false},
	{Def{Name: TopicMinCleanableDirtyRatio, Kind: Double, Default: "0.5", FMin: f64(0), FMax: f64(1), Doc: "The log cleaner compacts a log once its uncleaned bytes exceed this share of its bytes."}, "log.cleaner.min.cleanable.ratio", false},
	{Def{Name: TopicMinCompactionLagMs, Kind: Long, Default: "0", Min: i64(0), Doc: "The least time a record stays uncompacted."}, "log.cleaner.min.compaction.lag.ms", false},
	{Def{Name: "min.insync.replicas", Kind: Int, Default: "1", Min: i64(1), Doc: "Replicas that must acknowledge an acks=all write (one replica: accepted)."}, "min.insync.replicas", false},
	{Def{Name: "preallocate", Kind: Bool, Default: "false", Doc: "Preallocate segment files (accepted)."}, "log.preallocate", false},
	{Def{Name: "remote.log.copy.disable", Kind: Bool, Default: "false", Doc: "Tiered storage: stop copying segments (accepted)."}, "", false},
	{Def{Name: "remote.log.delete.on.disable", Kind: Bool, Default: "false", Doc: "Tiered storage: delete remote data when disabled (accepted)."}, "", false},
	{Def{Name: TopicRemoteStorageEnable, Kind: Bool, Default: "false", Doc: "Tiered storage (not available: only false is accepted)."}, "", false},
	{Def{Name: TopicRetentionBytes, Kind: Long, Default: "-1", Doc: "The most bytes a partition keeps before old data is deleted (cleanup.policy delete); -1 = unlimited."}, "log.retention.bytes", false},
	{Def{Name: TopicRetentionMs, Kind: Long, Default: "604800000", Min: i64(-1), Doc: "How long records are kept before deletion (cleanup.policy delete); -1 = unlimited."}, "log.retention.ms", false},
	{Def{Name: TopicSegmentBytes, Kind: Int, Default: "1073741824", Min: i64(1 << 20), Doc: "The most bytes a segment holds before a new one is rolled; the active segment is never compacted."}, "log.segment.bytes", false},
	{Def{Name: "segment.index.bytes", Kind: Int, Default: "10485760", Min: i64(4), Doc: "Offset index size per segment (accepted)."}, "log.index.size.max.bytes", false},
	{Def{Name: "segment.jitter.ms", Kind: Long, Default: "0", Min: i64(0), Doc: "Random jitter subtracted from segment.ms (accepted; muster rolls without jitter)."}, "log.roll.jitter.ms", false},
	{Def{Name: TopicSegmentMs, Kind: Long, Default: "604800000", Min: i64(1), Doc: "The most time between a segment's first and newest record before a new one is rolled."}, "log.roll.ms", false},
	{Def{Name: "unclean.leader.election.enable", Kind: Bool, Default: "false", Doc: "Allow out-of-sync replicas to lead (one replica: accepted)."}, "unclean.leader.election.enable", false},
	{Def{Name: TopicInternalSegmentBytes, Kind: Int, Default: "", Min: i64(14), Doc: "Internal: segment size below segment.bytes' minimum (tests)."}, "", true},
}

var topicDefsByName = func() map[string]*TopicDef {
	m := make(map[string]*TopicDef, len(TopicDefs))
	for i := range TopicDefs {
		m[TopicDefs[i].Name] = &TopicDefs[i]
	}
	return m
}()

// LookupTopic returns the topic config called name.
func LookupTopic(name string) (*TopicDef, bool) {
	d, ok := topicDefsByName[name]
	return d, ok
}

// TopicNames lists the topic configs DescribeConfigs reports (the non-internal ones), sorted.
func TopicNames() []string {
	out := make([]string, 0, len(TopicDefs))
	for _, d := range TopicDefs {
		if !d.Internal {
			out = append(out, d.Name)
		}
	}
	sort.Strings(out)
	return out
}

var throttledReplicaEntry = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// throttledReplicas is Kafka's ThrottledReplicaListValidator: "*" or partition:broker pairs.
func throttledReplicas(v string) string {
	l := KafkaList(v)
	if len(l) == 1 && l[0] == "*" {
		return ""
	}
	for _, e := range l {
		if !throttledReplicaEntry.MatchString(strings.TrimSpace(e)) {
			return "must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
		}
	}
	return ""
}

// TopicDefault is the value topic config name takes when the topic does not override it: the
// broker's value of its synonyms (Kafka's precedence: log.retention.ms, then .minutes, then
// .hours, converted to the topic config's unit), else Kafka's default of the topic config.
func (v *Values) TopicDefault(name string) string {
	d, ok := topicDefsByName[name]
	if !ok {
		return ""
	}
	switch name {
	case TopicRetentionMs:
		return strconv.FormatInt(v.LogRetentionMs(), 10)
	case TopicSegmentMs:
		return strconv.FormatInt(v.LogRollMs(), 10)
	case "segment.jitter.ms":
		if v.IsSet("log.roll.jitter.ms") {
			return v.String("log.roll.jitter.ms")
		}
		return strconv.FormatInt(v.Int("log.roll.jitter.hours")*3_600_000, 10)
	case "flush.ms":
		if v.IsSet("log.flush.interval.ms") {
			return v.String("log.flush.interval.ms")
		}
		return v.String("log.flush.scheduler.interval.ms")
	}
	if d.Server == "" {
		return d.Default
	}
	if _, ok := defsByName[d.Server]; !ok {
		return d.Default
	}
	return v.String(d.Server)
}

// ValidateTopicConfigs checks a topic's complete set of config overrides as Kafka's
// LogConfig.validate does against the broker defaults in v: unknown names, null values, each
// value's type and bounds, min.compaction.lag.ms ≤ max.compaction.lag.ms (with the broker
// default standing in for an unset side) and tiered storage, which this broker does not offer.
// It returns the message of the INVALID_CONFIG error, "" when the set is valid.
func ValidateTopicConfigs(v *Values, overrides map[string]*string) string {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := topicDefsByName[n]; !ok {
			return "Unknown topic config name: " + n
		}
	}
	var nulls []string
	for _, n := range names {
		if overrides[n] == nil {
			nulls = append(nulls, n)
		}
	}
	if len(nulls) > 0 {
		return "Null value not supported for topic configs: " + strings.Join(nulls, ",")
	}
	for _, n := range names {
		if msg := topicDefsByName[n].KafkaCheck(*overrides[n]); msg != "" {
			return msg
		}
	}
	eff := func(n string) int64 {
		if p, ok := overrides[n]; ok {
			x, _ := strconv.ParseInt(strings.TrimSpace(*p), 10, 64)
			return x
		}
		x, _ := strconv.ParseInt(v.TopicDefault(n), 10, 64)
		return x
	}
	if lo, hi := eff(TopicMinCompactionLagMs), eff(TopicMaxCompactionLagMs); lo > hi {
		return "conflict topic config setting " + TopicMinCompactionLagMs + " (" + strconv.FormatInt(lo, 10) + ") > " +
			TopicMaxCompactionLagMs + " (" + strconv.FormatInt(hi, 10) + ")"
	}
	if p, ok := overrides[TopicRemoteStorageEnable]; ok && strings.EqualFold(strings.TrimSpace(*p), "true") {
		return "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
	}
	return ""
}
