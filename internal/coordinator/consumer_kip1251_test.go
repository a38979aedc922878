package coordinator

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestCGOffsetCommitKIP1251: a consumer-protocol member's commit with an older member epoch is
// accepted for partitions assigned at or before that epoch and STALE_MEMBER_EPOCH per
// partition otherwise; a newer epoch is stale as a whole; assignment epochs survive replay.
func TestCGOffsetCommitKIP1251(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	a := h.joinClient("g", "a", "t")
	b := h.joinClient("g", "b", "t")
	h.settle("g", []*cgClient{a, b})
	old := a.epoch
	var kept, others []int32
	for _, ps := range a.owned {
		kept = append(kept, ps...)
	}
	for _, ps := range b.owned {
		others = append(others, ps...)
	}
	if len(kept) == 0 || len(others) == 0 {
		t.Fatalf("partitions not split: %v %v", kept, others)
	}
	leave := hbReq("g", "b", b.epoch, b.owned)
	leave.MemberEpoch = -1
	h.hb(leave)
	b.gone = true
	h.settle("g", []*cgClient{a, b})
	if a.epoch <= old || countTP(a.owned) != 4 {
		t.Fatalf("a: epoch %d (was %d) owns %d", a.epoch, old, countTP(a.owned))
	}
	commit := func(epoch int32, parts []int32) map[topicPartition]int16 {
		resp := run(h, OffsetCommit(commitReq("g", "a", epoch, map[string][]int32{"t": parts})))
		return commitCodes(resp)
	}
	for tp, code := range commit(a.epoch, []int32{0, 1, 2, 3}) {
		if code != 0 {
			t.Fatalf("current epoch: %v → %d", tp, code)
		}
	}
	codes := commit(old, []int32{0, 1, 2, 3})
	for _, p := range kept {
		if codes[topicPartition{"t", p}] != 0 {
			t.Fatalf("partition %d assigned at epoch ≤ %d: %d", p, old, codes[topicPartition{"t", p}])
		}
	}
	for _, p := range others {
		if codes[topicPartition{"t", p}] != kerr.StaleMemberEpoch.Code {
			t.Fatalf("partition %d assigned after epoch %d: %d, want STALE_MEMBER_EPOCH", p, old, codes[topicPartition{"t", p}])
		}
	}
	if commit(a.epoch+1, kept)[topicPartition{"t", kept[0]}] != kerr.StaleMemberEpoch.Code {
		t.Fatal("a newer epoch is STALE_MEMBER_EPOCH")
	}
	// Unknown topic and an older commit without partitions are stale.
	g := h.group("g")
	err := g.ValidateOffsetCommit(h.st, &CommitIdentity{MemberID: "a", GenerationOrEpoch: old, APIVersion: 9,
		Partitions: map[string][]int32{"nope": {0}}})
	if pe, ok := err.(*PartitionErrors); !ok || pe.Code("nope", 0) != kerr.StaleMemberEpoch.Code {
		t.Fatalf("unknown topic: %v", err)
	}
	if err := g.ValidateOffsetCommit(h.st, &CommitIdentity{MemberID: "a", GenerationOrEpoch: old, APIVersion: 9}); ErrorCode(err) != kerr.StaleMemberEpoch.Code {
		t.Fatalf("older epoch without partitions: %v", err)
	}
	h.checkReplayEquivalence(1)
}

// TestCGCurrentAssignmentValueVersions: value version 0 (no assignment epochs) is still read
// and written when epochs are unknown; version 1 appends AssignmentEpochs.
func TestCGCurrentAssignmentValueVersions(t *testing.T) {
	tid := [16]byte{15: 7}
	v0 := &consumerCurrent{epoch: 5, prevEpoch: 4, state: MemberStable, assigned: topicPartitions{tid: {0, 1}}, pending: topicPartitions{}}
	const golden0 = "0000" + "00000005" + "00000004" + "00" +
		"00000001" + "00000000000000000000000000000007" + "00000002" + "00000000" + "00000001" +
		"00000000"
	if got := hex.EncodeToString(cgCurrentValue(v0)); got != golden0 {
		t.Fatalf("v0:\n got %s\nwant %s", got, golden0)
	}
	v1 := *v0
	v1.epochs = assignmentEpochs{}
	v1.epochs.set(tid, 0, 3)
	v1.epochs.set(tid, 1, 5)
	const golden1 = "0001" + "00000005" + "00000004" + "00" +
		"00000001" + "00000000000000000000000000000007" + "00000002" + "00000000" + "00000001" +
		"00000000" +
		"00000002" + "00000000000000000000000000000007" + "00000000" + "00000003" +
		"00000000000000000000000000000007" + "00000001" + "00000005"
	if got := hex.EncodeToString(cgCurrentValue(&v1)); got != golden1 {
		t.Fatalf("v1:\n got %s\nwant %s", got, golden1)
	}
	for _, c := range []struct {
		hex  string
		want *consumerCurrent
	}{{golden0, v0}, {golden1, &v1}} {
		h := newCGHarness(t)
		st := h.st
		val, _ := hex.DecodeString(c.hex)
		if err := st.replay(Record{Key: cgMetadataKey("g"), Value: cgMetadataValue(5, 0)}); err != nil {
			t.Fatal(err)
		}
		if err := st.replay(Record{Key: cgCurrentKey("g", "m"), Value: val}); err != nil {
			t.Fatal(err)
		}
		got := st.Groups["g"].(*ConsumerGroup).current("m")
		if !equalCurrent(got, c.want) || !bytes.Equal(cgCurrentValue(got), val) {
			t.Fatalf("decode %s: %+v", c.hex[:4], got)
		}
	}
}

// TestCGAssignmentEpochsFromV0: a member whose current assignment was written without
// assignment epochs (value version 0) gets its kept partitions bounded by its epoch at the next
// epoch move, so an older-epoch commit for them is accepted from then on.
func TestCGAssignmentEpochsFromV0(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t", 4)
	a := h.joinClient("g", "a", "t")
	h.settle("g", []*cgClient{a})
	g := h.group("g")
	// Drop the epochs as if the record had been written by a version without them.
	cur := *g.current("a")
	cur.epochs = assignmentEpochs{}
	g.writeCurrent(h.st, "a", &cur)
	old := a.epoch
	err := g.ValidateOffsetCommit(h.st, &CommitIdentity{MemberID: "a", GenerationOrEpoch: old - 1, APIVersion: 9, Partitions: map[string][]int32{"t": {0}}})
	if pe, ok := err.(*PartitionErrors); !ok || pe.Code("t", 0) != kerr.StaleMemberEpoch.Code {
		t.Fatalf("unknown assignment epoch must be stale: %v", err)
	}
	b := h.joinClient("g", "b", "t")
	h.settle("g", []*cgClient{a, b})
	var kept int32 = -1
	for _, ps := range a.owned {
		kept = ps[0]
	}
	if err := g.ValidateOffsetCommit(h.st, &CommitIdentity{MemberID: "a", GenerationOrEpoch: old, APIVersion: 9, Partitions: map[string][]int32{"t": {kept}}}); err != nil {
		t.Fatalf("kept partition bounded by epoch %d: %v", old, err)
	}
}
