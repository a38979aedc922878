package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/testutil"
)

// TestShareUnknownPartition: a partition the topic does not have is UNKNOWN_TOPIC_OR_PARTITION
// in ShareAcknowledge and ShareFetch acknowledgements, after the batches are validated (Kafka's
// KafkaApis.handleAcknowledgements checks the metadata cache), not INVALID_REQUEST; a partition
// that exists but holds nothing acquired stays INVALID_REQUEST (SharePartition.acknowledge).
func TestShareUnknownPartition(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "unkp", "unkp-t", 4)
	a := joinedMember(t, b.Addr(), "unkp", "member-a", "unkp-t")
	a.Fetch(a.FetchRequest(id, []int32{0}, 4, 0))

	r, err := a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, Partition: 5, First: 0, Last: 1, Types: []int8{1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].Partition != 5 {
		t.Fatalf("acknowledge answered %+v", r.Topics)
	}
	wantShareCode(t, "acknowledging partition 5", r.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	// A malformed batch of an unknown partition is INVALID_REQUEST first.
	r, _ = a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, Partition: 5, First: 3, Last: 1, Types: []int8{1}})
	wantShareCode(t, "malformed batch of partition 5", r.Topics[0].Partitions[0].ErrorCode, kerr.InvalidRequest)

	f, err := a.Fetch(a.FetchRequest(id, []int32{0, 5}, 4, 0, testutil.ShareAck{Topic: id, Partition: 5, First: 0, Last: 1, Types: []int8{1}}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]int16{}
	for _, tp := range f.Topics {
		for _, p := range tp.Partitions {
			got[p.Partition] = p.AcknowledgeErrorCode
		}
	}
	if code, ok := got[5]; !ok || code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("ShareFetch acknowledgement of partition 5: %v (partitions %v)", code, got)
	}
}
