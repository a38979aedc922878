package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitReq builds an OffsetCommit v9 request for the partitions of each topic.
func commitReq(group, member string, epoch int32, topics map[string][]int32) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.MemberID, req.Generation = group, member, epoch
	for _, name := range sortedKeys(topics) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = name
		for _, p := range topics[name] {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = p, 42
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func commitCodes(resp *kmsg.OffsetCommitResponse) map[topicPartition]int16 {
	out := map[topicPartition]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
		}
	}
	return out
}

// TestStreamsOffsetCommitKIP1251: a commit with an older member epoch is accepted for the
// partitions of active tasks the member was assigned at or before that epoch (source topics),
// and STALE_MEMBER_EPOCH per partition otherwise; a newer epoch is stale as a whole.
func TestStreamsOffsetCommitKIP1251(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("input", 4, "app-store-changelog", 4))
	m1 := newTMember("m1", "p1", simpleTopology(0))
	m2 := newTMember("m2", "p2", simpleTopology(0))
	h.converge("g", []*tMember{m1, m2}, 10)
	g := h.group("g")
	old := m1.epoch
	var kept, others []int32
	for _, k := range m1.active.sorted() {
		kept = append(kept, k.Part)
	}
	for _, k := range m2.active.sorted() {
		others = append(others, k.Part)
	}
	if len(kept) == 0 || len(others) == 0 {
		t.Fatalf("tasks not split: %v %v", kept, others)
	}
	// m2 leaves: m1 gets m2's tasks at a newer epoch; its own tasks keep the old assignment epoch.
	req := m2.request("g")
	req.MemberEpoch = -1
	h.hb(req)
	h.converge("g", []*tMember{m1}, 5)
	if m1.epoch <= old {
		t.Fatalf("member epoch did not move: %d", m1.epoch)
	}

	// Same epoch: everything accepted.
	resp := run(h, OffsetCommit(commitReq("g", "m1", m1.epoch, map[string][]int32{"input": {0, 1, 2, 3}})))
	for tp, code := range commitCodes(resp) {
		if code != 0 {
			t.Fatalf("current epoch: %v got %d", tp, code)
		}
	}
	// Older epoch: the old tasks are accepted, the newly given ones and non-source topics stale.
	resp = run(h, OffsetCommit(commitReq("g", "m1", old, map[string][]int32{
		"input": {0, 1, 2, 3}, "app-store-changelog": {kept[0]},
	})))
	codes := commitCodes(resp)
	for _, p := range kept {
		if codes[topicPartition{"input", p}] != 0 {
			t.Fatalf("kept partition %d: %d", p, codes[topicPartition{"input", p}])
		}
	}
	for _, p := range others {
		if codes[topicPartition{"input", p}] != kerr.StaleMemberEpoch.Code {
			t.Fatalf("newly assigned partition %d: %d, want STALE_MEMBER_EPOCH", p, codes[topicPartition{"input", p}])
		}
	}
	if codes[topicPartition{"app-store-changelog", kept[0]}] != kerr.StaleMemberEpoch.Code {
		t.Fatal("a changelog topic is not a source topic: STALE_MEMBER_EPOCH")
	}
	// The rejected partitions are not written.
	h.st.Offsets.remove([]byte("g"), []byte("input"), others[0])
	run(h, OffsetCommit(commitReq("g", "m1", old, map[string][]int32{"input": {others[0]}})))
	if _, ok := h.st.Offsets.Get("g", "input", others[0]); ok {
		t.Fatal("a rejected partition must not be committed")
	}
	// Newer epoch: stale as a whole.
	resp = run(h, OffsetCommit(commitReq("g", "m1", m1.epoch+1, map[string][]int32{"input": {kept[0]}})))
	if commitCodes(resp)[topicPartition{"input", kept[0]}] != kerr.StaleMemberEpoch.Code {
		t.Fatal("newer epoch must be STALE_MEMBER_EPOCH")
	}
	// Older than the assignment epoch of every task: all stale.
	minEp := m1.epoch
	for _, ep := range g.currentOf("m1").Assigned.Active {
		minEp = min(minEp, ep)
	}
	if minEp <= 0 || minEp > old {
		t.Fatalf("assignment epochs: min %d, old epoch %d", minEp, old)
	}
	if err := g.ValidateOffsetCommit(h.st, &CommitIdentity{MemberID: "m1", GenerationOrEpoch: minEp - 1, APIVersion: 9,
		Partitions: map[string][]int32{"input": kept}}); err == nil {
		t.Fatal("epoch below every assignment epoch must be rejected")
	} else if pe, ok := err.(*PartitionErrors); !ok || pe.Code("input", kept[0]) != kerr.StaleMemberEpoch.Code {
		t.Fatalf("got %v", err)
	}
	// The assignment epochs survive replay.
	st := replayed(t, h, keyOrder)
	rg := st.Groups["g"].(*StreamsGroup)
	if err := rg.ValidateOffsetCommit(st, &CommitIdentity{MemberID: "m1", GenerationOrEpoch: old, APIVersion: 9,
		Partitions: map[string][]int32{"input": kept}}); err != nil {
		t.Fatalf("after replay: %v", err)
	}
}
