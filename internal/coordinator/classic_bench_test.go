package coordinator_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// BenchmarkClassicRebalance measures one full classic rebalance on the shard state machine: n
// known members rejoin (the leader first), the leader syncs an assignment for all, the
// followers sync; one op = one rebalance of n members.
func BenchmarkClassicRebalance(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			h := clHarness(func(c *coordinator.Config) { c.Classic.MaxSize = n + 1 })
			ids := make([]string, n)
			for i := range ids { // v3: no MEMBER_ID_REQUIRED round trip
				c := clJoin(h, 3, "")
				if i == 0 {
					ids[0] = c.Resp.MemberID
					continue
				}
				_ = c
			}
			// Complete the setup rebalance so every member is known.
			g := h.St.Groups[clGroup].(*coordinator.ClassicGroup)
			_ = g
			var calls []*joinRes
			members := map[string]bool{}
			join := func(id string) *joinRes { return clJoin(h, 3, id) }
			calls = append(calls, join(ids[0]))
			for _, c := range calls {
				if c.Done() {
					for _, m := range c.Resp.Members {
						members[m.MemberID] = true
					}
				}
			}
			ids = ids[:0]
			for id := range members {
				ids = append(ids, id)
			}
			if len(ids) != n {
				b.Fatalf("setup: %d members, want %d", len(ids), n)
			}
			leader := h.St.Groups[clGroup].(*coordinator.ClassicGroup).Leader()
			assign := map[string]string{}
			for _, id := range ids {
				assign[id] = "assignment-bytes-for-" + id
			}
			gen := h.St.Groups[clGroup].(*coordinator.ClassicGroup).Generation()
			clSync(h, 3, leader, gen, nil, assign)
			for _, id := range ids {
				if id != leader {
					clSync(h, 3, id, gen, nil, nil)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				clJoin(h, 3, leader)
				for _, id := range ids {
					if id != leader {
						clJoin(h, 3, id)
					}
				}
				gen++
				clSync(h, 3, leader, gen, nil, assign)
				for _, id := range ids {
					if id != leader {
						clSync(h, 3, id, gen, nil, nil)
					}
				}
			}
			b.StopTimer()
			if g := h.St.Groups[clGroup].(*coordinator.ClassicGroup); g.State() != coordinator.ClassicStable || g.Generation() != gen {
				b.Fatalf("state %v generation %d, want Stable %d", g.State(), g.Generation(), gen)
			}
		})
	}
}

// BenchmarkClassicHeartbeat measures one heartbeat of a member of a Stable 100-member group.
func BenchmarkClassicHeartbeat(b *testing.B) {
	h := clHarness()
	first := clJoin(h, 3, "")
	r := first.Resp
	clSync(h, 3, r.MemberID, r.Generation, nil, nil)
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 4, clGroup, r.MemberID, r.Generation
	meta := clMeta(4, "cli")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if c := coordtest.DoMeta(h, meta, coordinator.Heartbeat(req)); c.Resp.ErrorCode != 0 {
			b.Fatal("heartbeat failed")
		}
	}
}
