package coordinator

import (
	"testing"

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
