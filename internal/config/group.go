package config

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// GroupDef is one Kafka group config (Kafka's GroupConfig, KIP-848): a per-group override of a
// broker group.* key (Server), bounded by the broker's min/max keys (MinKey/MaxKey, "" for
// none).
type GroupDef struct {
	Def
	Server         string
	MinKey, MaxKey string
}

// Group config names.
const (
	GroupConsumerSessionTimeoutMs     = "consumer.session.timeout.ms"
	GroupConsumerHeartbeatIntervalMs  = "consumer.heartbeat.interval.ms"
	GroupConsumerAssignmentIntervalMs = "consumer.assignment.interval.ms"
	GroupShareSessionTimeoutMs        = "share.session.timeout.ms"
	GroupShareHeartbeatIntervalMs     = "share.heartbeat.interval.ms"
	GroupShareRecordLockDurationMs    = "share.record.lock.duration.ms"
	GroupShareDeliveryCountLimit      = "share.delivery.count.limit"
	GroupSharePartitionMaxRecordLocks = "share.partition.max.record.locks"
	GroupShareAutoOffsetReset         = "share.auto.offset.reset"
	GroupShareIsolationLevel          = "share.isolation.level"
	GroupStreamsSessionTimeoutMs      = "streams.session.timeout.ms"
	GroupStreamsHeartbeatIntervalMs   = "streams.heartbeat.interval.ms"
	GroupStreamsNumStandbyReplicas    = "streams.num.standby.replicas"
	GroupStreamsInitialRebalanceDelay = "streams.initial.rebalance.delay.ms"
)

