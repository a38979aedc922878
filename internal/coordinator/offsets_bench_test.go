package coordinator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/testutil"
)

// BenchmarkExpirySweep measures one retention sweep (Kafka's cleanupGroupMetadata) over a shard
// holding 1,000 simple groups × 100 offsets that are all still within retention (the common
// case: the sweep reads everything and expires nothing).
func BenchmarkExpirySweep(b *testing.B) {
	h := coordinator.NewHarness(&coordinator.Config{OffsetMetadataMaxBytes: 4096, OffsetsRetention: time.Hour})
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
		h.Do(coordinator.Meta{APIVersion: 8}, coordinator.OffsetCommit(req))
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

// BenchmarkOffsetCommitFetchLoopback measures one OffsetCommit of 50 partitions followed by one
// OffsetFetch (all offsets) against an in-process broker over loopback; each commit is durable
// (fsync) before it is answered.
func BenchmarkOffsetCommitFetchLoopback(b *testing.B) {
	br := testutil.Start(b)
	addr := br.Addr()
	cl := benchClient(b, addr)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "bench", -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	for p := int32(0); p < 50; p++ {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	commit.Topics = append(commit.Topics, rt)
	if _, err := benchCreate(b, cl, "t", 50); err != nil {
		b.Fatal(err)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fg := kmsg.NewOffsetFetchRequestGroup()
	fg.Group = "bench"
	fetch.Groups = append(fetch.Groups, fg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range commit.Topics[0].Partitions {
			commit.Topics[0].Partitions[j].Offset = int64(i)
		}
		cr, err := commit.RequestWith(b.Context(), cl)
		if err != nil || cr.Topics[0].Partitions[0].ErrorCode != 0 {
			b.Fatalf("commit: %v", err)
		}
		fr, err := fetch.RequestWith(b.Context(), cl)
		if err != nil || len(fr.Groups[0].Topics[0].Partitions) != 50 {
			b.Fatalf("fetch: %v", err)
		}
	}
}
