package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TypeShare is the group type of KIP-932 share groups.
const TypeShare GroupType = "share"

// Share group states as Kafka names them (ShareGroup.ShareGroupState): a share group has no
// revocation protocol, so it is Empty without members and Stable with them.
const (
	ShareStateEmpty  = "Empty"
	ShareStateStable = "Stable"
	ShareStateDead   = "Dead"
)

// ShareGroupStates lists every share group state (gauge share-group-count{state}).
var ShareGroupStates = []string{ShareStateEmpty, ShareStateStable, ShareStateDead}

// shareMember is the ShareGroupMemberMetadata part of a member (record type 10). Share members
// name themselves (KIP-1082: the client generates its member id).
type shareMember struct {
	id         string
	rackID     *string
	clientID   string
	clientHost string
	subscribed []string // sorted, distinct
}

// shareCurrent is a member's ShareGroupCurrentMemberAssignment (record type 14). There is no
// revocation in a share group: a member moves to its target at its next heartbeat.
type shareCurrent struct {
	epoch     int32
	prevEpoch int32
	assigned  topicPartitions
}

// sharePartKey names one share-partition of a group.
type sharePartKey struct {
	topic     [16]byte
	partition int32
}

// ShareGroup is a KIP-932 share group: membership (records 10–14, as Kafka's ShareGroup) and
// the share-partitions of its topics (muster's SharePartitionState records, the state Kafka keeps
// in __share_group_state). Each part replays independently of the others, so a group's records
// may load in any order; the group exists while any of its records does.
type ShareGroup struct {
	id string

	hasMetadata     bool
	epoch           int32
	metadataHash    int64
	hasTargetMeta   bool
	assignmentEpoch int32

	members  map[string]*shareMember
	currents map[string]*shareCurrent
	targets  map[string]topicPartitions
	parts    map[sharePartKey]*SharePartition

	// In memory only: the KIP-1101 metadata hash must be recomputed at the next heartbeat (after
	// a load and after a change of a subscribed topic).
	refresh bool
	// In memory only: parked long-poll watchers (ShareWatch) and the count of wake-ups so far.
	watchers map[uint64]*shareWatcher
	wakeSeq  uint64
	nextWID  uint64
}

func newShareGroup(id string) *ShareGroup { return &ShareGroup{id: id, refresh: true} }

// ID implements Group.
func (g *ShareGroup) ID() string { return g.id }

// Type implements Group.
func (g *ShareGroup) Type() GroupType { return TypeShare }

// ProtocolType implements Group: "share" (Kafka's ShareGroup.PROTOCOL_TYPE).
func (g *ShareGroup) ProtocolType() string { return "share" }

// GroupEpoch is the group epoch.
func (g *ShareGroup) GroupEpoch() int32 { return g.epoch }

// AssignmentEpoch is the target assignment epoch.
func (g *ShareGroup) AssignmentEpoch() int32 { return g.assignmentEpoch }

// NumMembers is the member count.
func (g *ShareGroup) NumMembers() int { return len(g.members) }

// MemberIDs lists the member ids, sorted.
func (g *ShareGroup) MemberIDs() []string { return sortedKeys(g.members) }

// IsEmpty implements Group.
func (g *ShareGroup) IsEmpty() bool { return len(g.members) == 0 }

// StateName implements Group.
func (g *ShareGroup) StateName() string {
	if len(g.members) == 0 {
		return ShareStateEmpty
	}
	return ShareStateStable
}

func (g *ShareGroup) current(id string) *shareCurrent {
	if c, ok := g.currents[id]; ok {
		return c
	}
	return &shareCurrent{}
}

// subscribedTopics is the union of the members' subscribed topic names.
func (g *ShareGroup) subscribedTopics() map[string]bool {
	out := map[string]bool{}
	for _, m := range g.members {
		for _, t := range m.subscribed {
			out[t] = true
		}
	}
	return out
}

// IsSubscribedToTopic implements Group.
func (g *ShareGroup) IsSubscribedToTopic(topic string) bool {
	for _, m := range g.members {
		for _, t := range m.subscribed {
			if t == topic {
				return true
			}
		}
	}
	return false
}

func notAConsumerGroup(id string) error {
	return Errf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", id)
}

// ValidateOffsetCommit implements Group: a share group has no committed offsets (Kafka's
// ShareGroup.validateOffsetCommit).
func (g *ShareGroup) ValidateOffsetCommit(*State, *CommitIdentity) error {
	return notAConsumerGroup(g.id)
}

// ValidateOffsetFetch implements Group.
func (g *ShareGroup) ValidateOffsetFetch(*State, string, int32) error { return notAConsumerGroup(g.id) }

// ValidateOffsetDelete implements Group.
func (g *ShareGroup) ValidateOffsetDelete() error { return notAConsumerGroup(g.id) }

// ValidateDeleteGroup implements Group: NON_EMPTY_GROUP unless Empty.
func (g *ShareGroup) ValidateDeleteGroup() error {
	if len(g.members) != 0 {
		return kerr.NonEmptyGroup
	}
	return nil
}

