package assignor

// Subtopology describes one subtopology of the configured topology.
// Its tasks are partitions 0..NumTasks-1 (NumTasks is the maximum number of
// input partitions of the subtopology's source topics). Stateful
// subtopologies (those with state changelog topics) get standby and warm-up
// tasks; stateless ones only active tasks.
type Subtopology struct {
	ID       string
	NumTasks int32
	Stateful bool
}

// TaskSet maps a subtopology ID to the sorted task partitions of it.
// In outputs, entries are never empty and partitions are ascending.
type TaskSet map[string][]int32

// MemberSpec is what the assignor knows about one member of a streams group.
type MemberSpec struct {
	// MemberID is the member's unique, non-empty id.
	MemberID string
	// ProcessID identifies the Kafka Streams client (process) the member
	// belongs to; members of one process share local state. Empty means the
	// member forms its own process.
	ProcessID string
	// InstanceID, RackID and ClientTags are accepted and not used yet.
	InstanceID string
	RackID     string
	ClientTags map[string]string
	// Active, Standby and Warmup hold the member's current target assignment,
	// the basis for stickiness: one entry per subtopology, in any order
	// (should a task be listed twice, it counts once). Tasks of unknown
	// subtopologies or outside 0..NumTasks-1 are ignored (the topology may
	// have changed). Flat lists, not maps, like TaskLags: the assignor reads
	// them in one sequential pass.
	Active, Standby, Warmup []SubtopologyTasks
	// TaskLags is optional: the lag in records of the member's local state
	// for each task it reports, in any order (negative counts as 0; should a
	// task be listed twice, its smallest lag counts). nil means the member
	// reports no lags; an empty non-nil slice that it reports lags but holds
	// no state. Reported tasks make the member a candidate for stickiness
	// (state on local disk) and decide warm-ups. A flat list (like Kafka's
	// per-member task offsets map keyed by task id), not nested maps: the
	// assignor reads it in one sequential pass.
	TaskLags []TaskLag
}

// SubtopologyTasks are tasks of one subtopology: partitions Partitions of
// subtopology Subtopology (the input form of a member's previous target).
type SubtopologyTasks struct {
	Subtopology string
	Partitions  []int32
}

// TaskLag is a member's lag (records) on one task: partition Partition of
// subtopology Subtopology.
type TaskLag struct {
	Subtopology string
	Partition   int32
	Lag         int64
}

// GroupSpec is the input of an assignment.
type GroupSpec struct {
	// Members of the group, in any order.
	Members []MemberSpec
	// Subtopologies of the configured topology, in any order; IDs unique.
	Subtopologies []Subtopology
	// NumStandbyReplicas is group.streams.num.standby.replicas (0..2 in Kafka).
	NumStandbyReplicas int
	// NumWarmupReplicas is the maximum number of warm-up tasks in the group
	// (streams.num.warmup.replicas, default 2); 0 disables warm-ups.
	NumWarmupReplicas int
	// AcceptableRecoveryLag is the lag (records) up to which a member counts
	// as caught up on a task.
	AcceptableRecoveryLag int64
}

// MemberAssignment is the target assignment of one member. Empty task sets
// may be nil.
type MemberAssignment struct {
	Active, Standby, Warmup TaskSet
}

// Assignor computes target assignments for streams groups.
type Assignor interface {
	// Name is the assignor's name as shown by StreamsGroupDescribe.
	Name() string
	// Assign computes a new target assignment (every member of spec, see
	// Assignment; Map converts it to maps). It returns an error, and no
	// assignment, for an invalid spec.
	Assign(spec *GroupSpec) (*Assignment, error)
}

// Sticky returns Kafka's "sticky" streams task assignor (see package doc).
// It is stateless and safe for concurrent use.
func Sticky() Assignor { return sticky{} }

// StickyName is the name of the sticky assignor.
const StickyName = "sticky"

type sticky struct{}

func (sticky) Name() string { return StickyName }

func (sticky) Assign(spec *GroupSpec) (*Assignment, error) {
	st, err := getState(spec)
	if err != nil {
		return nil, err
	}
	defer st.release()
	if err := st.run(); err != nil {
		return nil, err
	}
	return st.output(), nil
}
