package bench

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/testutil"
)

// BenchmarkMusterCommitInProcess runs the commit-1 workload against an in-process muster (same
// defaults as `muster serve`: 50 shards, fsync on) so a CPU profile covers broker and load:
//
//	go test ./internal/bench -run XXX -bench MusterCommitInProcess -cpuprofile cpu.out
func BenchmarkMusterCommitInProcess(b *testing.B) {
	for _, conns := range []int{1, 64} {
		b.Run(strconv.Itoa(conns), func(b *testing.B) {
			m := testutil.Start(b, "offsets.topic.num.partitions=50")
			ctx := context.Background()
			if err := createTopic(ctx, m.Addr(), "bench-commit", 64); err != nil {
				b.Fatal(err)
			}
			cs, err := dialAll(m.Addr(), ClientRaw, conns)
			if err != nil {
				b.Fatal(err)
			}
			defer closeAll(cs)
			fn := commitOp(cs, "inproc-"+strconv.Itoa(conns), "bench-commit", 1)
			if err := warm(ctx, conns, 30*time.Second, fn); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			r := closedLoop(ctx, conns, time.Hour, int64(b.N), fn)
			b.StopTimer()
			if r.Errors > 0 {
				b.Fatalf("%d errors: %s", r.Errors, r.Note)
			}
			b.ReportMetric(r.ReqPerSec, "req/s")
			b.ReportMetric(r.P50ms, "p50-ms")
			b.ReportMetric(r.P99ms, "p99-ms")
		})
	}
}

// BenchmarkMusterProduceInProcess runs the produce workload against an in-process muster (CPU
// profile of the produce path): one op is one record of 1 KiB.
func BenchmarkMusterProduceInProcess(b *testing.B) {
	m := testutil.Start(b)
	o := Options{Duration: time.Hour, WarmTimeout: 30 * time.Second, RecordBytes: 1024, ProduceBytes: int64(b.N) * 1024}
	o.fill()
	b.ResetTimer()
	pr, _ := produceConsume(context.Background(), &o, Target{Name: "muster", Addr: m.Addr()}, "inproc-produce", 1)
	b.StopTimer()
	if pr.Skipped || pr.Errors > 0 {
		b.Fatalf("%+v", pr)
	}
	b.ReportMetric(pr.UnitsPerSec/1e6, "MB/s")
}

// BenchmarkMusterShareKgoInProcess runs share-kgo (one franz-go share consumer) against an
// in-process muster, so a CPU profile covers broker and client: one op is one record.
func BenchmarkMusterShareKgoInProcess(b *testing.B) {
	m := testutil.Start(b)
	o := Options{Duration: time.Hour, WarmTimeout: 30 * time.Second, ShareRecords: max(b.N, 1000)}
	o.fill()
	b.ResetTimer()
	r := shareKgo(context.Background(), &o, Target{Name: "muster", Addr: m.Addr()}, "inproc", 1)
	b.StopTimer()
	if r.Skipped {
		b.Fatalf("%+v", r)
	}
	b.ReportMetric(r.UnitsPerSec, "records/s")
}
