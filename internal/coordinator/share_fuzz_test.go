package coordinator_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// shareRecords are the records of a small share group: membership and a share-partition with
// acknowledged, archived and released records.
func shareRecords() []coordinator.Record {
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	h := coordtest.New(cfg)
	topics := h.WithTopics(nil)
	id := topics.Add("t", 2)
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = "sg", "m1", []string{"t"}
	coordtest.Do(h, coordinator.ShareGroupHeartbeat(hb))
	p := coordinator.SharePartitionID{TopicID: id, Partition: 0}
	for _, hw := range []int64{10, 20} { // the group starts at the end of the log, then records arrive
		coordtest.Do(h, coordinator.Share(&coordinator.ShareRequest{Group: "sg", Member: "m1", MaxRecords: 10,
			Fetch: []coordinator.ShareFetchPartition{{SharePartitionID: p, HighWatermark: hw, StartOffset: -1}}}))
	}
	coordtest.Do(h, coordinator.Share(&coordinator.ShareRequest{Group: "sg", Member: "m1",
		Acks: []coordinator.ShareAckPartition{{SharePartitionID: p, Batches: []coordinator.ShareAckBatch{{First: 11, Last: 13, Types: []int8{1, 3, 2}}}}}}))
	return h.Log
}

// FuzzShareReplay: replaying arbitrary share group record values (with the records of a real
// share group around them) never panics: a corrupt value is an error.
func FuzzShareReplay(f *testing.F) {
	recs := shareRecords()
	for _, r := range recs {
		if r.Value != nil {
			f.Add(r.Key, r.Value)
		}
	}
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if value == nil {
			value = []byte{}
		}
		h := coordtest.New(cfg)
		h.Log = append(append(h.Log, recs...), coordinator.Record{Key: key, Value: value})
		if st, err := h.Reload(1); err == nil && st == nil {
			t.Fatal("Reload returned neither a state nor an error")
		}
	})
}
