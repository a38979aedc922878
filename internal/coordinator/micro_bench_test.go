package coordinator

import (
	"log/slog"
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
	v := &OffsetValue{Offset: 123456789, LeaderEpoch: 7, Metadata: "", CommitMs: 1_700_000_000_000}
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
	val := offsetValue(&OffsetValue{Offset: 123456789, LeaderEpoch: 7, CommitMs: 1_700_000_000_000})
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

// BenchmarkOffsetCommit50 is the core's share of a 50-partition OffsetCommit of a simple group:
// validation, 50 records encoded and applied, the response; then what the engine does per
// batch on the shard: take the effects and freeze the offsets for the published snapshot (so
// the next commit copies the nodes it touches, as in the broker).
func BenchmarkOffsetCommit50(b *testing.B) {
	st := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation, req.RetentionTimeMillis = 9, "orders-consumer", -1, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	for p := int32(0); p < 50; p++ {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	op := OffsetCommit(req)
	w := &benchWaiter[*kmsg.OffsetCommitResponse]{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for p := range req.Topics[0].Partitions {
			req.Topics[0].Partitions[p].Offset = int64(i)
		}
		st.SetNow(time.UnixMilli(1_700_000_000_000 + int64(i)))
		op(st, NewCall(Meta{APIVersion: 9}, Waiter[*kmsg.OffsetCommitResponse](w)))
		_ = st.TakeEffects()
		_ = st.Offsets.Freeze()
	}
}

// BenchmarkOffsetFetchAll1000 answers an OffsetFetch of every offset of a group with 1000
// committed partitions from a frozen version (what the adapters do off the shard).
func BenchmarkOffsetFetchAll1000(b *testing.B) {
	st := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
	for p := int32(0); p < 1000; p++ {
		st.WriteOffset("orders-consumer", "orders", p, &OffsetValue{Offset: int64(p), LeaderEpoch: -1, CommitMs: 1})
	}
	v := st.Offsets.Freeze()
	fg := FetchGroup{Group: "orders-consumer", MemberEpoch: -1}
	b.ReportAllocs()
	for b.Loop() {
		if out := FetchOffsetsFrom(v, fg); len(out.Topics[0].Partitions) != 1000 {
			b.Fatal(len(out.Topics[0].Partitions))
		}
	}
}

type benchWaiter[T any] struct{}

func (benchWaiter[T]) Set(T, error) {}
func (benchWaiter[T]) Release()     {}
func (benchWaiter[T]) Fail(error)   {}
