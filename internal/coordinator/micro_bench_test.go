package coordinator

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
)

// Micro-benchmarks of the coordinator's hot paths (docs/benchmarks.md): offset record encoding
// and decoding, shard replay on load, and a classic join storm on one group.

func microBenchConfig(overrides ...string) *Config {
	cfg := ConfigFrom(config.Defaults(overrides...))
	cfg.Shards = 1
	return cfg
}

// BenchmarkRecordOffsetCommitEncode encodes one OffsetCommitKey + OffsetCommitValue (v3) record.
func BenchmarkRecordOffsetCommitEncode(b *testing.B) {
	v := &OffsetValue{Offset: 123456789, LeaderEpoch: 7, Metadata: "", CommitTime: time.UnixMilli(1_700_000_000_000)}
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		k := offsetKey("orders-consumer", "orders", int32(i&63))
		val := offsetValue(v)
		n += len(k) + len(val)
	}
	b.SetBytes(int64(n / max(b.N, 1)))
}

// BenchmarkRecordOffsetCommitDecode decodes one OffsetCommitKey + OffsetCommitValue record.
func BenchmarkRecordOffsetCommitDecode(b *testing.B) {
	key := offsetKey("orders-consumer", "orders", 17)
	val := offsetValue(&OffsetValue{Offset: 123456789, LeaderEpoch: 7, CommitTime: time.UnixMilli(1_700_000_000_000)})
	b.SetBytes(int64(len(key) + len(val)))
	b.ReportAllocs()
	for b.Loop() {
		var k kmsg.OffsetCommitKey
		var v kmsg.OffsetCommitValue
		if err := k.ReadFrom(key); err != nil {
			b.Fatal(err)
		}
		if err := v.ReadFrom(val); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShardReplayOffsets replays the live offset records of a shard (100 groups, N/100
// partitions each, shuffled as a store load may present them) into a fresh State: the CPU cost
// of loading a shard after a restart, without the store's read.
func BenchmarkShardReplayOffsets(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			h := NewHarness(microBenchConfig())
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
				if c := h.Do(Meta{APIVersion: 9}, OffsetCommit(req)); !c.Done() || c.Err() != nil {
					b.Fatalf("commit: done=%v err=%v", c.Done(), c.Err())
				}
			}
			recs := h.Latest(1)
			if len(recs) != groups*per {
				b.Fatalf("%d live records, want %d", len(recs), groups*per)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				st := NewState(0, h.St.Cfg, slog.New(slog.DiscardHandler))
				st.Loading = true
				for _, r := range recs {
					if err := st.replay(r); err != nil {
						b.Fatal(err)
					}
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
	h := NewHarness(microBenchConfig())
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
		h.Do(Meta{APIVersion: 9}, OffsetCommit(req))
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
			cpu0 := benchCPUTime()
			for b.Loop() {
				h := NewHarness(microBenchConfig())
				calls := make([]*Call, n)
				for i := 0; i < n; i++ {
					cid := fmt.Sprintf("consumer-%d", i)
					first := h.Do(Meta{APIVersion: 9, ClientID: &cid}, JoinGroup(microJoinReq("")))
					resp, ok := first.Response().(*kmsg.JoinGroupResponse)
					if !ok || resp.MemberID == "" {
						b.Fatalf("first join: %+v err=%v", first.Response(), first.Err())
					}
					calls[i] = h.Do(Meta{APIVersion: 9, ClientID: &cid}, JoinGroup(microJoinReq(resp.MemberID)))
				}
				// The initial delay re-arms while members keep arriving (up to the rebalance
				// timeout), as in Kafka; step the clock until the join phase completes.
				for k := 0; k < 1000 && !calls[0].Done(); k++ {
					h.Advance(h.St.Cfg.InitialRebalanceDelay)
				}
				for i, c := range calls {
					if !c.Done() {
						b.Fatalf("member %d has no JoinGroup response", i)
					}
					if r := c.Response().(*kmsg.JoinGroupResponse); r.ErrorCode != 0 {
						b.Fatalf("member %d: error %d", i, r.ErrorCode)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "joins/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
			b.ReportMetric(float64((benchCPUTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/member")
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
