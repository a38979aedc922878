package assign

import (
	"reflect"
	"testing"
)

// Fixed cases hand-derived from reading Apache Kafka's group-coordinator
// assignors (UniformHomogeneousAssignmentBuilder, UniformHeterogeneous-
// AssignmentBuilder, RangeAssignor) for the same input. Kafka iterates
// members and topics in hash-map order where muster sorts (member id, topic
// id); the inputs are chosen so that both orders agree.

type tp = map[TopicID][]int32

func assertAssignment(t *testing.T, a Assignor, spec *GroupSpec, md *meta, want AssignmentMap) {
	t.Helper()
	got, err := assignMap(a, spec, md)
	if err != nil {
		t.Fatal(err)
	}
	check(t, spec, md, got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", a.Name(), got, want)
	}
}

func TestKafkaRangeCoPartitioned(t *testing.T) {
	// RangeAssignor class doc: M0, M1; T1 and T2 with 3 partitions each.
	md := topicsMeta(3, 3)
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "M1", Subscribed: []TopicID{tid(0), tid(1)}},
		{MemberID: "M0", Subscribed: []TopicID{tid(1), tid(0)}},
	}}
	assertAssignment(t, Range(), spec, md, AssignmentMap{
		"M0": tp{tid(0): {0, 1}, tid(1): {0, 1}},
		"M1": tp{tid(0): {2}, tid(1): {2}},
	})
}

func TestKafkaRangeStaticMembersFirst(t *testing.T) {
	// RangeAssignor.sortMemberIds: members with an instance id first, by
	// instance id; then the others by member id. Class doc: M3 (I0) gets
	// the first range, M2 (I1) the second.
	md := topicsMeta(5)
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: []TopicID{tid(0)}},
		{MemberID: "M2", InstanceID: "I1", Subscribed: []TopicID{tid(0)}},
		{MemberID: "M3", InstanceID: "I0", Subscribed: []TopicID{tid(0)}},
	}}
	assertAssignment(t, Range(), spec, md, AssignmentMap{
		"M3": tp{tid(0): {0, 1}},
		"M2": tp{tid(0): {2, 3}},
		"A":  tp{tid(0): {4}},
	})
}

func TestKafkaRangeHeterogeneous(t *testing.T) {
	// Per topic, ranges over that topic's subscribers only.
	md := topicsMeta(3, 3, 2)
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: []TopicID{tid(0), tid(1)}},
		{MemberID: "B", Subscribed: []TopicID{tid(2)}},
		{MemberID: "C", Subscribed: []TopicID{tid(1), tid(2)}},
	}}
	assertAssignment(t, Range(), spec, md, AssignmentMap{
		"A": tp{tid(0): {0, 1, 2}, tid(1): {0, 1}},
		"B": tp{tid(2): {0}},
		"C": tp{tid(1): {2}, tid(2): {1}},
	})
}

func TestKafkaRangeStickyMemberAdded(t *testing.T) {
	// Kafka's sticky RangeAssignor (3.7-3.9): members keep their lowest
	// current partitions up to the minimum quota; unassigned partitions go
	// in ascending order to members below quota. C joins A(0,1) B(2).
	md := topicsMeta(3, 3)
	subs := []TopicID{tid(0), tid(1)}
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: subs, Current: tp{tid(0): {0, 1}, tid(1): {0, 1}}},
		{MemberID: "B", Subscribed: subs, Current: tp{tid(0): {2}, tid(1): {2}}},
		{MemberID: "C", Subscribed: subs},
	}}
	assertAssignment(t, Range(), spec, md, AssignmentMap{
		"A": tp{tid(0): {0}, tid(1): {0}},
		"B": tp{tid(0): {2}, tid(1): {2}},
		"C": tp{tid(0): {1}, tid(1): {1}},
	})
}

func TestKafkaUniformHomogeneousFirstAssignment(t *testing.T) {
	// 7 partitions over 3 members: quota 2, the first 7%3 = 1 member gets 3;
	// unassigned partitions are handed out in order, member by member.
	md := topicsMeta(4, 3)
	subs := []TopicID{tid(0), tid(1)}
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "C", Subscribed: subs},
		{MemberID: "A", Subscribed: subs},
		{MemberID: "B", Subscribed: subs},
	}}
	assertAssignment(t, Uniform(), spec, md, AssignmentMap{
		"A": tp{tid(0): {0, 1, 2}},
		"B": tp{tid(0): {3}, tid(1): {0}},
		"C": tp{tid(1): {1, 2}},
	})
}

func TestKafkaUniformHomogeneousMemberRemoved(t *testing.T) {
	// C leaves; A and B keep theirs (quota 3) and take C's partitions.
	md := topicsMeta(3, 3)
	subs := []TopicID{tid(0), tid(1)}
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: subs, Current: tp{tid(0): {0, 1}}},
		{MemberID: "B", Subscribed: subs, Current: tp{tid(0): {2}, tid(1): {0}}},
	}}
	assertAssignment(t, Uniform(), spec, md, AssignmentMap{
		"A": tp{tid(0): {0, 1}, tid(1): {1}},
		"B": tp{tid(0): {2}, tid(1): {0, 2}},
	})
}

func TestKafkaUniformHomogeneousOverQuotaRevoked(t *testing.T) {
	// B joins; A held everything. Quota 2 each: A keeps its first two.
	md := topicsMeta(4)
	subs := []TopicID{tid(0)}
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: subs, Current: tp{tid(0): {0, 1, 2, 3}}},
		{MemberID: "B", Subscribed: subs},
	}}
	assertAssignment(t, Uniform(), spec, md, AssignmentMap{
		"A": tp{tid(0): {0, 1}},
		"B": tp{tid(0): {2, 3}},
	})
}

func TestKafkaUniformHeterogeneousFirstAssignment(t *testing.T) {
	// T0 (2 partitions, subscriber A) and T1 (4 partitions, A and B) tie on
	// partitions per subscriber; fewer subscribers first: A gets T0. T1 goes
	// to the least loaded: B twice to reach A's load, then B, A.
	md := topicsMeta(2, 4)
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: []TopicID{tid(0), tid(1)}},
		{MemberID: "B", Subscribed: []TopicID{tid(1)}},
	}}
	assertAssignment(t, Uniform(), spec, md, AssignmentMap{
		"A": tp{tid(0): {0, 1}, tid(1): {3}},
		"B": tp{tid(1): {0, 1, 2}},
	})
}

func TestKafkaUniformHeterogeneousBalancing(t *testing.T) {
	// A kept all of T1 (its subscription to T0 is new); balancing moves
	// T1 partitions from A to B until the loads differ by at most one.
	md := topicsMeta(2, 6)
	spec := &GroupSpec{Members: []MemberSpec{
		{MemberID: "A", Subscribed: []TopicID{tid(0), tid(1)}, Current: tp{tid(1): {0, 1, 2, 3, 4, 5}}},
		{MemberID: "B", Subscribed: []TopicID{tid(1)}},
	}}
	got, err := assignMap(Uniform(), spec, md)
	if err != nil {
		t.Fatal(err)
	}
	check(t, spec, md, got)
	c := counts(got)
	if c["A"] != 4 || c["B"] != 4 || len(got["A"][tid(0)]) != 2 {
		t.Fatalf("got %v", got)
	}
	// A keeps its lowest T1 partitions; the highest move.
	if !reflect.DeepEqual(got["A"][tid(1)], []int32{0, 1}) {
		t.Fatalf("got %v", got)
	}
}
