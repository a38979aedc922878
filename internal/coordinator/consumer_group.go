package coordinator

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ConsumerMemberState is a KIP-848 member's reconciliation state (Kafka's MemberState).
type ConsumerMemberState int8

// The member states; the values are the ones stored in ConsumerGroupCurrentMemberAssignment.
const (
	// MemberStable: the member owns exactly its target assignment at the target epoch.
	MemberStable ConsumerMemberState = 0
	// MemberUnrevokedPartitions: the member must revoke partitions before it may progress.
	MemberUnrevokedPartitions ConsumerMemberState = 1
	// MemberUnreleasedPartitions: the member waits for partitions other members still own.
	MemberUnreleasedPartitions ConsumerMemberState = 2
)

func (s ConsumerMemberState) String() string {
	switch s {
	case MemberStable:
		return "STABLE"
	case MemberUnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case MemberUnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

// Consumer group states as Kafka names them (ListGroups, describe, gauges).
const (
	ConsumerStateEmpty       = "Empty"
	ConsumerStateAssigning   = "Assigning"
	ConsumerStateReconciling = "Reconciling"
	ConsumerStateStable      = "Stable"
	ConsumerStateDead        = "Dead"
)

// ConsumerGroupStates lists every consumer group state (gauge consumer-group-count{state}).
var ConsumerGroupStates = []string{ConsumerStateEmpty, ConsumerStateAssigning, ConsumerStateReconciling, ConsumerStateStable, ConsumerStateDead}

// Member epochs with a meaning (KIP-848).
const (
	leaveGroupMemberEpoch       int32 = -1
	leaveGroupStaticMemberEpoch int32 = -2
)

// topicPartitions is an assignment: topic id → sorted, distinct partitions. Topics without
// partitions are absent.
type topicPartitions map[[16]byte][]int32

// consumerMember is the ConsumerGroupMemberMetadata part of a member (record type 5).
type consumerMember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	subscribedNames  []string // sorted, distinct; nil = none
	subscribedRegex  string   // "" = none
	serverAssignor   string   // "" = none
	rebalanceTimeout int32    // ms
	// classic is set for a member using the classic protocol (JoinGroup/SyncGroup/Heartbeat)
	// inside a consumer group (Kafka's ClassicMemberMetadata).
	classic *cgClassicMeta
	// In memory only: the session timer key, cached for the member id sessionKeyFor.
	sessionKey, sessionKeyFor string
}

// cgClassicMeta is a classic-protocol member's JoinGroup data kept in its member metadata.
type cgClassicMeta struct {
	sessionTimeout int32 // ms
	protocols      []classicProtocol
}

// consumerCurrent is the ConsumerGroupCurrentMemberAssignment part of a member (record type 8).
type consumerCurrent struct {
	epoch     int32
	prevEpoch int32
	state     ConsumerMemberState
	assigned  topicPartitions
	pending   topicPartitions // partitions pending revocation
	// epochs are the assignment epochs of the assigned partitions and those pending revocation
	// (the member epoch at which each was given; KIP-1251), stored from record value version 1;
	// a partition without an entry has an unknown assignment epoch.
	epochs assignmentEpochs
}

// consumerRegex is a resolved subscription regex (record type 16).
type consumerRegex struct {
	topics    []string // sorted
	version   int64
	timestamp int64 // ms, resolution time
}

// ConsumerGroup is a KIP-848 consumer group. Its durable state is exactly the records it
// replays: group metadata (epoch, KIP-1101 metadata hash), member metadata, target assignment
// metadata and per-member target, per-member current assignment, resolved regexes. Each part is
// replayed independently of the others, so records of one group may load in any order.
type ConsumerGroup struct {
	id string

	hasMetadata     bool
	epoch           int32
	metadataHash    int64
	hasTargetMeta   bool
	assignmentEpoch int32

	members  map[string]*consumerMember
	static   map[string]string // instance id → member id
	currents map[string]*consumerCurrent
	targets  map[string]topicPartitions
	regexes  map[string]*consumerRegex
	// owners is the partition → owning member index (assigned or pending revocation), derived
	// from currents; a partition is given to a new owner only once it is absent here.
	owners map[[16]byte]*partitionOwners

	// In memory only: a metadata refresh (KIP-1101 hash, regex resolution) is due at the next
	// heartbeat. True after load and after topic changes.
	refresh bool
	// In memory only, derived from members: how many members subscribe to each topic name and
	// use each regex, so the group's subscribed topics cost O(topics), not O(members).
	nameRefs  map[string]int
	regexRefs map[string]int
	// In memory only: when the last target assignment was computed (zero: never since load),
	// for group.consumer.assignment.interval.ms.
	lastAssignment time.Time
	// In memory only: KIP-1101 topic hashes by topic name, valid while id, partition count and
	// rack are unchanged.
	topicHashes map[string]cgTopicHash
	// subsVersion counts changes of the set of subscribed topic names, subscribed regexes and
	// resolved regexes (refMember transitions, regex records); hashVersion is subsVersion when
	// metadataHash was last computed (hashComputed: in this process). A heartbeat that leaves
	// them equal, with no topic refresh pending, reuses metadataHash instead of recomputing the
	// KIP-1101 hash over every subscribed topic (O(topics log topics) per join otherwise).
	subsVersion uint64
	// lastNames is the subscribed-names slice of the latest member replayed: a member with an
	// equal list shares it (sameNames), so a homogeneous group holds one list, not one per member.
	lastNames    []string
	hashVersion  uint64
	hashComputed bool
	// pendingCauses are rebalance causes noted for the next epoch bump (a protocol migration);
	// in memory only.
	pendingCauses []RebalanceCause
}

// cgTopicHash is a cached KIP-1101 topic hash and the inputs it was computed from.
type cgTopicHash struct {
	id    [16]byte
	parts int32
	rack  string
	hash  int64
}

// newConsumerGroup returns an empty group. Its maps are allocated on first write (a nil map
// reads as empty), so an empty group costs its struct only.
func newConsumerGroup(id string) *ConsumerGroup {
	return &ConsumerGroup{id: id, refresh: true}
}

// initMap allocates *m if it is nil, for a map written for the first time.
func initMap[K comparable, V any](m *map[K]V) map[K]V {
	if *m == nil {
		*m = map[K]V{}
	}
	return *m
}

// ID implements Group.
func (g *ConsumerGroup) ID() string { return g.id }

// Type implements Group.
func (g *ConsumerGroup) Type() GroupType { return TypeConsumer }

// ProtocolType implements Group: always "consumer".
func (g *ConsumerGroup) ProtocolType() string { return "consumer" }

// GroupEpoch is the group epoch.
func (g *ConsumerGroup) GroupEpoch() int32 { return g.epoch }

// AssignmentEpoch is the target assignment epoch.
func (g *ConsumerGroup) AssignmentEpoch() int32 { return g.assignmentEpoch }

// MetadataHash is the stored KIP-1101 metadata hash (0 = none stored).
func (g *ConsumerGroup) MetadataHash() int64 { return g.metadataHash }

// NumMembers is the member count (static members that left temporarily included).
func (g *ConsumerGroup) NumMembers() int { return len(g.members) }

// MemberIDs lists the member ids, sorted.
func (g *ConsumerGroup) MemberIDs() []string { return sortedKeys(g.members) }

// MemberEpoch returns a member's epoch and state; ok=false when it is not a member.
func (g *ConsumerGroup) MemberEpoch(memberID string) (epoch int32, state ConsumerMemberState, ok bool) {
	if _, ok := g.members[memberID]; !ok {
		return 0, 0, false
	}
	c := g.current(memberID)
	return c.epoch, c.state, true
}

// MemberAssignment returns a member's assigned partitions and partitions pending revocation
// (copies).
func (g *ConsumerGroup) MemberAssignment(memberID string) (assigned, pending map[[16]byte][]int32) {
	c := g.current(memberID)
	return cloneTP(c.assigned), cloneTP(c.pending)
}

// TargetAssignment returns a member's target assignment (copy).
func (g *ConsumerGroup) TargetAssignment(memberID string) map[[16]byte][]int32 {
	return cloneTP(g.targets[memberID])
}

var zeroCurrent = &consumerCurrent{}

// current returns a member's current assignment (epoch 0, nothing assigned when none stored).
func (g *ConsumerGroup) current(id string) *consumerCurrent {
	if c, ok := g.currents[id]; ok {
		return c
	}
	return zeroCurrent
}

// IsEmpty implements Group.
func (g *ConsumerGroup) IsEmpty() bool { return len(g.members) == 0 }

// StateName implements Group (Kafka's ConsumerGroup.maybeUpdateGroupState): Empty without
// members, Assigning while the group epoch is ahead of the target assignment epoch, Reconciling
// while a member is not stable at the target epoch, else Stable.
func (g *ConsumerGroup) StateName() string {
	switch {
	case len(g.members) == 0:
		return ConsumerStateEmpty
	case g.epoch > g.assignmentEpoch:
		return ConsumerStateAssigning
	}
	for id := range g.members {
		c := g.current(id)
		if c.state != MemberStable || c.epoch != g.assignmentEpoch {
			return ConsumerStateReconciling
		}
	}
	return ConsumerStateStable
}

// subscribedTopics is the union of the members' subscribed names and the topics resolved from
// their regexes (Kafka's subscribedTopicNames). O(topics + regexes), from the reference counts.
func (g *ConsumerGroup) subscribedTopics() map[string]bool {
	out := make(map[string]bool, len(g.nameRefs))
	for n := range g.nameRefs {
		out[n] = true
	}
	for re := range g.regexRefs {
		if r := g.regexes[re]; r != nil {
			for _, t := range r.topics {
				out[t] = true
			}
		}
	}
	return out
}

// refMember adds (delta=1) or removes (delta=-1) a member's subscription from the reference
// counts.
func (g *ConsumerGroup) refMember(m *consumerMember, delta int) {
	for _, n := range m.subscribedNames {
		c := initMap(&g.nameRefs)[n] + delta
		if c <= 0 {
			delete(g.nameRefs, n)
		} else {
			g.nameRefs[n] = c
		}
		if (c <= 0) != (c-delta <= 0) {
			g.subsVersion++ // a name entered or left the subscribed set
		}
	}
	if re := m.subscribedRegex; re != "" {
		c := initMap(&g.regexRefs)[re] + delta
		if c <= 0 {
			delete(g.regexRefs, re)
		} else {
			g.regexRefs[re] = c
		}
		if (c <= 0) != (c-delta <= 0) {
			g.subsVersion++
		}
	}
}

// memberTopics is the set of topic names one member subscribes to (names and resolved regex).
func (g *ConsumerGroup) memberTopics(m *consumerMember) []string {
	out := append([]string(nil), m.subscribedNames...)
	if m.subscribedRegex != "" {
		if r := g.regexes[m.subscribedRegex]; r != nil {
			out = append(out, r.topics...)
		}
	}
	sort.Strings(out)
	return cgDedupSorted(out)
}

// IsSubscribedToTopic implements Group: topic ∈ union of subscribed names and regex-resolved
// topics of the current members (Kafka's ConsumerGroup.isSubscribedToTopic).
func (g *ConsumerGroup) IsSubscribedToTopic(topic string) bool {
	if g.nameRefs[topic] > 0 {
		return true
	}
	for re := range g.regexRefs {
		if r := g.regexes[re]; r != nil {
			i := sort.SearchStrings(r.topics, topic)
			if i < len(r.topics) && r.topics[i] == topic {
				return true
			}
		}
	}
	return false
}

// ValidateOffsetCommit implements Group (Kafka's ConsumerGroup.validateOffsetCommit, 4.3+ with
// KIP-1251): no members and a negative epoch → accepted (admin commit); a transactional commit
// without identity → accepted; unknown member → UNKNOWN_MEMBER_ID; a classic-protocol member
// whose generation ≠ its member epoch → ILLEGAL_GENERATION; a non-transactional commit
// below OffsetCommit v9 from a consumer-protocol member → UNSUPPORTED_VERSION; an epoch above the
// member epoch → STALE_MEMBER_EPOCH; an epoch below it is checked per partition: the partition
// must be assigned to the member or pending revocation, with an assignment epoch ≤ the received
// epoch, else STALE_MEMBER_EPOCH for that partition (*PartitionErrors). A partition whose
// assignment epoch is unknown (written before value version 1) or whose topic is unknown is
// stale, as is an older-epoch commit without partitions.
func (g *ConsumerGroup) ValidateOffsetCommit(st *State, c *CommitIdentity) error {
	if c.GenerationOrEpoch < 0 && len(g.members) == 0 {
		return nil
	}
	if c.Transactional && c.GenerationOrEpoch < 0 && c.MemberID == "" && c.InstanceID == nil {
		return nil
	}
	m, ok := g.members[c.MemberID]
	if !ok {
		return Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", c.MemberID, g.id)
	}
	if m.classic != nil {
		// A classic-protocol member commits with its generation id (= member epoch), any version.
		if epoch := g.current(c.MemberID).epoch; c.GenerationOrEpoch != epoch {
			return Errf(kerr.IllegalGeneration, "The received generation id %d does not match the member epoch %d.", c.GenerationOrEpoch, epoch)
		}
		return nil
	}
	if !c.Transactional && c.APIVersion < 9 {
		return Errf(kerr.UnsupportedVersion, "OffsetCommit version %d is not supported by members using the consumer protocol.", c.APIVersion)
	}
	cur := g.current(c.MemberID)
	switch {
	case c.GenerationOrEpoch == cur.epoch:
		return nil
	case c.GenerationOrEpoch > cur.epoch || len(c.Partitions) == 0 || st == nil || st.Image == nil:
		return Errf(kerr.StaleMemberEpoch, "The received member epoch %d does not match the current member epoch %d.", c.GenerationOrEpoch, cur.epoch)
	}
	var perr PartitionErrors
	for _, topic := range sortedKeys(c.Partitions) {
		id, _, known := st.Image.TopicID(topic)
		for _, p := range c.Partitions[topic] {
			ok := false
			if known {
				held := containsPartition(cur.assigned[id], p) || containsPartition(cur.pending[id], p)
				e, has := cur.epochs.get(id, p)
				ok = held && has && e <= c.GenerationOrEpoch
			}
			if !ok {
				perr.add(topic, p, kerr.StaleMemberEpoch)
			}
		}
	}
	return perr.orNil()
}

// ValidateOffsetFetch implements Group (Kafka's ConsumerGroup.validateOffsetFetch and
// validateMemberEpoch): unknown member → UNKNOWN_MEMBER_ID; epoch ≠ member epoch →
// STALE_MEMBER_EPOCH for a consumer-protocol member, ILLEGAL_GENERATION for a classic-protocol
// member (its generation id is its member epoch).
func (g *ConsumerGroup) ValidateOffsetFetch(_ *State, memberID string, memberEpoch int32) error {
	m, ok := g.members[memberID]
	if !ok {
		return Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
	}
	if epoch := g.current(memberID).epoch; memberEpoch != epoch {
		if m.classic != nil {
			return Errf(kerr.IllegalGeneration, "The received generation id %d does not match the expected member epoch %d.", memberEpoch, epoch)
		}
		return Errf(kerr.StaleMemberEpoch, "The received member epoch %d does not match the expected member epoch %d.", memberEpoch, epoch)
	}
	return nil
}

// ValidateOffsetDelete implements Group: consumer groups have no group-level check.
func (g *ConsumerGroup) ValidateOffsetDelete() error { return nil }

// ValidateDeleteGroup implements Group: NON_EMPTY_GROUP unless Empty.
func (g *ConsumerGroup) ValidateDeleteGroup() error {
	if len(g.members) != 0 {
		return kerr.NonEmptyGroup
	}
	return nil
}

// OffsetExpiryBase implements Group: consumer group offsets expire from their commit time.
func (g *ConsumerGroup) OffsetExpiryBase(commit time.Time) (time.Time, bool) { return commit, true }

// WriteTombstones implements Group in Kafka's order: every current assignment, every target
// assignment, the target assignment metadata, every member metadata, every resolved regex, the
// group metadata.
func (g *ConsumerGroup) WriteTombstones(st *State) {
	ids := sortedKeys(g.members)
	for _, id := range sortedKeys(g.currents) {
		if _, ok := g.members[id]; !ok {
			ids = append(ids, id)
		}
	}
	targetIDs := sortedKeys(g.targets)
	for _, id := range ids {
		if _, ok := g.currents[id]; ok {
			st.Write(Record{Key: cgCurrentKey(g.id, id)})
		}
	}
	for _, id := range targetIDs {
		st.Write(Record{Key: cgTargetMemberKey(g.id, id)})
	}
	st.Write(Record{Key: cgTargetMetaKey(g.id)})
	for _, id := range sortedKeys(g.members) {
		st.Write(Record{Key: cgMemberKey(g.id, id)})
	}
	for _, re := range sortedKeys(g.regexes) {
		st.Write(Record{Key: cgRegexKey(g.id, re)})
	}
	st.Write(Record{Key: cgMetadataKey(g.id)})
}

// ConsumerGroupDurable is the deterministic value of a consumer group's durable state.
type ConsumerGroupDurable struct {
	HasMetadata     bool
	Epoch           int32
	MetadataHash    int64
	HasTargetMeta   bool
	AssignmentEpoch int32
	Members         []string // one line per member metadata
	Currents        []string
	Targets         []string
	Regexes         []string
}

// Durable implements Group.
func (g *ConsumerGroup) Durable() any {
	d := ConsumerGroupDurable{HasMetadata: g.hasMetadata, Epoch: g.epoch, MetadataHash: g.metadataHash,
		HasTargetMeta: g.hasTargetMeta, AssignmentEpoch: g.assignmentEpoch,
		Members: []string{}, Currents: []string{}, Targets: []string{}, Regexes: []string{}}
	for _, id := range sortedKeys(g.members) {
		d.Members = append(d.Members, string(cgMemberValue(g.members[id])))
	}
	for _, id := range sortedKeys(g.currents) {
		d.Currents = append(d.Currents, id+"="+string(cgCurrentValue(g.currents[id])))
	}
	for _, id := range sortedKeys(g.targets) {
		d.Targets = append(d.Targets, id+"="+string(cgTargetMemberValue(g.targets[id])))
	}
	for _, re := range sortedKeys(g.regexes) {
		d.Regexes = append(d.Regexes, re+"="+string(cgRegexValue(g.regexes[re])))
	}
	return d
}

// ConsumerGroupCountByState counts the shard's consumer groups per state (gauge
// consumer-group-count{state}); every state of ConsumerGroupStates is present.
func ConsumerGroupCountByState(st *State) map[string]int {
	out := make(map[string]int, len(ConsumerGroupStates))
	for _, s := range ConsumerGroupStates {
		out[s] = 0
	}
	for _, g := range st.Groups {
		if cg, ok := g.(*ConsumerGroup); ok {
			out[cg.StateName()]++
		}
	}
	return out
}

// consumerGroups lists the shard's consumer groups sorted by id.
func (st *State) consumerGroups() []*ConsumerGroup {
	var out []*ConsumerGroup
	for _, id := range sortedKeys(st.Groups) {
		if g, ok := st.Groups[id].(*ConsumerGroup); ok {
			out = append(out, g)
		}
	}
	return out
}

// --- topic-partition helpers ---

func cloneTP(a topicPartitions) topicPartitions {
	out := make(topicPartitions, len(a))
	for t, ps := range a {
		out[t] = append([]int32(nil), ps...)
	}
	return out
}

func equalTP(a, b topicPartitions) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		qs, ok := b[t]
		if !ok || len(ps) != len(qs) {
			return false
		}
		for i := range ps {
			if ps[i] != qs[i] {
				return false
			}
		}
	}
	return true
}

