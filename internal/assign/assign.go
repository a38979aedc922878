// Package assign implements muster's server-side partition assignors for
// KIP-848 consumer groups: "uniform" (the default) and "range".
//
// The group coordinator calls an Assignor with the group's members (their
// subscriptions, racks and current target assignment) and a view of the
// subscribed topics' metadata, and stores the result as the new target
// assignment. The behaviour follows Apache Kafka's group-coordinator
// assignors (UniformAssignor with its homogeneous and heterogeneous builders,
// RangeAssignor), re-derived rather than ported:
//
//   - Every partition of every subscribed, known topic is assigned to exactly
//     one member subscribed to that topic. Topics whose partition count is
//     unknown (TopicMetadata.Partitions returns -1) are skipped.
//   - The output depends only on the input, never on the order of
//     GroupSpec.Members or on map iteration order.
//   - The cost grows linearly with the number of members plus partitions
//     (plus sorting the members, and the subscription lists for
//     heterogeneous groups); no step loops over members × partitions.
//
// Rack awareness: when members have racks and partitions have replicas on
// some but not all of those racks, the assignors prefer to give a member
// partitions that have a replica on the member's rack, without giving up
// balance. In homogeneous uniform and in range, a partition held by a member
// on a rack without a replica is not kept for stickiness (as Kafka's
// rack-aware uniform builder did) but goes back to its previous owner when no
// member on a matching rack has room, so a stable group stays stable. The
// heterogeneous uniform builder keeps such partitions (its water-filling could
// not guarantee the give-back) and uses racks when placing new partitions and
// when choosing which partitions to move while balancing.
package assign

import (
	"bytes"
	"errors"
	"fmt"
)

// TopicID is a topic's 16-byte UUID.
type TopicID = [16]byte

// TopicMetadata describes the topics assignors may read.
type TopicMetadata interface {
	// Partitions returns the partition count of the topic, or -1 when unknown.
	Partitions(id TopicID) int32
	// PartitionRacks returns the racks of the replicas of partition p (may be nil).
	PartitionRacks(id TopicID, p int32) []string
}

// MemberSpec is one member of the group as the assignor sees it.
type MemberSpec struct {
	MemberID   string
	InstanceID string              // may be ""
	RackID     string              // may be ""
	Subscribed []TopicID           // topics the member subscribes to (names and regex already resolved)
	Current    map[TopicID][]int32 // the member's current TARGET assignment (for stickiness); may be nil
}

// GroupSpec is the input of an assignment.
type GroupSpec struct {
	Members []MemberSpec // any order; assignors sort internally for determinism
}

// Assignor computes a target assignment.
type Assignor interface {
	Name() string // "uniform" or "range"
	// Assign returns the new target assignment. It returns an error for
	// malformed input (nil spec or metadata, empty or duplicate member ids,
	// partition counts below -1); it never panics on such input.
	Assign(spec *GroupSpec, topics TopicMetadata) (*Assignment, error)
}

// Names of the built-in assignors, as used in group.consumer.assignors and in
// the ServerAssignor field of ConsumerGroupHeartbeat.
const (
	UniformName = "uniform"
	RangeName   = "range"
)

// Uniform returns the uniform assignor (Kafka's UniformAssignor): balanced
// and sticky. Homogeneous groups (all members subscribe to the same topics)
// give every member floor or ceil of total/members partitions, keeping as many
// current partitions as the quota allows; heterogeneous groups balance each
// topic among its subscribers, as evenly as possible overall.
func Uniform() Assignor { return uniformAssignor{} }

// Range returns the range assignor (Kafka's RangeAssignor): per topic, the
// subscribers — static members first ordered by instance id, then dynamic
// members by member id — receive contiguous ranges, the first
// partitions%subscribers of them one partition more. Members keep their
// lowest current partitions up to their quota, so co-partitioned topics stay
// co-partitioned across rebalances.
func Range() Assignor { return rangeAssignor{} }

// ByName returns the built-in assignor with the given name.
func ByName(name string) (Assignor, bool) {
	switch name {
	case UniformName:
		return Uniform(), true
	case RangeName:
		return Range(), true
	}
	return nil, false
}

type uniformAssignor struct{}

func (uniformAssignor) Name() string { return UniformName }

func (uniformAssignor) Assign(spec *GroupSpec, topics TopicMetadata) (*Assignment, error) {
	b, err := newBuilder(spec, topics, nil)
	if err != nil {
		return nil, err
	}
	defer b.release()
	if b.total > 0 {
		if b.homogeneous {
			err = b.uniformHomogeneous()
		} else {
			err = b.uniformHeterogeneous()
		}
		if err != nil {
			return nil, err
		}
	}
	return b.output(), nil
}

type rangeAssignor struct{}

func (rangeAssignor) Name() string { return RangeName }

func (rangeAssignor) Assign(spec *GroupSpec, topics TopicMetadata) (*Assignment, error) {
	b, err := newBuilder(spec, topics, compareStaticFirst)
	if err != nil {
		return nil, err
	}
	defer b.release()
	if b.total > 0 {
		if err := b.rangeAssign(); err != nil {
			return nil, err
		}
	}
	return b.output(), nil
}

// compareByMemberID orders members by member id.
func compareByMemberID(a, b *MemberSpec) int {
	switch {
	case a.MemberID < b.MemberID:
		return -1
	case a.MemberID > b.MemberID:
		return 1
	}
	return 0
}

// compareStaticFirst is Kafka's RangeAssignor order: members with an instance
// id first, by instance id; then the others by member id.
func compareStaticFirst(a, b *MemberSpec) int {
	as, bs := a.InstanceID != "", b.InstanceID != ""
	switch {
	case as && bs:
		if a.InstanceID != b.InstanceID {
			if a.InstanceID < b.InstanceID {
				return -1
			}
			return 1
		}
	case as:
		return -1
	case bs:
		return 1
	}
	return compareByMemberID(a, b)
}

func compareTopicID(a, b TopicID) int { return bytes.Compare(a[:], b[:]) }

var errUnassigned = errors.New("assign: partitions were left unassigned")

func errorf(format string, args ...any) error { return fmt.Errorf("assign: "+format, args...) }
