package coordinator

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// benchCPUTime is the process CPU time (user+system, GC included).
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func setupCG1000(b *testing.B) (*cgHarness, []*cgClient) {
	h := newCGHarness(b)
	h.topics.add("t1", 1000)
	h.topics.add("t2", 1000)
	clients := make([]*cgClient, 0, 1000)
	for i := 0; i < 1000; i++ {
		clients = append(clients, h.joinClient("g", fmt.Sprintf("member-%04d", i), "t1", "t2"))
	}
	h.settle("g", clients)
	return h, clients
}

// BenchmarkCGHeartbeatSteady measures a steady-state heartbeat (no change) on a Stable group of
// 1000 members and 2000 partitions.
func BenchmarkCGHeartbeatSteady(b *testing.B) {
	h, clients := setupCG1000(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := clients[i%len(clients)]
		h.st.batch = &batch{}
		ConsumerGroupHeartbeat(hbReq("g", c.id, c.epoch, c.owned))(h.st, nil)
		h.st.batch = nil
	}
}

// BenchmarkCGJoinLeave measures a member joining and leaving a Stable group of 1000 members:
// each is a group epoch bump with a new target assignment (2000 partitions).
func BenchmarkCGJoinLeave(b *testing.B) {
	h, _ := setupCG1000(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.st.batch = &batch{}
		ConsumerGroupHeartbeat(joinReq("g", "extra", "t1", "t2"))(h.st, nil)
		ConsumerGroupHeartbeat(hbReq("g", "extra", -1, nil))(h.st, nil)
		h.st.batch = nil
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
				var r JoinStormResult
				cpu0 := benchCPUTime()
				for i := 0; i < b.N; i++ {
					var err error
					r, err = SimulateConsumerJoinStorm(n, 10000, 50, "group.consumer.assignment.interval.ms="+interval)
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((benchCPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(r.Settled.Seconds(), "settled-clock-s")
				b.ReportMetric(float64(r.Steps), "rounds")
				b.ReportMetric(float64(r.Assignments), "assignments")
			})
		}
	}
}
