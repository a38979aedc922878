package coordinator

import (
	"fmt"
	"testing"
)

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
