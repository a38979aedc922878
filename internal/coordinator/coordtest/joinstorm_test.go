package coordtest_test

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// TestSimulateConsumerJoinStorm: the join-storm simulation settles with every partition
// owned once, with few target assignments.
func TestSimulateConsumerJoinStorm(t *testing.T) {
	r, err := coordtest.SimulateConsumerJoinStorm(coordtest.Config(), 50, 1000, 20)
	if err != nil {
		t.Fatal(err)
	}
	if r.Assignments > 3 || r.Settled <= 0 {
		t.Fatalf("join storm: %+v", r)
	}
}

// BenchmarkCGJoinStorm: N members join one group over 10k partitions at once, then heartbeat
// every heartbeat interval (manual clock) until Stable; reports the settled clock time, the
// heartbeat rounds and the target assignments computed, with the default
// group.consumer.assignment.interval.ms (1000) and with 0 (a target per epoch bump).
func BenchmarkCGJoinStorm(b *testing.B) {
	for _, interval := range []string{"1000", "0"} {
		for _, n := range []int{100, 1000, 3000} {
			if interval == "0" && n > 1000 {
				continue // O(members²): minutes
			}
			b.Run(fmt.Sprintf("interval=%s/members=%d", interval, n), func(b *testing.B) {
				var r coordtest.JoinStormResult
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					var err error
					r, err = coordtest.SimulateConsumerJoinStorm(coordtest.Config("group.consumer.assignment.interval.ms="+interval), n, 10000, 50)
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(r.Settled.Seconds(), "settled-clock-s")
				b.ReportMetric(float64(r.Steps), "rounds")
				b.ReportMetric(float64(r.Assignments), "assignments")
			})
		}
	}
}

// BenchmarkConsumerJoinStorm: N KIP-848 members join one group subscribed to one topic of
// 10 000 partitions at the same instant (default group.consumer.assignment.interval.ms), then
// every member heartbeats once per heartbeat interval (manual clock) until each one is at the
// group's target assignment epoch and owns exactly its target assignment
// (coordtest.SimulateConsumerJoinStorm checks both). One op is a whole storm on a fresh shard; the
// metrics are per storm: heartbeats sent, rounds, target assignments computed, and ns per member.
func BenchmarkConsumerJoinStorm(b *testing.B) {
	for _, n := range []int{100, 1000, 3000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			var r coordtest.JoinStormResult
			cpu0 := cpuTime()
			for b.Loop() {
				var err error
				if r, err = coordtest.SimulateConsumerJoinStorm(coordtest.Config(), n, 10000, 50); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Heartbeats), "heartbeats")
			b.ReportMetric(float64(r.Steps), "rounds")
			b.ReportMetric(float64(r.Assignments), "assignments")
			b.ReportMetric(r.Settled.Seconds(), "settled-clock-s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/member")
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
