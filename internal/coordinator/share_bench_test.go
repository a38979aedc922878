package coordinator_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// BenchmarkShareAcquireAccept is one share consumer's cycle on the core: acquire 500 records,
// then accept them (the state record is written), in one shard.
func BenchmarkShareAcquireAccept(b *testing.B) {
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	h := coordtest.New(cfg)
	id := h.WithTopics(nil).Add("t", 1)
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = "g", "m", []string{"t"}
	coordtest.Do(h, coordinator.ShareGroupHeartbeat(hb))
	p := coordinator.SharePartitionID{TopicID: id, Partition: 0}
	hw := int64(0)
	fetch := func() []coordinator.ShareAcquired {
		hw += 500
		r := coordtest.Do(h, coordinator.Share(&coordinator.ShareRequest{Group: "g", Member: "m", MaxRecords: 500,
			Fetch: []coordinator.ShareFetchPartition{{SharePartitionID: p, HighWatermark: hw, StartOffset: -1}}}))
		return r.Resp.Acquired
	}
	fetch()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		acq := fetch()
		if len(acq) == 0 {
			b.Fatal("nothing acquired")
		}
		r := acq[0].Ranges[0]
		coordtest.Do(h, coordinator.Share(&coordinator.ShareRequest{Group: "g", Member: "m",
			Acks: []coordinator.ShareAckPartition{{SharePartitionID: p, Batches: []coordinator.ShareAckBatch{{First: r.First, Last: r.Last, Types: []int8{1}}}}}}))
		if i%1000 == 0 {
			h.Log = h.Log[:0]
		}
	}
}
