package coordinator

import (
	"testing"
)

// TestStreamsStaticRejoinKeepsTasks: a static member (re-)joining at member epoch 0 keeps its
// tasks in the join response, both with the same member id and with a new member id after a
// temporary leave (-2), as KIP-848 static members do; the group epoch does not move.
func TestStreamsStaticRejoinKeepsTasks(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4))
	inst := "i-1"
	m1 := newTMember("m1", "p1", simpleTopology(0))
	m1.instance = &inst
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.converge("g", []*tMember{m1, m2}, 10)
	g := h.group("g")
	e := g.GroupEpoch()
	owned := g.currentOf("m1").Assigned.Active.clone()
	if len(owned) == 0 {
		t.Fatal("m1 owns no active task")
	}

	// Same member id, epoch 0 (a restart keeping the member id).
	m1.epoch = 0
	m1.active, m1.standby, m1.warmup = streamsTasks{}, streamsTasks{}, streamsTasks{}
	resp := h.beat("g", m1)
	wantErr(t, resp, nil, "")
	if !fromTaskIDs(resp.ActiveTasks).sameKeys(owned) {
		t.Fatalf("same-id static rejoin: active %v, want %v", fromTaskIDs(resp.ActiveTasks), owned)
	}
	if resp.MemberEpoch != g.TargetAssignmentEpoch() || g.GroupEpoch() != e {
		t.Fatalf("same-id static rejoin: member epoch %d target %d group epoch %d (was %d)", resp.MemberEpoch, g.TargetAssignmentEpoch(), g.GroupEpoch(), e)
	}
	if !g.currentOf("m2").Assigned.Active.sameKeys(m2.active) {
		t.Fatal("the other member must be untouched")
	}

	// Temporary leave, then a new member id with the same instance id.
	req := m1.request("g")
	req.MemberEpoch = -2
	wantErr(t, h.hb(req), nil, "")
	back := newTMember("m1b", "p1", simpleTopology(0))
	back.instance = &inst
	resp = h.beat("g", back)
	wantErr(t, resp, nil, "")
	if !fromTaskIDs(resp.ActiveTasks).sameKeys(owned) {
		t.Fatalf("replacing static member: active %v, want %v", fromTaskIDs(resp.ActiveTasks), owned)
	}
	if _, ok := g.MemberEpoch("m1"); ok || g.GroupEpoch() != e {
		t.Fatalf("old id must be gone without a bump (group epoch %d, was %d)", g.GroupEpoch(), e)
	}
	h.converge("g", []*tMember{back, m2}, 5)
	assertActiveOnce(t, g, map[string]int32{"0": 4})

	// Replay gives the same state.
	st := replayed(t, h, keyOrder)
	rg := st.Groups["g"].(*StreamsGroup)
	if !rg.currentOf("m1b").Assigned.Active.sameKeys(owned) {
		t.Fatal("replayed state lost the static member's tasks")
	}

	// A dynamic member rejoining at epoch 0 still starts empty.
	m2.epoch = 0
	m2.active, m2.standby, m2.warmup = streamsTasks{}, streamsTasks{}, streamsTasks{}
	h.beat("g", m2)
	if ep, _ := g.MemberEpoch("m2"); ep == 0 && !g.currentOf("m2").Assigned.empty() {
		t.Fatal("dynamic rejoin at epoch 0 must start from an empty assignment")
	}
}
