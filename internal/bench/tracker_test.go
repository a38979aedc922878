package bench

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTrackerSettled(t *testing.T) {
	tr := newTracker(2, 4)
	if _, ok := tr.settled(); ok {
		t.Fatal("settled before any member joined")
	}
	tr.setEpoch(0, 1)
	tr.setParts(0, []int32{0, 1, 2, 3})
	tr.setEpoch(1, 1)
	tr.setParts(1, []int32{})
	// One epoch and every partition once, but one member owns everything: the state of a
	// KIP-848 group before its target assignment is computed. Not settled.
	if _, ok := tr.settled(); ok {
		t.Fatal("settled with an unbalanced split")
	}
	tr.setEpoch(0, 3)
	tr.setEpoch(1, 3)
	tr.setParts(0, []int32{0, 1})
	tr.setParts(1, []int32{2, 3})
	if e, ok := tr.settled(); !ok || e != 3 {
		t.Fatalf("settled = %d, %v; want epoch 3", e, ok)
	}
}

func TestTrackerBalanceWithMoreMembersThanPartitions(t *testing.T) {
	tr := newTracker(3, 2) // balanced: 0 or 1 partition each
	for i, ps := range [][]int32{{0}, {1}, {}} {
		tr.setEpoch(i, 2)
		tr.setParts(i, ps)
	}
	if _, ok := tr.settled(); !ok {
		t.Fatal("0/1/1 of 2 partitions over 3 members is balanced")
	}
	tr.setParts(0, []int32{0, 1})
	tr.setParts(1, []int32{})
	if _, ok := tr.settled(); ok {
		t.Fatal("2/0/0 is not balanced")
	}
}

func TestTrackerCoverage(t *testing.T) {
	tr := newTracker(2, 4)
	tr.setEpoch(0, 2)
	tr.setEpoch(1, 2)
	tr.setParts(0, []int32{0, 1, 2})
	tr.setParts(1, []int32{2, 3}) // partition 2 twice
	if _, ok := tr.settled(); ok {
		t.Fatal("settled with partition 2 owned twice")
	}
	tr.setParts(0, []int32{0, 1})
	if _, ok := tr.settled(); !ok {
		t.Fatalf("not settled: zero %d multi %d unbalanced %d epochs %v", tr.zero, tr.multi, tr.unbalanced, tr.byEpoch)
	}
	tr.setEpoch(1, 3)
	if _, ok := tr.settled(); ok {
		t.Fatal("settled with members at epochs 2 and 3")
	}
	tr.setEpoch(0, 3)
	tr.setParts(1, []int32{3, 7}) // 7 is outside the topic: ignored; 2 now unowned
	if _, ok := tr.settled(); ok {
		t.Fatal("settled with partition 2 unowned")
	}
}

func TestRoundRobinCoversOnce(t *testing.T) {
	var ms []kmsg.JoinGroupResponseMember
	for _, id := range []string{"c", "a", "b"} {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID = id
		ms = append(ms, m)
	}
	tr := newTracker(3, 10)
	for i, a := range roundRobin(ms, "t", 10) {
		var ca kmsg.ConsumerMemberAssignment
		if err := ca.ReadFrom(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		tr.setEpoch(i, 1)
		tr.setParts(i, ca.Topics[0].Partitions)
	}
	if _, ok := tr.settled(); !ok {
		t.Fatal("round robin does not split every partition exactly once, balanced")
	}
	if roundRobin(nil, "t", 10) != nil {
		t.Fatal("no members: want no assignment")
	}
}

func TestSkipTags(t *testing.T) {
	// Two tags: key 0 with 2 bytes, key 5 with 0 bytes, then the body byte 0x7f.
	b, err := skipTags([]byte{2, 0, 2, 0xaa, 0xbb, 5, 0, 0x7f})
	if err != nil || len(b) != 1 || b[0] != 0x7f {
		t.Fatalf("skipTags = %v, %v", b, err)
	}
	if _, err := skipTags([]byte{1, 0, 9, 1}); err == nil {
		t.Fatal("truncated tag accepted")
	}
	if _, err := skipTags(nil); err == nil {
		t.Fatal("empty header accepted")
	}
}
