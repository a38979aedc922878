package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCGMetadataHashKIP1101(t *testing.T) {
	h := newCGHarness(t)
	tid := h.topics.Add("t", 4)
	h.topics.Add("other", 2)
	a := h.joinClient("g", "a", "t")
	b := h.joinClient("g", "b", "t")
	clients := []*cgClient{a, b}
	h.settle("g", clients)
	g := h.group("g")
	epoch, hash := g.GroupEpoch(), g.MetadataHash()
	if hash == 0 {
		t.Fatalf("no metadata hash stored")
	}
	// Hash stable: heartbeats after a refresh request with nothing changed do not bump.
	markTopicsChanged(h.st, []string{"t"})
	h.settle("g", clients)
	if g.GroupEpoch() != epoch || g.MetadataHash() != hash {
		t.Fatalf("bump without change: %d→%d", epoch, g.GroupEpoch())
	}
	// An unsubscribed topic changes: the group is not even flagged; no bump.
	h.topics.Add("other", 8)
	markTopicsChanged(h.st, []string{"other"})
	if g.refresh {
		t.Fatalf("group flagged for an unsubscribed topic")
	}
	h.settle("g", clients)
	if g.GroupEpoch() != epoch {
		t.Fatalf("bump for an unsubscribed topic")
	}
	// Partitions added to the subscribed topic: bump and the new partitions are assigned.
	h.topics.Add("t", 6)
	markTopicsChanged(h.st, []string{"t"})
	h.settle("g", clients)
	if g.GroupEpoch() != epoch+1 || g.MetadataHash() == hash {
		t.Fatalf("no bump after partitions were added: epoch %d", g.GroupEpoch())
	}
	if countTP(a.owned)+countTP(b.owned) != 6 || len(a.owned[tid])+len(b.owned[tid]) != 6 {
		t.Fatalf("new partitions not assigned: %v %v", a.owned, b.owned)
	}
	// A rack change of the data plane changes the hash.
	epoch, hash = g.GroupEpoch(), g.MetadataHash()
	h.topics.SetRack("r1")
	markTopicsChanged(h.st, []string{"t"})
	h.settle("g", clients)
	if g.GroupEpoch() != epoch+1 || g.MetadataHash() == hash {
		t.Fatalf("no bump after a rack change")
	}
	// The subscribed topic is deleted: bump, nothing assigned.
	epoch = g.GroupEpoch()
	h.topics.Delete("t")
	markTopicsChanged(h.st, []string{"t"})
	h.settle("g", clients)
	if g.GroupEpoch() != epoch+1 || g.MetadataHash() != 0 || countTP(a.owned)+countTP(b.owned) != 0 {
		t.Fatalf("topic deletion: epoch %d hash %d owned %v %v", g.GroupEpoch(), g.MetadataHash(), a.owned, b.owned)
	}
	h.checkReplayEquivalence(11)
}

func TestCGLegacyMetadataWithoutHash(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	a := h.joinClient("g", "a", "t")
	b := h.joinClient("g", "b", "t")
	clients := []*cgClient{a, b}
	h.settle("g", clients)
	g := h.group("g")
	epoch := g.GroupEpoch()
	ownedA, ownedB := cloneTP(a.owned), cloneTP(b.owned)
	// Rewrite the group metadata as an older record without hash (version 0).
	e := Enc{}
	e.Int16(cgMetadataVersionNoHash)
	e.Int32(epoch)
	h.records = append(h.records, Record{Key: cgMetadataKey("g"), Value: e.B})
	// Load a fresh shard from the records.
	fresh := newCGHarness(t)
	fresh.topics, fresh.image = h.topics, h.topics.Image
	fresh.st.Cfg = h.st.Cfg
	last := map[string]Record{}
	for _, r := range h.records {
		last[string(r.Key)] = r
	}
	for _, k := range sortedKeys(last) {
		if err := fresh.st.Replay(last[k]); err != nil {
			t.Fatal(err)
		}
		fresh.records = append(fresh.records, last[k])
	}
	fresh.st.OnLoaded(fresh.st.Now)
	fg := fresh.group("g")
	if fg.MetadataHash() != 0 || fg.GroupEpoch() != epoch {
		t.Fatalf("legacy load: hash %d epoch %d", fg.MetadataHash(), fg.GroupEpoch())
	}
	fresh.settle("g", clients)
	if fg.GroupEpoch() != epoch+1 || fg.MetadataHash() == 0 {
		t.Fatalf("legacy group: epoch %d hash %d", fg.GroupEpoch(), fg.MetadataHash())
	}
	if !equalTP(a.owned, ownedA) || !equalTP(b.owned, ownedB) {
		t.Fatalf("assignment changed: %v→%v, %v→%v", ownedA, a.owned, ownedB, b.owned)
	}
	fresh.settle("g", clients)
	if fg.GroupEpoch() != epoch+1 {
		t.Fatalf("more than one bump")
	}
	fresh.checkReplayEquivalence(12)
}

