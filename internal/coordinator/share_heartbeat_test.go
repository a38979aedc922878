package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareHeartbeatBlankIDs: Kafka's throwIfShareGroupHeartbeatRequestIsInvalid refuses ids of
// only whitespace as empty (Utils.throwIfEmptyString trims).
func TestShareHeartbeatBlankIDs(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(r *kmsg.ShareGroupHeartbeatRequest)
		msg  string
	}{
		{"blank member id", func(r *kmsg.ShareGroupHeartbeatRequest) { r.MemberID = "  " }, "MemberId can't be empty."},
		{"blank group id", func(r *kmsg.ShareGroupHeartbeatRequest) { r.GroupID = "\t" }, "GroupId can't be empty."},
		{"blank rack id", func(r *kmsg.ShareGroupHeartbeatRequest) { r.RackID = strp(" ") }, "RackId can't be empty."},
	} {
		r := kmsg.NewPtrShareGroupHeartbeatRequest()
		r.GroupID, r.MemberID, r.SubscribedTopicNames = "g", "m", []string{"t"}
		if err := validateShareHeartbeat(r); err != nil {
			t.Fatalf("valid request refused: %v", err)
		}
		c.mod(r)
		err := validateShareHeartbeat(r)
		if ErrorCode(err) != kerr.InvalidRequest.Code || ErrorMessage(err) == nil || *ErrorMessage(err) != c.msg {
			t.Errorf("%s: %v, want INVALID_REQUEST %q", c.name, err, c.msg)
		}
	}
}
