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
	h.topics.Add("t1", 1000)
	h.topics.Add("t2", 1000)
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
		ConsumerGroupHeartbeat(hbReq("g", c.id, c.epoch, c.owned))(h.st, nil)
		h.st.TakeEffects()
	}
}

// BenchmarkCGJoinLeave measures a member joining and leaving a Stable group of 1000 members:
// each is a group epoch bump with a new target assignment (2000 partitions).
func BenchmarkCGJoinLeave(b *testing.B) {
	h, _ := setupCG1000(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ConsumerGroupHeartbeat(joinReq("g", "extra", "t1", "t2"))(h.st, nil)
		ConsumerGroupHeartbeat(hbReq("g", "extra", -1, nil))(h.st, nil)
		h.st.TakeEffects()
	}
}
