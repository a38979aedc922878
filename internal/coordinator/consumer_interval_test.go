package coordinator

import (
	"fmt"
	"testing"
	"time"
)

// countTargetMeta counts ConsumerGroupTargetAssignmentMetadata records (one per computed target
// assignment) written so far.
func (h *cgHarness) countTargetMeta() int {
	n := 0
	for _, r := range h.records {
		if r.Value != nil && string(r.Key) == string(cgTargetMetaKey("g")) {
			n++
		}
	}
	return n
}

// TestCGAssignmentInterval: with group.consumer.assignment.interval.ms=1000, joins within one
// interval bump the group epoch each time but compute no new target; heartbeats in between keep
// the current target (the group is Assigning); the first heartbeat after the interval computes
// one target for every member.
func TestCGAssignmentInterval(t *testing.T) {
	h := newCGHarness(t, "group.consumer.assignment.interval.ms=1000")
	t1 := h.topics.Add("t1", 6)
	a := h.joinClient("g", "a", "t1")
	if a.epoch != 1 || countTP(a.owned) != 6 || h.countTargetMeta() != 1 {
		t.Fatalf("first join: epoch %d, %d partitions, %d targets; want 1, 6, 1", a.epoch, countTP(a.owned), h.countTargetMeta())
	}
	b := h.joinClient("g", "b", "t1")
	c := h.joinClient("g", "c", "t1")
	g := h.group("g")
	if g.GroupEpoch() != 3 || g.AssignmentEpoch() != 1 || h.countTargetMeta() != 1 {
		t.Fatalf("joins within the interval: group epoch %d, assignment epoch %d, %d targets; want 3, 1, 1",
			g.GroupEpoch(), g.AssignmentEpoch(), h.countTargetMeta())
	}
	if b.epoch != 1 || len(b.owned) != 0 || c.epoch != 1 || len(c.owned) != 0 {
		t.Fatalf("new members before the interval: b %d %v, c %d %v; want epoch 1, nothing", b.epoch, b.owned, c.epoch, c.owned)
	}
	h.beat(a)
	if a.epoch != 1 || countTP(a.owned) != 6 || g.StateName() != ConsumerStateAssigning {
		t.Fatalf("a before the interval: epoch %d, %d partitions, state %s", a.epoch, countTP(a.owned), g.StateName())
	}

	h.advance(time.Second)
	h.settle("g", []*cgClient{a, b, c})
	if g.AssignmentEpoch() != 3 || h.countTargetMeta() != 2 {
		t.Fatalf("after the interval: assignment epoch %d, %d targets; want 3, 2", g.AssignmentEpoch(), h.countTargetMeta())
	}
	for _, cl := range []*cgClient{a, b, c} {
		if len(cl.owned[t1]) != 2 || cl.epoch != 3 {
			t.Fatalf("%s: epoch %d owns %v", cl.id, cl.epoch, cl.owned)
		}
	}
	h.checkReplayEquivalence(1)
}

// TestCGJoinStormAssignments: 200 members joining within one interval and settling with the
// clock advancing by the heartbeat interval compute a handful of target assignments, not one per
// join.
func TestCGJoinStormAssignments(t *testing.T) {
	h := newCGHarness(t, "group.consumer.assignment.interval.ms=1000")
	h.topics.Add("t1", 1000)
	var cs []*cgClient
	for i := 0; i < 200; i++ {
		cs = append(cs, h.joinClient("g", fmt.Sprintf("m%03d", i), "t1"))
	}
	steps := 0
	for h.group("g").StateName() != ConsumerStateStable {
		if steps++; steps > 20 {
			t.Fatalf("not stable after %d steps: %s", steps, h.group("g").StateName())
		}
		h.advance(5 * time.Second)
		for _, c := range cs {
			h.beat(c)
		}
		checkNoDoubleOwnership(t, cs)
	}
	if n := h.countTargetMeta(); n > 3 {
		t.Fatalf("%d target assignments for a join storm of 200; want ≤ 3", n)
	}
	for _, c := range cs {
		if countTP(c.owned) != 5 {
			t.Fatalf("%s owns %d partitions, want 5", c.id, countTP(c.owned))
		}
	}
}
