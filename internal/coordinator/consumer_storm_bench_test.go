package coordinator

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// steadyCGGroup builds a Stable group of members members subscribed to two topics of
// partitions partitions each (default assignment interval: one target for the joins, one after
// the interval) and returns, for every member, the steady heartbeat it sends (its epoch and
// the partitions it owns, as a Java or franz-go consumer reports them).
func steadyCGGroup(b *testing.B, members int, partitions int32) (*cgHarness, []*kmsg.ConsumerGroupHeartbeatRequest) {
	h := newCGHarness(b, "group.consumer.assignment.interval.ms=1000")
	h.topics.Add("t1", partitions)
	h.topics.Add("t2", partitions)
	clients := make([]*cgClient, 0, members)
	for i := 0; i < members; i++ {
		clients = append(clients, h.joinClient("g", fmt.Sprintf("member-%05d", i), "t1", "t2"))
	}
	for round := 0; round < 10 && h.group("g").StateName() != ConsumerStateStable; round++ {
		h.advance(2 * time.Second)
		for _, c := range clients {
			h.beat(c)
		}
	}
	if s := h.group("g").StateName(); s != ConsumerStateStable {
		b.Fatalf("group is %s", s)
	}
	for _, c := range clients {
		h.beat(c) // everyone has seen the final epoch
	}
	reqs := make([]*kmsg.ConsumerGroupHeartbeatRequest, len(clients))
	for i, c := range clients {
		reqs[i] = hbReq("g", c.id, c.epoch, c.owned)
	}
	return h, reqs
}

// BenchmarkConsumerHeartbeatSteady is one steady ConsumerGroupHeartbeat of a Stable member (it
// owns its target at the assignment epoch; nothing changes) in a group of 1000 members over
// 2×1000 partitions: only the handler (requests are built beforehand, the Call and batch are
// reused), so allocs/op is the handler's (the response itself: 2).
func BenchmarkConsumerHeartbeatSteady(b *testing.B) {
	h, reqs := steadyCGGroup(b, 1000, 1000)
	cid := "client"
	res := &testResult[*kmsg.ConsumerGroupHeartbeatResponse]{}
	c := NewCall(Meta{ClientID: &cid, ClientHost: "/127.0.0.1"}, Waiter[*kmsg.ConsumerGroupHeartbeatResponse](res))
	ops := make([]func(*State, *Call[*kmsg.ConsumerGroupHeartbeatResponse]), len(reqs))
	for i, r := range reqs {
		ops[i] = ConsumerGroupHeartbeat(r)
	}
	records := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.replied, res.set = false, false
		ops[i%len(ops)](h.st, c)
		records += len(h.st.out.Records)
		h.st.DiscardEffects()
		if r := res.resp; r.ErrorCode != 0 {
			b.Fatalf("error %d", r.ErrorCode)
		}
	}
	if records != 0 {
		b.Fatalf("a steady heartbeat wrote %d records", records)
	}
}
