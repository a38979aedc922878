package groups

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/testutil"
)

// TestLagObservesCommitsByTopicID: an OffsetCommit that names topics by id (v10, what current
// clients send) is a commit in the partition's lag window, as one by name is.
func TestLagObservesCommitsByTopicID(t *testing.T) {
	b := testutil.Start(t)
	otTopics(t, b.Addr(), map[string]int32{"byid": 2})
	adm := kadm.NewClient(otClient(t, b.Addr()))
	offs := make(kadm.Offsets)
	offs.Add(kadm.Offset{Topic: "byid", Partition: 1, At: 0, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(otCtx(t), "by-id-group", offs)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	otEventually(t, "the commit is in the window", func() bool {
		w := b.Lag().Window("by-id-group", "byid", 1)
		return len(w) == 1 && w[0].Offset == 0
	})
	// The commit named its topic by id (counted once its response is written).
	otEventually(t, "one OffsetCommit v10", func() bool {
		return otMetrics(t, b)[`muster_requests_received_total{request="OffsetCommit",version="10"}`] == 1
	})
}