func sortedTopicIDs(a topicPartitions) [][16]byte {
	ids := make([][16]byte, 0, len(a))
	for t := range a {
		ids = append(ids, t)
	}
	sort.Slice(ids, func(i, j int) bool { return string(ids[i][:]) < string(ids[j][:]) })
	return ids
}

func containsPartition(ps []int32, p int32) bool {
	i := sort.Search(len(ps), func(i int) bool { return ps[i] >= p })
	return i < len(ps) && ps[i] == p
}

// normalizeTP sorts and de-duplicates partitions and drops empty topics.
func normalizeTP(a topicPartitions) topicPartitions {
	out := make(topicPartitions, len(a))
	for t, ps := range a {
		if len(ps) == 0 {
			continue
		}
		qs := append([]int32(nil), ps...)
		sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
		w := 0
		for i, p := range qs {
			if i == 0 || p != qs[w-1] {
				qs[w] = p
				w++
			}
		}
		out[t] = qs[:w]
	}
	return out
}

func cgDedupSorted(ss []string) []string {
	if len(ss) < 2 {
		return ss
	}
	w := 1
	for i := 1; i < len(ss); i++ {
		if ss[i] != ss[w-1] {
			ss[w] = ss[i]
			w++
		}
	}
	return ss[:w]
}

// sharedNames returns names, or an equal subscribed-names list already held by the group (the
// member's previous list or the latest replayed one) so that members share one read-only slice.
func (g *ConsumerGroup) sharedNames(names []string, old *consumerMember) []string {
	if len(names) == 0 {
		return names
	}
	if old != nil && equalStrings(old.subscribedNames, names) {
		return old.subscribedNames
	}
	if equalStrings(g.lastNames, names) {
		return g.lastNames
	}
	g.lastNames = names
	return names
}

// sameNames reports whether two subscribed-names lists are equal, in O(1) when they share their
// backing array (sharedNames).
func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return equalStrings(a, b)
}