func TestCGRegexSubscription(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("orders-eu", 2)
	h.topics.Add("orders-us", 2)
	h.topics.Add("payments", 2)
	r := joinReq("g", "a", "")
	r.SubscribedTopicNames = nil
	r.SubscribedTopicRegex = strp("orders-.*")
	resp := h.hb(r)
	if resp.ErrorCode != 0 || countTP(respTP(resp.Assignment)) != 4 {
		t.Fatalf("regex join: %d %v", resp.ErrorCode, resp.Assignment)
	}
	g := h.group("g")
	if !g.IsSubscribedToTopic("orders-eu") || g.IsSubscribedToTopic("payments") {
		t.Fatalf("subscription")
	}
	// Full match: "orders" alone does not match "orders-.*"; a partial match does not count.
	if got := resolveRegex(h.st, "orders", nil); len(got) != 0 {
		t.Fatalf("partial match resolved: %v", got)
	}
	a := &cgClient{group: "g", id: "a", epoch: resp.MemberEpoch, owned: respTP(resp.Assignment)}
	epoch := g.GroupEpoch()
	// A new matching topic is picked up after the topic change.
	h.topics.Add("orders-ap", 3)
	markTopicsChanged(h.st, []string{"orders-ap"})
	h.beat(a)
	h.beat(a)
	if g.GroupEpoch() != epoch+1 || countTP(a.owned) != 7 || !g.IsSubscribedToTopic("orders-ap") {
		t.Fatalf("new topic: epoch %d owned %v", g.GroupEpoch(), a.owned)
	}
	h.checkReplayEquivalence(13)
	// Leaving drops the resolved regex.
	h.hb(hbReq("g", "a", -1, nil))
	if len(g.regexes) != 0 {
		t.Fatalf("regex kept after the last member left")
	}
	h.checkReplayEquivalence(14)
}

func TestCGDescribe(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 2)
	h.joinClient("g", "a", "t")
	h.st.Groups["c"] = newSimpleClassicGroup("c")
	out := run(h, ConsumerGroupDescribe([]string{"g", "nope", "c", ""}, 1))
	g := out[0]
	if g.ErrorCode != 0 || g.State != "Stable" || g.Epoch != 1 || g.AssignmentEpoch != 1 || g.AssignorName != "uniform" || len(g.Members) != 1 {
		t.Fatalf("describe: %+v", g)
	}
	m := g.Members[0]
	if m.MemberID != "a" || m.MemberEpoch != 1 || m.MemberType != 1 || m.ClientID != "client" ||
		len(m.Assignment.TopicPartitions) != 1 || m.Assignment.TopicPartitions[0].Topic != "t" ||
		len(m.TargetAssignment.TopicPartitions[0].Partitions) != 2 || len(m.SubscribedTopics) != 1 {
		t.Fatalf("member: %+v", m)
	}
	if out[1].ErrorCode != kerr.GroupIDNotFound.Code || deref(out[1].ErrorMessage) != "Group nope not found." {
		t.Fatalf("unknown: %+v", out[1])
	}
	if out[2].ErrorCode != kerr.GroupIDNotFound.Code || deref(out[2].ErrorMessage) != "Group c is not a consumer group." {
		t.Fatalf("classic: %+v", out[2])
	}
	if out[3].ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("empty id: %+v", out[3])
	}
	v0 := run(h, ConsumerGroupDescribe([]string{"g"}, 0))
	if v0[0].Members[0].MemberType != -1 {
		t.Fatalf("v0 member type %d", v0[0].Members[0].MemberType)
	}
}

