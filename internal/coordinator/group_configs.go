package coordinator

import "time"

// Dynamic group configs (KIP-848's GroupConfig: the GROUP resource of IncrementalAlterConfigs).
// The core never reads the config store: the driver hands every shard an immutable snapshot of
// all groups' overrides (GroupConfigs, State.SetGroupConfigs) before an operation, as it hands
// it the metadata image, and a group's operations read the broker's group.* configuration with
// that group's overrides applied (State.consumerConfig, State.streamsConfig). A change therefore
// reaches a live group with its next heartbeat: the session timer is re-armed with the new
// session timeout, the response carries the new heartbeat interval, and a streams group whose
// assignment configs (num.standby.replicas) changed bumps its epoch (Kafka's
// GroupMetadataManager reads GroupConfigManager the same way, per heartbeat).

// The group config keys the coordinator applies (Kafka's GroupConfig names).
const (
	GroupConsumerSessionTimeoutMs     = "consumer.session.timeout.ms"
	GroupConsumerHeartbeatIntervalMs  = "consumer.heartbeat.interval.ms"
	GroupConsumerAssignmentIntervalMs = "consumer.assignment.interval.ms"
	GroupStreamsSessionTimeoutMs      = "streams.session.timeout.ms"
	GroupStreamsHeartbeatIntervalMs   = "streams.heartbeat.interval.ms"
	GroupStreamsNumStandbyReplicas    = "streams.num.standby.replicas"
	GroupStreamsInitialRebalanceDelay = "streams.initial.rebalance.delay.ms"
)

// GroupConfigValues reads one group's dynamic configs (internal/config's GroupConfig with the
// broker's bounds applied): ok is false when the group does not override name.
type GroupConfigValues interface {
	GroupInt(name string) (v int64, ok bool)
	GroupString(name string) (v string, ok bool)
}

// override is one optional config value.
type override[T any] struct {
	v  T
	ok bool
}

func (o override[T]) or(def T) T {
	if o.ok {
		return o.v
	}
	return def
}

// GroupOverrides is one group's overrides of the broker's group.* configuration; a field that
// is not set leaves the broker's value in force. Immutable once built.
type GroupOverrides struct {
	consumerSessionTimeout       override[time.Duration]
	consumerHeartbeatInterval    override[time.Duration]
	consumerAssignmentInterval   override[time.Duration]
	streamsSessionTimeout        override[time.Duration]
	streamsHeartbeatInterval     override[time.Duration]
	streamsNumStandbyReplicas    override[int]
	streamsInitialRebalanceDelay override[time.Duration]
	share                        shareOverrides
}

// GroupOverridesFrom reads a group's overrides.
func GroupOverridesFrom(v GroupConfigValues) GroupOverrides {
	dur := func(name string) override[time.Duration] {
		n, ok := v.GroupInt(name)
		return override[time.Duration]{time.Duration(n) * time.Millisecond, ok}
	}
	standby, ok := v.GroupInt(GroupStreamsNumStandbyReplicas)
	return GroupOverrides{
		consumerSessionTimeout:       dur(GroupConsumerSessionTimeoutMs),
		consumerHeartbeatInterval:    dur(GroupConsumerHeartbeatIntervalMs),
		consumerAssignmentInterval:   dur(GroupConsumerAssignmentIntervalMs),
		streamsSessionTimeout:        dur(GroupStreamsSessionTimeoutMs),
		streamsHeartbeatInterval:     dur(GroupStreamsHeartbeatIntervalMs),
		streamsNumStandbyReplicas:    override[int]{int(standby), ok},
		streamsInitialRebalanceDelay: dur(GroupStreamsInitialRebalanceDelay),
		share:                        shareOverridesFrom(v),
	}
}

// applyConsumer returns c with the overrides applied.
func (o *GroupOverrides) applyConsumer(c ConsumerConfig) ConsumerConfig {
	c.SessionTimeout = o.consumerSessionTimeout.or(c.SessionTimeout)
	c.HeartbeatInterval = o.consumerHeartbeatInterval.or(c.HeartbeatInterval)
	c.AssignmentInterval = o.consumerAssignmentInterval.or(c.AssignmentInterval)
	return c
}

// applyStreams returns c with the overrides applied.
func (o *GroupOverrides) applyStreams(c StreamsConfig) StreamsConfig {
	c.SessionTimeout = o.streamsSessionTimeout.or(c.SessionTimeout)
	c.HeartbeatInterval = o.streamsHeartbeatInterval.or(c.HeartbeatInterval)
	c.NumStandbyReplicas = o.streamsNumStandbyReplicas.or(c.NumStandbyReplicas)
	c.InitialRebalanceDelay = o.streamsInitialRebalanceDelay.or(c.InitialRebalanceDelay)
	return c
}

// GroupConfigs is an immutable snapshot of the dynamic configs of every group that has any,
// versioned so a driver hands a shard a new one only when it changed.
type GroupConfigs struct {
	version int64
	groups  map[string]GroupOverrides
}

// NewGroupConfigs builds a snapshot; it takes ownership of groups (the caller must not change
// it afterwards).
func NewGroupConfigs(version int64, groups map[string]GroupOverrides) *GroupConfigs {
	return &GroupConfigs{version: version, groups: groups}
}

// Version is the snapshot's version.
func (c *GroupConfigs) Version() int64 {
	if c == nil {
		return 0
	}
	return c.version
}

// get returns a group's overrides (nil: none).
func (c *GroupConfigs) get(group string) *GroupOverrides {
	if c == nil {
		return nil
	}
	if o, ok := c.groups[group]; ok {
		return &o
	}
	return nil
}

// SetGroupConfigs hands the shard a new snapshot of the groups' dynamic configs; the groups'
// next operations use it.
func (st *State) SetGroupConfigs(c *GroupConfigs) { st.GroupConfigs = c }

// consumerConfig is the consumer group configuration in force for group.
func (st *State) consumerConfig(group string) ConsumerConfig {
	if o := st.GroupConfigs.get(group); o != nil {
		return o.applyConsumer(st.Cfg.Consumer)
	}
	return st.Cfg.Consumer
}

// streamsConfig is the streams group configuration in force for group.
func (st *State) streamsConfig(group string) StreamsConfig {
	if o := st.GroupConfigs.get(group); o != nil {
		return o.applyStreams(st.Cfg.Streams)
	}
	return st.Cfg.Streams
}
