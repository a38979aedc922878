package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestDescribeGroupsConsumerGroupWithClassicMembers: DescribeGroups (API 15) describes only classic
// groups (Kafka's GroupMetadataManager.describeGroups); a consumer group is Dead with
// GROUP_ID_NOT_FOUND ("is not a classic group.") on v6+ and no error before, even when some of its
// members use the classic protocol, and without members.
func TestDescribeGroupsConsumerGroupWithClassicMembers(t *testing.T) {
	h := newCGHarness(t)
	h.topics.Add("t1", 4)
	a := h.joinClient("g", "a", "t1")
	h.settle("g", []*cgClient{a})
	cl := &cgClassicClient{group: "g"}
	h.classicJoinSync(cl, "t1")
	g := h.group("g")
	if g.NumMembers() != 2 || g.members[cl.id] == nil || g.members[cl.id].classic == nil {
		t.Fatal("the consumer group must hold a classic-protocol member")
	}
	d := describeGroup(h.st, "g", 6)
	if d.State != "Dead" || d.ErrorCode != kerr.GroupIDNotFound.Code || deref(d.ErrorMessage) != "Group g is not a classic group." || len(d.Members) != 0 {
		t.Fatalf("v6: %+v (message %s)", d, deref(d.ErrorMessage))
	}
	d = describeGroup(h.st, "g", 5)
	if d.State != "Dead" || d.ErrorCode != 0 || d.ErrorMessage != nil || len(d.Members) != 0 {
		t.Fatalf("v5: %+v", d)
	}
	d = describeGroup(h.st, "nope", 6)
	if d.State != "Dead" || d.ErrorCode != kerr.GroupIDNotFound.Code || deref(d.ErrorMessage) != "Group nope not found." {
		t.Fatalf("unknown group: %+v", d)
	}
}