// TestCGDescribeDeletedTopic: a described assignment names only topics the metadata image knows
// (Kafka's ConsumerGroupMember.topicPartitionsFromMap skips unknown topic ids): partitions of a
// deleted topic that members still hold are left out, not shown with an empty name.
func TestCGDescribeDeletedTopic(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 1)
	h.topics.Add("u", 1)
	h.joinClient("g", "a", "t", "u")
	h.topics.Delete("u")
	m := run(h, ConsumerGroupDescribe([]string{"g"}, 1))[0].Members[0]
	for _, a := range []kmsg.Assignment{m.Assignment, m.TargetAssignment} {
		if len(a.TopicPartitions) != 1 || a.TopicPartitions[0].Topic != "t" {
			t.Fatalf("assignment %+v, want only t", a.TopicPartitions)
		}
	}
}

func TestCGOffsetValidation(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 2)
	h.joinClient("g", "a", "t")
	g := h.group("g")
	code := func(err error) int16 { return ErrorCode(err) }
	cases := []struct {
		name string
		id   CommitIdentity
		want *kerr.Error
	}{
		{"ok", CommitIdentity{MemberID: "a", GenerationOrEpoch: 1, APIVersion: 9}, nil},
		{"stale", CommitIdentity{MemberID: "a", GenerationOrEpoch: 0, APIVersion: 9}, kerr.StaleMemberEpoch},
		{"unknown member", CommitIdentity{MemberID: "x", GenerationOrEpoch: 1, APIVersion: 9}, kerr.UnknownMemberID},
		{"old version", CommitIdentity{MemberID: "a", GenerationOrEpoch: 1, APIVersion: 8}, kerr.UnsupportedVersion},
		{"admin with members", CommitIdentity{GenerationOrEpoch: -1, APIVersion: 9}, kerr.UnknownMemberID},
		{"txn without identity", CommitIdentity{GenerationOrEpoch: -1, Transactional: true}, nil},
		{"txn stale", CommitIdentity{MemberID: "a", GenerationOrEpoch: 3, Transactional: true}, kerr.StaleMemberEpoch},
	}
	for _, c := range cases {
		var want int16
		if c.want != nil {
			want = c.want.Code
		}
		if got := code(g.ValidateOffsetCommit(h.st, &c.id)); got != want {
			t.Errorf("%s: %d, want %d", c.name, got, want)
		}
	}
	if code(g.ValidateOffsetFetch(h.st, "a", 1)) != 0 || code(g.ValidateOffsetFetch(h.st, "a", 2)) != kerr.StaleMemberEpoch.Code ||
		code(g.ValidateOffsetFetch(h.st, "x", 1)) != kerr.UnknownMemberID.Code {
		t.Fatalf("fetch validation")
	}
	if g.ValidateOffsetDelete() != nil || code(g.ValidateDeleteGroup()) != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete validation")
	}
	if !g.IsSubscribedToTopic("t") || g.IsSubscribedToTopic("u") {
		t.Fatalf("subscription")
	}
	h.hb(hbReq("g", "a", -1, nil))
	if g.ValidateDeleteGroup() != nil || g.ValidateOffsetCommit(h.st, &CommitIdentity{GenerationOrEpoch: -1, APIVersion: 9}) != nil {
		t.Fatalf("empty group validation")
	}
	// Delete: tombstones in Kafka's order remove the group; replay agrees.
	run(h, func(st *State, c *Call[Ack]) { g.WriteTombstones(st); c.Reply(st, Ack{}) })
	if _, ok := h.st.Groups["g"]; ok {
		t.Fatalf("group kept after its tombstones")
	}
	h.checkReplayEquivalence(15)
	counts := ConsumerGroupCountByState(h.st)
	if len(counts) != 5 || counts["Empty"] != 0 {
		t.Fatalf("counts %v", counts)
	}
}
