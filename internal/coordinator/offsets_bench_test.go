package coordinator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// BenchmarkExpirySweep measures one retention sweep (Kafka's cleanupGroupMetadata) over a shard
// holding 1,000 simple groups × 100 offsets that are all still within retention (the common
// case: the sweep reads everything and expires nothing).
func BenchmarkExpirySweep(b *testing.B) {
	cfg := coordtest.Config()
	cfg.Offsets = coordinator.OffsetsConfig{MetadataMaxBytes: 4096, Retention: time.Hour}
	h := coordtest.New(cfg)
	for g := 0; g < 1000; g++ {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 8, fmt.Sprintf("g%04d", g), -1
		for t := 0; t < 10; t++ {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = fmt.Sprintf("topic-%d", t)
			for p := int32(0); p < 10; p++ {
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset = p, int64(p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		coordtest.DoMeta(h, coordinator.Meta{APIVersion: 8}, coordinator.OffsetCommit(req))
	}
	if n := h.St.Offsets.Count(); n != 100_000 {
		b.Fatalf("%d offsets", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := coordinator.ExpireOffsets(h.St); n != 0 {
			b.Fatalf("expired %d", n)
		}
	}
}