// GroupDefs are the group configs IncrementalAlterConfigs and AlterConfigs accept for GROUP
// resources.
var GroupDefs = []GroupDef{
	{Def{Name: GroupConsumerSessionTimeoutMs, Kind: Int, Min: i64(1), Doc: "The timeout to detect failed members of a consumer group."}, "group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
	{Def{Name: GroupConsumerHeartbeatIntervalMs, Kind: Int, Min: i64(1), Doc: "The heartbeat interval given to the members of a consumer group."}, "group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	{Def{Name: GroupConsumerAssignmentIntervalMs, Kind: Int, Min: i64(0), Doc: "The least time between two target assignments of a consumer group."}, "group.consumer.assignment.interval.ms", "", ""},
	{Def{Name: GroupShareSessionTimeoutMs, Kind: Int, Min: i64(1), Doc: "The timeout to detect failed members of a share group."}, "group.share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
	{Def{Name: GroupShareHeartbeatIntervalMs, Kind: Int, Min: i64(1), Doc: "The heartbeat interval given to the members of a share group."}, "group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
	{Def{Name: GroupShareRecordLockDurationMs, Kind: Int, Min: i64(1000), Doc: "How long a share group member holds the records it fetched."}, "group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	{Def{Name: GroupShareDeliveryCountLimit, Kind: Int, Min: i64(2), Doc: "How often a share group delivers a record before giving up on it."}, "group.share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"},
	{Def{Name: GroupSharePartitionMaxRecordLocks, Kind: Int, Min: i64(100), Doc: "The most records of a partition a share group holds at once."}, "group.share.partition.max.record.locks", "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"},
	{Def{Name: GroupShareAutoOffsetReset, Kind: String, Default: "latest", Check: shareAutoOffsetReset, Doc: "Where a share group starts reading a partition: latest, earliest or by_duration:<ISO-8601 duration>."}, "", "", ""},
	{Def{Name: GroupShareIsolationLevel, Kind: String, Default: "read_uncommitted", OneOf: []string{"read_committed", "read_uncommitted"}, Doc: "Whether a share group delivers records of aborted transactions."}, "", "", ""},
	{Def{Name: GroupStreamsSessionTimeoutMs, Kind: Int, Min: i64(1), Doc: "The timeout to detect failed members of a streams group."}, "group.streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
	{Def{Name: GroupStreamsHeartbeatIntervalMs, Kind: Int, Min: i64(1), Doc: "The heartbeat interval given to the members of a streams group."}, "group.streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
	{Def{Name: GroupStreamsNumStandbyReplicas, Kind: Int, Min: i64(0), Doc: "The number of standby replicas of each task of a streams group."}, "group.streams.num.standby.replicas", "", "group.streams.max.standby.replicas"},
	{Def{Name: GroupStreamsInitialRebalanceDelay, Kind: Int, Min: i64(0), Doc: "How long a new streams group waits for members before its first assignment."}, "group.streams.initial.rebalance.delay.ms", "", ""},
}

var groupDefsByName = func() map[string]*GroupDef {
	m := make(map[string]*GroupDef, len(GroupDefs))
	for i := range GroupDefs {
		m[GroupDefs[i].Name] = &GroupDefs[i]
	}
	return m
}()

// LookupGroup returns the group config called name.
func LookupGroup(name string) (*GroupDef, bool) {
	d, ok := groupDefsByName[name]
	return d, ok
}

// GroupNames lists the group configs, sorted.
func GroupNames() []string {
	out := make([]string, 0, len(GroupDefs))
	for _, d := range GroupDefs {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// GroupDefault is the broker's value of group config name (its group.* key), or the group
// config's own default when it has no broker key.
func (v *Values) GroupDefault(name string) string {
	d, ok := groupDefsByName[name]
	if !ok {
		return ""
	}
	if d.Server == "" {
		return d.Default
	}
	return v.String(d.Server)
}

var isoDuration = regexp.MustCompile(`^P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$`)

func shareAutoOffsetReset(v string) string {
	switch strings.ToLower(v) {
	case "latest", "earliest":
		return ""
	}
	if d, ok := strings.CutPrefix(strings.ToLower(v), "by_duration:"); ok && d != "p" && d != "pt" && isoDuration.MatchString(strings.ToUpper(d)) {
		return ""
	}
	return "String must be one of: latest, earliest, by_duration:PnDTnHnMn.nS"
}

// ValidateGroupConfigs checks a group's complete set of config overrides as Kafka's
// GroupConfig.validate does with the broker's bounds in v: unknown names, null values, each
// value's type, the broker's min/max of each key, and session timeout > heartbeat interval per
// group type (the broker default standing in for the side that is not overridden). It returns
// the message of the INVALID_CONFIG error, "" when the set is valid.
func ValidateGroupConfigs(v *Values, overrides map[string]*string) string {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := groupDefsByName[n]; !ok {
			return "Unknown group config name: " + n
		}
	}
	var nulls []string
	for _, n := range names {
		if overrides[n] == nil {
			nulls = append(nulls, n)
		}
	}
	if len(nulls) > 0 {
		return "Null value not supported for group configs: " + strings.Join(nulls, ",")
	}
	vals := map[string]int64{}
	for _, n := range names {
		d := groupDefsByName[n]
		if msg := d.KafkaCheck(*overrides[n]); msg != "" {
			return msg
		}
		if d.Kind == Int {
			vals[n], _ = strconv.ParseInt(strings.TrimSpace(*overrides[n]), 10, 64)
		}
	}
	for _, d := range GroupDefs {
		x, ok := vals[d.Name]
		if !ok {
			continue
		}
		lo, hi, hasLo, hasHi := groupBounds(v, &d)
		switch {
		case hasLo && hasHi && (x < lo || x > hi):
			return d.Name + " must be in the range " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + " inclusive."
		case hasHi && x > hi:
			return d.Name + " must be less than or equal to " + strconv.FormatInt(hi, 10)
		case hasLo && x < lo:
			return d.Name + " must be greater than or equal to " + strconv.FormatInt(lo, 10)
		}
	}
	for _, pair := range [][2]string{
		{GroupConsumerSessionTimeoutMs, GroupConsumerHeartbeatIntervalMs},
		{GroupShareSessionTimeoutMs, GroupShareHeartbeatIntervalMs},
		{GroupStreamsSessionTimeoutMs, GroupStreamsHeartbeatIntervalMs},
	} {
		s, sok := vals[pair[0]]
		h, hok := vals[pair[1]]
		if !sok && !hok {
			continue
		}
		if !sok {
			s = v.Int(groupDefsByName[pair[0]].Server)
		}
		if !hok {
			h = v.Int(groupDefsByName[pair[1]].Server)
		}
		if s <= h {
			return pair[0] + " must be greater than " + pair[1]
		}
	}
	return ""
}

// groupBounds are the broker's bounds of group config d: its min/max keys, or for a key without
// them the bounds of its broker key's own definition.
func groupBounds(v *Values, d *GroupDef) (lo, hi int64, hasLo, hasHi bool) {
	if d.MinKey != "" {
		lo, hasLo = v.Int(d.MinKey), true
	}
	if d.MaxKey != "" {
		hi, hasHi = v.Int(d.MaxKey), true
	}
	if d.MinKey == "" && d.MaxKey == "" && d.Server != "" {
		if sd, ok := defsByName[d.Server]; ok {
			if sd.Min != nil {
				lo, hasLo = *sd.Min, true
			}
			if sd.Max != nil {
				hi, hasHi = *sd.Max, true
			}
		}
	}
	return lo, hi, hasLo, hasHi
}

// GroupConfig is one group's dynamic config overrides (GROUP resources of IncrementalAlterConfigs
// and AlterConfigs): only the keys set for the group. It is immutable; the zero value has none.
type GroupConfig struct{ m map[string]string }

// NewGroupConfig returns a GroupConfig holding a copy of overrides (already validated).
func NewGroupConfig(overrides map[string]string) GroupConfig {
	if len(overrides) == 0 {
		return GroupConfig{}
	}
	m := make(map[string]string, len(overrides))
	for k, x := range overrides {
		m[k] = x
	}
	return GroupConfig{m: m}
}

// Overrides returns a copy of the group's overrides.
func (g GroupConfig) Overrides() map[string]string {
	m := make(map[string]string, len(g.m))
	for k, x := range g.m {
		m[k] = x
	}
	return m
}

// Get returns the group's override of name.
func (g GroupConfig) Get(name string) (string, bool) { x, ok := g.m[name]; return x, ok }

// Empty reports whether the group overrides nothing.
func (g GroupConfig) Empty() bool { return len(g.m) == 0 }

// Int is the value of Int group config name in force for the group: its override clamped to
// the broker's current bounds (the bounds may have changed since it was set; Kafka's
// GroupConfig.evaluate caps it the same way), else the broker's default.
func (g GroupConfig) Int(v *Values, name string) int64 {
	d, ok := groupDefsByName[name]
	if !ok {
		return 0
	}
	s, ok := g.m[name]
	if !ok {
		n, _ := strconv.ParseInt(v.GroupDefault(name), 10, 64)
		return n
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	lo, hi, hasLo, hasHi := groupBounds(v, d)
	if hasLo && n < lo {
		n = lo
	}
	if hasHi && n > hi {
		n = hi
	}
	return n
}

// ConsumerSessionTimeout is consumer.session.timeout.ms in force for the group.
func (g GroupConfig) ConsumerSessionTimeout(v *Values) time.Duration {
	return ms(g.Int(v, GroupConsumerSessionTimeoutMs))
}

// ConsumerHeartbeatInterval is consumer.heartbeat.interval.ms in force for the group.
func (g GroupConfig) ConsumerHeartbeatInterval(v *Values) time.Duration {
	return ms(g.Int(v, GroupConsumerHeartbeatIntervalMs))
}

// ConsumerAssignmentInterval is consumer.assignment.interval.ms in force for the group.
func (g GroupConfig) ConsumerAssignmentInterval(v *Values) time.Duration {
	return ms(g.Int(v, GroupConsumerAssignmentIntervalMs))
}

// StreamsSessionTimeout is streams.session.timeout.ms in force for the group.
func (g GroupConfig) StreamsSessionTimeout(v *Values) time.Duration {
	return ms(g.Int(v, GroupStreamsSessionTimeoutMs))
}

// StreamsHeartbeatInterval is streams.heartbeat.interval.ms in force for the group.
func (g GroupConfig) StreamsHeartbeatInterval(v *Values) time.Duration {
	return ms(g.Int(v, GroupStreamsHeartbeatIntervalMs))
}

// StreamsNumStandbyReplicas is streams.num.standby.replicas in force for the group.
func (g GroupConfig) StreamsNumStandbyReplicas(v *Values) int {
	return int(g.Int(v, GroupStreamsNumStandbyReplicas))
}

// StreamsInitialRebalanceDelay is streams.initial.rebalance.delay.ms in force for the group.
func (g GroupConfig) StreamsInitialRebalanceDelay(v *Values) time.Duration {
	return ms(g.Int(v, GroupStreamsInitialRebalanceDelay))
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// GroupConfigChange is one group's new overrides (Config.Empty() when they were all removed).
type GroupConfigChange struct {
	Group  string
	Config GroupConfig
}

// GroupConfigs is what the group coordinator reads: the durable dynamic configs of each group.
// Get is cheap (a map read) and safe for concurrent use; Subscribe's fn is called after each
// durable change, one call at a time, in commit order, outside the store's locks.
type GroupConfigs interface {
	Get(group string) (GroupConfig, bool)
	Subscribe(fn func(GroupConfigChange))
}
