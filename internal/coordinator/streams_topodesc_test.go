package coordinator

import "testing"

// Records a push outcome on the shard: success stores the epoch, a permanent failure ratchets
// LastFailedTopologyEpoch; both survive a reload. (A transient failure never reaches the shard.)
func TestTopologyDescriptionPushBookkeeping(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("in", 2))
	m := newTMember("m", "p", simpleTopology(0))
	h.beat("app", m)
	if exists := run(h, RecordTopologyDescriptionPush("app", 0, false)); !exists {
		t.Fatal("permanent failure: group gone")
	}
	if g := h.group("app"); g.LastFailedTopologyEpoch() != 0 || g.StoredTopologyEpoch() != -1 {
		t.Fatalf("after permanent: stored %d failed %d", g.StoredTopologyEpoch(), g.LastFailedTopologyEpoch())
	}
	if exists := run(h, RecordTopologyDescriptionPush("app", 0, true)); !exists {
		t.Fatal("success: group gone")
	}
	if exists := run(h, RecordTopologyDescriptionPush("gone", 0, true)); exists {
		t.Fatal("an unknown group exists")
	}
	st := replayed(t, h, keyOrder)
	g := st.Groups["app"].(*StreamsGroup)
	if g.StoredTopologyEpoch() != 0 || g.LastFailedTopologyEpoch() != 0 {
		t.Fatalf("after reload: stored %d failed %d", g.StoredTopologyEpoch(), g.LastFailedTopologyEpoch())
	}
}

// KeepOnExpiry: with a plugin configured an Empty streams group with a stored description is
// kept by the retention sweep; without a plugin it expires.
func TestTopologyDescriptionKeepOnExpiry(t *testing.T) {
	for _, plugin := range []bool{true, false} {
		var ov []string
		if plugin {
			ov = append(ov, "group.streams.topology.description.plugin.class=memory")
		}
		h := newStreamsHarness(t, newTestTopics("in", 2), ov...)
		m := newTMember("m", "p", simpleTopology(0))
		h.beat("app", m)
		run(h, RecordTopologyDescriptionPush("app", 0, true))
		req := m.request("app")
		req.MemberEpoch, req.Topology = -1, nil
		h.hb(req)
		run(h, func(st *State, c *Call[Ack]) { ExpireOffsets(st); c.Reply(st, Ack{}) })
		if _, kept := h.st.Groups["app"]; kept != plugin {
			t.Fatalf("plugin=%v: kept=%v", plugin, kept)
		}
	}
}
