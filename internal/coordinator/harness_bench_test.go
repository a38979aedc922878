package coordinator_test

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// Benchmarks of whole operations on one shard, driven by coordtest.Harness.

func benchConfig() *coordinator.Config {
	cfg := coordtest.Config()
	cfg.Shards = 1
	return cfg
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkShardReplayOffsets replays the live offset records of a shard (100 groups, N/100
// partitions each, shuffled as a store load may present them) into a fresh State: the CPU cost
// of loading a shard after a restart, without the store's read.
func BenchmarkShardReplayOffsets(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			h := coordtest.New(benchConfig())
			const groups = 100
			per := n / groups
			for g := 0; g < groups; g++ {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Version, req.Group, req.Generation, req.RetentionTimeMillis = 9, "group-"+strconv.Itoa(g), -1, -1
				t := kmsg.NewOffsetCommitRequestTopic()
				t.Topic = "topic"
				for p := 0; p < per; p++ {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch = int32(p), int64(p)*100, 3
					t.Partitions = append(t.Partitions, rp)
				}
				req.Topics = append(req.Topics, t)
				if c := coordtest.DoMeta(h, coordinator.Meta{APIVersion: 9}, coordinator.OffsetCommit(req)); !c.Done() || c.Err != nil {
					b.Fatalf("commit: done=%v err=%v", c.Done(), c.Err)
				}
			}
			recs := h.Latest(1)
			if len(recs) != groups*per {
				b.Fatalf("%d live records, want %d", len(recs), groups*per)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				st, err := coordtest.Replay(0, h.Cfg, recs)
				if err != nil {
					b.Fatal(err)
				}
				if st.Offsets.Count() != len(recs) {
					b.Fatalf("%d offsets after replay", st.Offsets.Count())
				}
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkShardReload is Harness.Reload of a shard with 10k offsets: computing the live set,
// shuffling it and replaying it.
func BenchmarkShardReload(b *testing.B) {
	h := coordtest.New(benchConfig())
	for g := 0; g < 10; g++ {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation, req.RetentionTimeMillis = 9, "group-"+strconv.Itoa(g), -1, -1
		t := kmsg.NewOffsetCommitRequestTopic()
		t.Topic = "topic"
		for p := 0; p < 1000; p++ {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = int32(p), int64(p), -1
			t.Partitions = append(t.Partitions, rp)
		}
		req.Topics = append(req.Topics, t)
		coordtest.DoMeta(h, coordinator.Meta{APIVersion: 9}, coordinator.OffsetCommit(req))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := h.Reload(int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassicJoinStorm is N consumers joining one empty classic group (JoinGroup v9: the
// MEMBER_ID_REQUIRED round trip, the rejoin with the id, then the initial rebalance delay
// elapsing, re-armed while members arrive): one op is the whole storm until every member has its JoinGroup response.
func BenchmarkClassicJoinStorm(b *testing.B) {
	for _, n := range []int{100, 1000, 3000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				h := coordtest.New(benchConfig())
				calls := make([]*coordtest.Result[*kmsg.JoinGroupResponse], n)
				for i := 0; i < n; i++ {
					cid := fmt.Sprintf("consumer-%d", i)
					first := coordtest.DoMeta(h, coordinator.Meta{APIVersion: 9, ClientID: &cid}, coordinator.JoinGroup(microJoinReq("")))
					resp := first.Resp
					if resp == nil || resp.MemberID == "" {
						b.Fatalf("first join: %+v err=%v", resp, first.Err)
					}
					calls[i] = coordtest.DoMeta(h, coordinator.Meta{APIVersion: 9, ClientID: &cid}, coordinator.JoinGroup(microJoinReq(resp.MemberID)))
				}
				// The initial delay re-arms while members keep arriving (up to the rebalance
				// timeout), as in Kafka; step the clock until the join phase completes.
				for k := 0; k < 1000 && !calls[0].Done(); k++ {
					h.Advance(h.Cfg.Classic.InitialRebalanceDelay)
				}
				for i, c := range calls {
					if !c.Done() {
						b.Fatalf("member %d has no JoinGroup response", i)
					}
					if r := c.Resp; r.ErrorCode != 0 {
						b.Fatalf("member %d: error %d", i, r.ErrorCode)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "joins/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/member")
		})
	}
}

func microJoinReq(memberID string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group = "storm"
	req.MemberID = memberID
	req.SessionTimeoutMillis = 45000
	req.RebalanceTimeoutMillis = 300000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	p.Metadata = []byte{0, 3, 0, 0, 0, 1, 0, 6, 't', 'o', 'p', 'i', 'c', 's', 0, 0, 0, 0}
	req.Protocols = append(req.Protocols, p)
	return req
}
