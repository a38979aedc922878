package coordinator

import (
	"strings"
	"time"
)

// ShareConfig configures KIP-932 share groups (Kafka's group.share.* keys, GroupCoordinatorConfig
// and ShareGroupConfig).
type ShareConfig struct {
	Enabled           bool          // group.share.enable
	SessionTimeout    time.Duration // group.share.session.timeout.ms
	HeartbeatInterval time.Duration // group.share.heartbeat.interval.ms
	MaxSize           int           // group.share.max.size
	// RecordLockDuration is how long a member holds the records it acquired
	// (group.share.record.lock.duration.ms).
	RecordLockDuration time.Duration
	// DeliveryCountLimit is how often a record is delivered before it is archived
	// (group.share.delivery.count.limit).
	DeliveryCountLimit int
	// PartitionMaxRecordLocks bounds a share-partition's in-flight window
	// (group.share.partition.max.record.locks).
	PartitionMaxRecordLocks int
	// MaxShareSessions bounds the broker's share sessions (group.share.max.share.sessions); the
	// adapters keep the sessions and enforce it.
	MaxShareSessions int
	// AutoOffsetReset is where a share-partition starts when the group does not say
	// (share.auto.offset.reset has no broker key: "latest").
	AutoOffsetReset string
	// IsolationLevel is the default share.isolation.level ("read_uncommitted").
	IsolationLevel string
}

// The share group config keys the coordinator applies (Kafka's GroupConfig names).
const (
	GroupShareSessionTimeoutMs        = "share.session.timeout.ms"
	GroupShareHeartbeatIntervalMs     = "share.heartbeat.interval.ms"
	GroupShareRecordLockDurationMs    = "share.record.lock.duration.ms"
	GroupShareDeliveryCountLimit      = "share.delivery.count.limit"
	GroupSharePartitionMaxRecordLocks = "share.partition.max.record.locks"
	GroupShareAutoOffsetReset         = "share.auto.offset.reset"
	GroupShareIsolationLevel          = "share.isolation.level"
)

func shareConfigFrom(v ConfigValues) ShareConfig {
	return ShareConfig{
		Enabled:                 strings.EqualFold(v.String("group.share.enable"), "true"),
		SessionTimeout:          v.Ms("group.share.session.timeout.ms"),
		HeartbeatInterval:       v.Ms("group.share.heartbeat.interval.ms"),
		MaxSize:                 int(v.Int("group.share.max.size")),
		RecordLockDuration:      v.Ms("group.share.record.lock.duration.ms"),
		DeliveryCountLimit:      int(v.Int("group.share.delivery.count.limit")),
		PartitionMaxRecordLocks: int(v.Int("group.share.partition.max.record.locks")),
		MaxShareSessions:        int(v.Int("group.share.max.share.sessions")),
		AutoOffsetReset:         "latest",
		IsolationLevel:          "read_uncommitted",
	}
}

// shareOverrides are one group's share.* overrides.
type shareOverrides struct {
	sessionTimeout     override[time.Duration]
	heartbeatInterval  override[time.Duration]
	recordLockDuration override[time.Duration]
	deliveryCountLimit override[int]
	maxRecordLocks     override[int]
	autoOffsetReset    override[string]
	isolationLevel     override[string]
}

func shareOverridesFrom(v GroupConfigValues) shareOverrides {
	dur := func(name string) override[time.Duration] {
		n, ok := v.GroupInt(name)
		return override[time.Duration]{time.Duration(n) * time.Millisecond, ok}
	}
	num := func(name string) override[int] {
		n, ok := v.GroupInt(name)
		return override[int]{int(n), ok}
	}
	str := func(name string) override[string] {
		s, ok := v.GroupString(name)
		return override[string]{strings.ToLower(strings.TrimSpace(s)), ok}
	}
	return shareOverrides{
		sessionTimeout:     dur(GroupShareSessionTimeoutMs),
		heartbeatInterval:  dur(GroupShareHeartbeatIntervalMs),
		recordLockDuration: dur(GroupShareRecordLockDurationMs),
		deliveryCountLimit: num(GroupShareDeliveryCountLimit),
		maxRecordLocks:     num(GroupSharePartitionMaxRecordLocks),
		autoOffsetReset:    str(GroupShareAutoOffsetReset),
		isolationLevel:     str(GroupShareIsolationLevel),
	}
}

func (o *shareOverrides) apply(c ShareConfig) ShareConfig {
	c.SessionTimeout = o.sessionTimeout.or(c.SessionTimeout)
	c.HeartbeatInterval = o.heartbeatInterval.or(c.HeartbeatInterval)
	c.RecordLockDuration = o.recordLockDuration.or(c.RecordLockDuration)
	c.DeliveryCountLimit = o.deliveryCountLimit.or(c.DeliveryCountLimit)
	c.PartitionMaxRecordLocks = o.maxRecordLocks.or(c.PartitionMaxRecordLocks)
	c.AutoOffsetReset = o.autoOffsetReset.or(c.AutoOffsetReset)
	c.IsolationLevel = o.isolationLevel.or(c.IsolationLevel)
	return c
}

// shareConfig is the share group configuration in force for group: the broker's group.share.*
// keys with the group's share.* overrides applied (Kafka's GroupConfigManager, read per
// operation, so a change applies from the group's next heartbeat, fetch or acknowledgement).
func (st *State) shareConfig(group string) ShareConfig {
	if o := st.GroupConfigs.get(group); o != nil {
		return o.share.apply(st.Cfg.Share)
	}
	return st.Cfg.Share
}