// OffsetExpiryBase implements Group (a share group has no offsets to expire).
func (g *ShareGroup) OffsetExpiryBase(commit time.Time) (time.Time, bool) { return commit, true }

// WriteTombstones implements Group in Kafka's order (ShareGroup.createGroupTombstoneRecords):
// every current assignment, every target assignment, the target assignment metadata, every
// member metadata, the group metadata; then the state of every share-partition (Kafka's
// DeleteShareGroupState).
func (g *ShareGroup) WriteTombstones(st *State) {
	for _, id := range sortedKeys(g.currents) {
		st.Write(Record{Key: shareCurrentKey(g.id, id)})
	}
	for _, id := range sortedKeys(g.targets) {
		st.Write(Record{Key: shareTargetMemberKey(g.id, id)})
	}
	if g.hasTargetMeta {
		st.Write(Record{Key: shareTargetMetaKey(g.id)})
	}
	for _, id := range sortedKeys(g.members) {
		st.Write(Record{Key: shareMemberKey(g.id, id)})
	}
	if g.hasMetadata {
		st.Write(Record{Key: shareMetadataKey(g.id)})
	}
	for _, k := range g.sortedParts() {
		st.Write(Record{Key: sharePartitionKey(g.id, k.topic, k.partition)})
	}
}

// hasRecords reports whether any record of the group is live.
func (g *ShareGroup) hasRecords() bool {
	return g.hasMetadata || g.hasTargetMeta || len(g.members) > 0 || len(g.currents) > 0 ||
		len(g.targets) > 0 || len(g.parts) > 0
}

// HasDurableContent reports whether the group holds anything a restart rebuilds.
func (g *ShareGroup) HasDurableContent() bool { return g.hasRecords() }

// ShareGroupDurable is the deterministic value of a share group's durable state.
type ShareGroupDurable struct {
	HasMetadata     bool
	Epoch           int32
	MetadataHash    int64
	HasTargetMeta   bool
	AssignmentEpoch int32
	Members         []string
	Currents        []string
	Targets         []string
	Partitions      []string
}

// Durable implements Group: share-partitions are described by the state they would write now
// (acquired records as the available records with the previous delivery count they are stored
// as), which a reload rebuilds.
func (g *ShareGroup) Durable() any {
	d := ShareGroupDurable{HasMetadata: g.hasMetadata, Epoch: g.epoch, MetadataHash: g.metadataHash,
		HasTargetMeta: g.hasTargetMeta, AssignmentEpoch: g.assignmentEpoch,
		Members: []string{}, Currents: []string{}, Targets: []string{}, Partitions: []string{}}
	for _, id := range sortedKeys(g.members) {
		d.Members = append(d.Members, string(shareMemberValue(g.members[id])))
	}
	for _, id := range sortedKeys(g.currents) {
		d.Currents = append(d.Currents, id+"="+string(shareCurrentValue(g.currents[id])))
	}
	for _, id := range sortedKeys(g.targets) {
		d.Targets = append(d.Targets, id+"="+string(shareTargetMemberValue(g.targets[id])))
	}
	for _, k := range g.sortedParts() {
		d.Partitions = append(d.Partitions, string(sharePartitionKey(g.id, k.topic, k.partition))+"="+string(g.parts[k].encode()))
	}
	return d
}

func (g *ShareGroup) sortedParts() []sharePartKey {
	out := make([]sharePartKey, 0, len(g.parts))
	for k := range g.parts {
		out = append(out, k)
	}
	sortPartKeys(out)
	return out
}

func sortPartKeys(ks []sharePartKey) {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && partKeyLess(ks[j], ks[j-1]); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}

func partKeyLess(a, b sharePartKey) bool {
	if a.topic != b.topic {
		return string(a.topic[:]) < string(b.topic[:])
	}
	return a.partition < b.partition
}

// ShareGroupCountByState counts the shard's share groups per state; every state of
// ShareGroupStates is present.
func ShareGroupCountByState(st *State) map[string]int {
	out := make(map[string]int, len(ShareGroupStates))
	for _, s := range ShareGroupStates {
		out[s] = 0
	}
	for _, g := range st.Groups {
		if sg, ok := g.(*ShareGroup); ok {
			out[sg.StateName()]++
		}
	}
	return out
}

// shareGroups lists the shard's share groups sorted by id.
func (st *State) shareGroups() []*ShareGroup {
	var out []*ShareGroup
	for _, id := range sortedKeys(st.Groups) {
		if g, ok := st.Groups[id].(*ShareGroup); ok {
			out = append(out, g)
		}
	}
	return out
}

// shareGroup returns the share group id, GROUP_ID_NOT_FOUND when there is none or the id
// belongs to a group of another type.
func (st *State) shareGroup(id string) (*ShareGroup, error) {
	switch g := st.Groups[id].(type) {
	case *ShareGroup:
		return g, nil
	case nil:
		return nil, Errf(kerr.GroupIDNotFound, "Group %s not found.", id)
	default:
		return nil, Errf(kerr.GroupIDNotFound, "Group %s is not a share group.", id)
	}
}
