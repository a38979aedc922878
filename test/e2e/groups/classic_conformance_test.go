package groups

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// Classic-protocol answers checked over loopback against Kafka's rules for the corner cases
// clients and tools meet (GroupCoordinatorService, GroupMetadataManager).

// TestLeaveGroupUnknownGroup: a LeaveGroup for a group that does not exist answers every member
// UNKNOWN_MEMBER_ID with no group-level error on v3+, and UNKNOWN_MEMBER_ID at the top level on
// v0–v2 (Kafka's GroupCoordinatorService.leaveGroup).
func TestLeaveGroupUnknownGroup(t *testing.T) {
	b := testutil.Start(t)
	inst := "inst-1"
	for _, v := range []int16{3, 5} {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group = "no-such-group"
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m-1"}, {InstanceID: &inst}}
		resp := otSend[*kmsg.LeaveGroupResponse](t, b.Addr(), v, req)
		if resp.ErrorCode != 0 || len(resp.Members) != 2 {
			t.Fatalf("v%d: %v, %d members", v, kerr.ErrorForCode(resp.ErrorCode), len(resp.Members))
		}
		for i, m := range resp.Members {
			if m.MemberID != req.Members[i].MemberID || (m.InstanceID == nil) != (req.Members[i].InstanceID == nil) ||
				m.ErrorCode != kerr.UnknownMemberID.Code {
				t.Errorf("v%d member %d: %s/%v %v", v, i, m.MemberID, m.InstanceID, kerr.ErrorForCode(m.ErrorCode))
			}
		}
	}
	for _, v := range []int16{0, 2} {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group, req.MemberID = "no-such-group", "m-1"
		if resp := otSend[*kmsg.LeaveGroupResponse](t, b.Addr(), v, req); resp.ErrorCode != kerr.UnknownMemberID.Code {
			t.Errorf("v%d: %v, want UNKNOWN_MEMBER_ID", v, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
}
