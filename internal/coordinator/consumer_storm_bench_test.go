package coordinator

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkConsumerJoinStorm: N KIP-848 members join one group subscribed to one topic of
// 10 000 partitions at the same instant (default group.consumer.assignment.interval.ms), then
// every member heartbeats once per heartbeat interval (manual clock) until each one is at the
// group's target assignment epoch and owns exactly its target assignment
// (SimulateConsumerJoinStorm checks both). One op is a whole storm on a fresh shard; the
// metrics are per storm: heartbeats sent, rounds, target assignments computed, and ns per member.
func BenchmarkConsumerJoinStorm(b *testing.B) {
	for _, n := range []int{100, 1000, 3000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			var r JoinStormResult
			cpu0 := benchCPUTime()
			for b.Loop() {
				var err error
				if r, err = SimulateConsumerJoinStorm(n, 10000, 50); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Heartbeats), "heartbeats")
			b.ReportMetric(float64(r.Steps), "rounds")
			b.ReportMetric(float64(r.Assignments), "assignments")
			b.ReportMetric(r.Settled.Seconds(), "settled-clock-s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
			b.ReportMetric(float64((benchCPUTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/member")
		})
	}
}

// steadyCGGroup builds a Stable group of members members subscribed to two topics of
// partitions partitions each (default assignment interval: one target for the joins, one after
// the interval) and returns, for every member, the steady heartbeat it sends (its epoch and
// the partitions it owns, as a Java or franz-go consumer reports them).
func steadyCGGroup(b *testing.B, members int, partitions int32) (*cgHarness, []*kmsg.ConsumerGroupHeartbeatRequest) {
	h := newCGHarness(b, "group.consumer.assignment.interval.ms=1000")
	h.topics.add("t1", partitions)
	h.topics.add("t2", partitions)
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
	c := &Call{Meta: Meta{ClientID: &cid, ClientHost: "/127.0.0.1"}}
	bt := &batch{}
	ops := make([]func(*State, *Call), len(reqs))
	for i, r := range reqs {
		ops[i] = ConsumerGroupHeartbeat(r)
	}
	records := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bt.records, bt.replies = bt.records[:0], bt.replies[:0]
		h.st.batch = bt
		c.replied = false
		ops[i%len(ops)](h.st, c)
		h.st.batch = nil
		records += len(bt.records)
		if r := c.resp.(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != 0 {
			b.Fatalf("error %d", r.ErrorCode)
		}
	}
	if records != 0 {
		b.Fatalf("a steady heartbeat wrote %d records", records)
	}
}
