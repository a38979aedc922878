package coordinator

import (
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkHistoryMemory measures the heap a rebalance history event costs: 1,000 groups × the
// default bound of 100 events, each event with one cause naming a member (the common case), as
// a loaded shard holds them. It reports bytes per event (in memory; each is also one record of
// about 100 bytes in the store).
func BenchmarkHistoryMemory(b *testing.B) {
	const groups, perGroup = 1000, 100
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st := NewState(0, &Config{History: HistoryConfig{MaxEvents: perGroup, LogInterval: time.Hour}}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		st.Now = time.Unix(1_800_000_000, 0)
		for g := 0; g < groups; g++ {
			gid := "group-" + strconv.Itoa(g)
			for e := 0; e < perGroup; e++ {
				st.recordRebalance(gid, TypeConsumer, int32(e), int32(e+1), []RebalanceCause{{Kind: CauseMemberJoined,
					Member: "consumer-" + strconv.Itoa(e) + "-6d1f3c0a-9b2e-4c57-8a14-3f0e2d1c9b7a", New: "orders,payments"}})
			}
			st.TakeEffects()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(groups*perGroup), "bytes/event")
		runtime.KeepAlive(st)
	}
}
