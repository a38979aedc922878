package coordinator

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// StreamsState is a streams group's state (Kafka's StreamsGroup.StreamsGroupState).
type StreamsState int8

// The streams group states, in Kafka's order.
const (
	StreamsEmpty StreamsState = iota
	StreamsNotReady
	StreamsAssigning
	StreamsReconciling
	StreamsStable
	StreamsDead
)

// StreamsStateNames are the state names in StreamsState order, as StreamsGroupDescribe and
// ListGroups report them.
var StreamsStateNames = [...]string{"Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead"}

func (s StreamsState) String() string { return StreamsStateNames[s] }

// streamsTask identifies one task: a subtopology and a partition of it.
type streamsTask struct {
	Sub  string
	Part int32
}

// streamsTasks is a set of tasks; the value is the task's assignment epoch (the member epoch at
// which the task was given to the member; used for active tasks, 0 elsewhere).
type streamsTasks map[streamsTask]int32

func (t streamsTasks) clone() streamsTasks {
	out := make(streamsTasks, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

// sorted lists the tasks by subtopology id then partition.
func (t streamsTasks) sorted() []streamsTask {
	out := make([]streamsTask, 0, len(t))
	for k := range t {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sub != out[j].Sub {
			return out[i].Sub < out[j].Sub
		}
		return out[i].Part < out[j].Part
	})
	return out
}

// sameKeys reports whether a and b hold the same tasks (epochs ignored).
func (t streamsTasks) sameKeys(o streamsTasks) bool {
	if len(t) != len(o) {
		return false
	}
	for k := range t {
		if _, ok := o[k]; !ok {
			return false
		}
	}
	return true
}

// streamsTaskSet is one member's active, standby and warm-up tasks.
type streamsTaskSet struct {
	Active, Standby, Warmup streamsTasks
}

func newStreamsTaskSet() streamsTaskSet {
	return streamsTaskSet{Active: streamsTasks{}, Standby: streamsTasks{}, Warmup: streamsTasks{}}
}

func (a streamsTaskSet) clone() streamsTaskSet {
	return streamsTaskSet{Active: a.Active.clone(), Standby: a.Standby.clone(), Warmup: a.Warmup.clone()}
}

func (a streamsTaskSet) empty() bool {
	return len(a.Active) == 0 && len(a.Standby) == 0 && len(a.Warmup) == 0
}

func (a streamsTaskSet) equal(b streamsTaskSet) bool {
	return a.Active.sameKeys(b.Active) && a.Standby.sameKeys(b.Standby) && a.Warmup.sameKeys(b.Warmup)
}

// streamsEndpoint is a member's interactive-query endpoint.
type streamsEndpoint struct {
	Host string
	Port uint16
}

// streamsMemberMeta is a member's metadata (record StreamsGroupMemberMetadata, 19).
type streamsMemberMeta struct {
	InstanceID       *string
	RackID           *string
	ClientID         string
	ClientHost       string
	RebalanceTimeout int32 // ms
	TopologyEpoch    int32
	ProcessID        string
	UserEndpoint     *streamsEndpoint
	ClientTags       map[string]string
}

func (m *streamsMemberMeta) equal(o *streamsMemberMeta) bool {
	if m == nil || o == nil {
		return m == o
	}
	if !eqStrPtr(m.InstanceID, o.InstanceID) || !eqStrPtr(m.RackID, o.RackID) || m.ClientID != o.ClientID ||
		m.ClientHost != o.ClientHost || m.RebalanceTimeout != o.RebalanceTimeout || m.TopologyEpoch != o.TopologyEpoch ||
		m.ProcessID != o.ProcessID || len(m.ClientTags) != len(o.ClientTags) {
		return false
	}
	if (m.UserEndpoint == nil) != (o.UserEndpoint == nil) || (m.UserEndpoint != nil && *m.UserEndpoint != *o.UserEndpoint) {
		return false
	}
	for k, v := range m.ClientTags {
		if ov, ok := o.ClientTags[k]; !ok || ov != v {
			return false
		}
	}
	return true
}

func eqStrPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Streams member reconciliation states (record StreamsGroupCurrentMemberAssignment.State, as
// Kafka's MemberState).
const (
	streamsMemberStable          int8 = 0
	streamsMemberUnrevokedTasks  int8 = 1
	streamsMemberUnreleasedTasks int8 = 2
)

var streamsMemberStateNames = [...]string{"STABLE", "UNREVOKED_TASKS", "UNRELEASED_TASKS"}

// streamsCurrent is a member's current assignment (record StreamsGroupCurrentMemberAssignment, 22).
type streamsCurrent struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               int8
	Assigned            streamsTaskSet
	PendingRevocation   streamsTaskSet
}

// streamsMemberSoft is a member's in-memory-only state (Kafka keeps it in memory too).
type streamsMemberSoft struct {
	TaskOffsets    map[streamsTask]int64
	TaskEndOffsets map[streamsTask]int64
	// EndpointEpoch is the last EndpointInformationEpoch the member sent.
	EndpointEpoch int32
	// sessionKey is the member's session timer key, cached for member id sessionKeyFor.
	sessionKey, sessionKeyFor string
}

// StreamsGroup is a KIP-1071 streams group. Its durable state is exactly what its records hold
// (types 17 and 19–23, see docs/records.md); the configured topology, the shutdown request, the
// endpoint-information epoch and task offsets are in memory only, as in Kafka.
type StreamsGroup struct {
	id string

	// Record 17 (StreamsGroupMetadata).
	hasMetadata             bool
	groupEpoch              int32
	metadataHash            int64
	validatedTopologyEpoch  int32
	lastAssignmentConfigs   map[string]string
	storedTopologyEpoch     int32
	lastFailedTopologyEpoch int32

	// Record 23 (StreamsGroupTopology); nil when none.
	topology *StreamsTopology

	// Record 20 (StreamsGroupTargetAssignmentMetadata).
	hasTargetMetadata   bool
	targetEpoch         int32
	assignmentTimestamp int64

	// Records 19, 21, 22 by member id.
	meta    map[string]*streamsMemberMeta
	targets map[string]streamsTaskSet
	current map[string]*streamsCurrent

	// holders indexes current assignments (assigned and pending revocation): task → member →
	// bit mask (1 active, 2 standby, 4 warm-up). Derived from records 22 on replay.
	holders map[streamsTask]map[string]uint8

	// Soft state.
	soft              map[string]*streamsMemberSoft
	configured        *configuredTopology
	shutdownRequested bool
	endpointEpoch     int32
	delayDeadline     time.Time
	hashCache         map[string]streamsTopicHash
	hashMemo          streamsHashMemo
	// topoEpochs counts members by their topology epoch (derived from records 19 on replay):
	// the oldest says when a rolling topology upgrade is complete (multi-epoch KIP-1331).
	topoEpochs map[int32]int
}

// streamsInitialGroupEpoch is the group epoch of a streams group before its first
// StreamsGroupMetadata record (Kafka 4.2+: the first join writes epoch 2), so the empty target
// of the initial rebalance delay (epoch 1, delayedTargetEpoch) is always below the group epoch.
const streamsInitialGroupEpoch int32 = 1

func newStreamsGroup(id string) *StreamsGroup {
	return &StreamsGroup{
		id:                      id,
		groupEpoch:              streamsInitialGroupEpoch,
		validatedTopologyEpoch:  -1,
		storedTopologyEpoch:     -1,
		lastFailedTopologyEpoch: -1,
		meta:                    map[string]*streamsMemberMeta{},
		targets:                 map[string]streamsTaskSet{},
		current:                 map[string]*streamsCurrent{},
		holders:                 map[streamsTask]map[string]uint8{},
		soft:                    map[string]*streamsMemberSoft{},
		hashCache:               map[string]streamsTopicHash{},
	}
}

// ID implements Group.
func (g *StreamsGroup) ID() string { return g.id }

// Type implements Group.
func (g *StreamsGroup) Type() GroupType { return TypeStreams }

// ProtocolType implements Group ("streams").
func (g *StreamsGroup) ProtocolType() string { return "streams" }

// IsEmpty implements Group: a streams group without members.
func (g *StreamsGroup) IsEmpty() bool { return len(g.meta) == 0 }

// GroupEpoch is the group epoch.
func (g *StreamsGroup) GroupEpoch() int32 { return g.groupEpoch }

// TargetAssignmentEpoch is the epoch of the current target assignment.
func (g *StreamsGroup) TargetAssignmentEpoch() int32 { return g.targetEpoch }

// MetadataHash is the KIP-1101 hash of the topics the topology requires, as last stored.
func (g *StreamsGroup) MetadataHash() int64 { return g.metadataHash }

// ValidatedTopologyEpoch is the topology epoch whose configuration was found ready, or -1.
func (g *StreamsGroup) ValidatedTopologyEpoch() int32 { return g.validatedTopologyEpoch }

// StoredTopologyEpoch is the topology epoch whose KIP-1331 description is stored, or -1.
func (g *StreamsGroup) StoredTopologyEpoch() int32 { return g.storedTopologyEpoch }

// LastFailedTopologyEpoch is the topology epoch whose KIP-1331 description push failed
// permanently, or -1.
func (g *StreamsGroup) LastFailedTopologyEpoch() int32 { return g.lastFailedTopologyEpoch }

// Topology is the group's topology (nil when none); callers must not modify it.
func (g *StreamsGroup) Topology() *StreamsTopology { return g.topology }

// TopologyEpoch is the topology's epoch, or -1 when the group has none.
func (g *StreamsGroup) TopologyEpoch() int32 {
	if g.topology == nil {
		return -1
	}
	return g.topology.Epoch
}

// NumMembers is the member count.
func (g *StreamsGroup) NumMembers() int { return len(g.meta) }

// MemberIDs lists member ids, sorted.
func (g *StreamsGroup) MemberIDs() []string { return sortedKeys(g.meta) }

// MemberEpoch returns a member's epoch and whether the member exists.
func (g *StreamsGroup) MemberEpoch(id string) (int32, bool) {
	if _, ok := g.meta[id]; !ok {
		return 0, false
	}
	if c := g.current[id]; c != nil {
		return c.MemberEpoch, true
	}
	return 0, true
}

// ShutdownRequested reports whether a member asked the application to shut down.
func (g *StreamsGroup) ShutdownRequested() bool { return g.shutdownRequested }

// EndpointInformationEpoch is the group-wide (in-memory) endpoint-information epoch.
func (g *StreamsGroup) EndpointInformationEpoch() int32 { return g.endpointEpoch }

// EndpointsConverged reports whether every member last sent the group's endpoint-information
// epoch (KIP-1071 heartbeat step 7).
func (g *StreamsGroup) EndpointsConverged() bool {
	for id := range g.meta {
		if s := g.soft[id]; s == nil || s.EndpointEpoch != g.endpointEpoch {
			return false
		}
	}
	return true
}

func (g *StreamsGroup) memberSoft(id string) *streamsMemberSoft {
	s := g.soft[id]
	if s == nil {
		s = &streamsMemberSoft{EndpointEpoch: -1}
		g.soft[id] = s
	}
	return s
}

// currentOf returns a member's current assignment (a zero one when none is recorded).
func (g *StreamsGroup) currentOf(id string) *streamsCurrent {
	if c := g.current[id]; c != nil {
		return c
	}
	return &streamsCurrent{Assigned: newStreamsTaskSet(), PendingRevocation: newStreamsTaskSet()}
}

// State computes the group state (StreamsGroup.maybeUpdateGroupState).
func (g *StreamsGroup) State() StreamsState {
	switch {
	case len(g.meta) == 0:
		return StreamsEmpty
	case g.topology == nil || g.validatedTopologyEpoch != g.topology.Epoch:
		return StreamsNotReady
	case g.groupEpoch > g.targetEpoch:
		return StreamsAssigning
	}
	for id := range g.meta {
		c := g.current[id]
		if c == nil || c.MemberEpoch != g.targetEpoch || c.State != streamsMemberStable {
			return StreamsReconciling
		}
	}
	return StreamsStable
}

// StateName implements Group.
func (g *StreamsGroup) StateName() string { return g.State().String() }

// IsSubscribedToTopic implements Group: an Empty group subscribes to nothing; otherwise the
// source and repartition source topics of the topology (Kafka's StreamsGroup.isSubscribedToTopic).
func (g *StreamsGroup) IsSubscribedToTopic(topic string) bool {
	if len(g.meta) == 0 || g.topology == nil {
		return false
	}
	for _, s := range g.topology.Subtopologies {
		for _, t := range s.SourceTopics {
			if t == topic {
				return true
			}
		}
		for _, t := range s.RepartitionSourceTopics {
			if t.Name == topic {
				return true
			}
		}
	}
	return false
}

// ValidateOffsetCommit implements Group (Kafka's StreamsGroup.validateOffsetCommit, 4.3+ with
// KIP-1251): an anonymous commit (epoch < 0) is accepted only by a group without members, and a
// transactional one without identity always; an unknown member gets UNKNOWN_MEMBER_ID; a
// non-transactional commit below v9 gets UNSUPPORTED_VERSION; an epoch above the member's gets
// STALE_MEMBER_EPOCH. An epoch below the member's is checked per partition: the partition's
// topic must be a source or repartition-source topic of a subtopology whose active task for that
// partition the member holds, assigned with an assignment epoch ≤ the received epoch or pending
// revocation (record 22 keeps no epochs for those); other partitions get STALE_MEMBER_EPOCH (returned as *PartitionErrors). A
// commit with an older epoch and no partitions is stale as a whole.
func (g *StreamsGroup) ValidateOffsetCommit(_ *State, c *CommitIdentity) error {
	if c.GenerationOrEpoch < 0 && len(g.meta) == 0 {
		return nil
	}
	if c.Transactional && c.GenerationOrEpoch < 0 && c.MemberID == "" && c.InstanceID == nil {
		return nil
	}
	if _, ok := g.meta[c.MemberID]; !ok {
		return kerr.UnknownMemberID
	}
	if !c.Transactional && c.APIVersion < 9 {
		return kerr.UnsupportedVersion
	}
	epoch, _ := g.MemberEpoch(c.MemberID)
	switch {
	case c.GenerationOrEpoch == epoch:
		return nil
	case c.GenerationOrEpoch > epoch || len(c.Partitions) == 0:
		return kerr.StaleMemberEpoch
	}
	cur := g.currentOf(c.MemberID)
	var perr PartitionErrors
	for _, topic := range sortedKeys(c.Partitions) {
		subs := g.subtopologiesReading(topic)
		for _, p := range c.Partitions[topic] {
			ok := false
			for _, sub := range subs {
				t := streamsTask{sub, p}
				if ep, has := cur.Assigned.Active[t]; has && ep <= c.GenerationOrEpoch {
					ok = true
				} else if _, has := cur.PendingRevocation.Active[t]; has {
					// Record 22 stores no epochs for tasks pending revocation; such a task was
					// assigned at an earlier member epoch and is accepted.
					ok = true
				}
			}
			if !ok {
				perr.add(topic, p, kerr.StaleMemberEpoch)
			}
		}
	}
	return perr.orNil()
}

// subtopologiesReading lists the subtopologies that have topic as a source or repartition-source
// topic.
func (g *StreamsGroup) subtopologiesReading(topic string) []string {
	if g.topology == nil {
		return nil
	}
	var out []string
	for _, s := range g.topology.Subtopologies {
		found := false
		for _, t := range s.SourceTopics {
			found = found || t == topic
		}
		for _, t := range s.RepartitionSourceTopics {
			found = found || t.Name == topic
		}
		if found {
			out = append(out, s.ID)
		}
	}
	return out
}

// ValidateOffsetFetch implements Group: the member must exist (UNKNOWN_MEMBER_ID) and send its
// current epoch (STALE_MEMBER_EPOCH).
func (g *StreamsGroup) ValidateOffsetFetch(_ *State, memberID string, memberEpoch int32) error {
	epoch, ok := g.MemberEpoch(memberID)
	if !ok {
		return kerr.UnknownMemberID
	}
	if memberEpoch != epoch {
		return kerr.StaleMemberEpoch
	}
	return nil
}

// ValidateOffsetDelete implements Group: streams groups allow offset deletion in any state
// (GROUP_SUBSCRIBED_TO_TOPIC is decided per topic).
func (g *StreamsGroup) ValidateOffsetDelete() error { return nil }

// ValidateDeleteGroup implements Group: only an Empty group may be deleted.
func (g *StreamsGroup) ValidateDeleteGroup() error {
	if len(g.meta) != 0 {
		return kerr.NonEmptyGroup
	}
	return nil
}

// OffsetExpiryBase implements Group: streams offsets expire from their commit time.
func (g *StreamsGroup) OffsetExpiryBase(commit time.Time) (time.Time, bool) { return commit, true }

// WriteTombstones implements Group in Kafka's order: every current assignment, every target
// assignment, the target-assignment metadata, every member metadata, the group metadata, and the
// topology.
func (g *StreamsGroup) WriteTombstones(st *State) {
	id := g.id
	for _, m := range sortedKeys(g.current) {
		st.Write(Record{Key: groupKey(RecStreamsGroupCurrentMember, id, m)})
	}
	for _, m := range sortedKeys(g.targets) {
		st.Write(Record{Key: groupKey(RecStreamsGroupTargetMember, id, m)})
	}
	st.Write(Record{Key: groupKey(RecStreamsGroupTargetMetadata, id)})
	for _, m := range sortedKeys(g.meta) {
		st.Write(Record{Key: groupKey(RecStreamsGroupMemberMetadata, id, m)})
	}
	st.Write(Record{Key: groupKey(RecStreamsGroupMetadata, id)})
	st.Write(Record{Key: groupKey(RecStreamsGroupTopology, id)})
	st.Timers.Cancel(streamsDelayKey(id))
	for _, m := range sortedKeys(g.meta) {
		st.Timers.Cancel(streamsSessionKey(id, m))
		st.Timers.Cancel(streamsRebalanceKey(id, m))
	}
}

// streamsDurable is the deterministic dump of a streams group's durable state.
type streamsDurable struct {
	HasMetadata             bool
	GroupEpoch              int32
	MetadataHash            int64
	ValidatedTopologyEpoch  int32
	LastAssignmentConfigs   string
	StoredTopologyEpoch     int32
	LastFailedTopologyEpoch int32
	Topology                string
	HasTargetMetadata       bool
	TargetEpoch             int32
	AssignmentTimestamp     int64
	Members                 []string
	Targets                 []string
	Current                 []string
}

// Durable implements Group: every durable field, as the encoded record values (deterministic).
func (g *StreamsGroup) Durable() any {
	d := streamsDurable{
		HasMetadata: g.hasMetadata, GroupEpoch: g.groupEpoch, MetadataHash: g.metadataHash,
		ValidatedTopologyEpoch: g.validatedTopologyEpoch, StoredTopologyEpoch: g.storedTopologyEpoch,
		LastFailedTopologyEpoch: g.lastFailedTopologyEpoch, HasTargetMetadata: g.hasTargetMetadata,
		TargetEpoch: g.targetEpoch, AssignmentTimestamp: g.assignmentTimestamp,
	}
	d.LastAssignmentConfigs = string(encodeStreamsConfigs(g.lastAssignmentConfigs))
	if g.topology != nil {
		d.Topology = string(encodeStreamsTopology(g.topology))
	}
	for _, id := range sortedKeys(g.meta) {
		d.Members = append(d.Members, id+"="+string(encodeStreamsMemberMeta(g.meta[id])))
	}
	for _, id := range sortedKeys(g.targets) {
		d.Targets = append(d.Targets, id+"="+string(encodeStreamsTarget(g.targets[id])))
	}
	for _, id := range sortedKeys(g.current) {
		d.Current = append(d.Current, id+"="+string(encodeStreamsCurrent(g.current[id])))
	}
	return d
}

// streamsGroups lists the shard's streams groups sorted by id.
func (st *State) streamsGroups() []*StreamsGroup {
	var out []*StreamsGroup
	for _, id := range sortedKeys(st.Groups) {
		if g, ok := st.Groups[id].(*StreamsGroup); ok {
			out = append(out, g)
		}
	}
	return out
}

// StreamsGroupCountByState counts the shard's streams groups per state name (for the gauge
// streams-group-count{state=...}); every state name is present.
func StreamsGroupCountByState(st *State) map[string]int {
	out := make(map[string]int, len(StreamsStateNames))
	for _, n := range StreamsStateNames {
		out[n] = 0
	}
	for _, g := range st.streamsGroups() {
		out[g.StateName()]++
	}
	return out
}
