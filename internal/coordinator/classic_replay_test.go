package coordinator_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// clClient is one simulated classic consumer: what it knows from its last answers.
type clClient struct {
	instance *string
	member   string
	gen      int32
	join     *joinRes
	sync     *syncRes
}

// TestClassicReplayEquivalence is the replay-equivalence property for classic groups: after every
// step of a random sequence of joins, syncs, heartbeats, leaves, offset commits and clock
// advances, a fresh shard replaying the latest record per key (shuffled) has the same durable
// view as the live shard.
func TestClassicReplayEquivalence(t *testing.T) {
	seeds := 120
	if testing.Short() {
		seeds = 20
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		clReplaySequence(t, seed, 150)
	}
}

func clReplaySequence(t *testing.T, seed int64, steps int) {
	rnd := rand.New(rand.NewSource(seed))
	h := clHarness(func(c *coordinator.Config) {
		c.Classic.InitialRebalanceDelay = time.Duration(rnd.Intn(2)) * 3 * time.Second
		c.Classic.MaxSize = 3 + rnd.Intn(3)
		c.Offsets.Retention = 90 * time.Second
	})
	groups := []string{"g", "h"}
	var clients []*clClient
	for i := 0; i < 5; i++ {
		c := &clClient{}
		if i >= 3 {
			inst := fmt.Sprintf("inst-%d", i)
			c.instance = &inst
		}
		clients = append(clients, c)
	}
	protoSets := [][]string{{"range"}, {"range", "roundrobin"}, {"roundrobin", "range"}, {"sticky"}}
	versions := []int16{3, 4, 5, 7, 9}
	var trace []string
	var waiting []clWaiting // every call not answered yet
	for step := 0; step < steps; step++ {
		group := groups[0]
		if rnd.Intn(5) == 0 {
			group = groups[1] // a second group on the same shard, for offsets and simple groups
		}
		c := clients[rnd.Intn(len(clients))]
		var what string
		switch op := rnd.Intn(100); {
		case op < 30:
			v := versions[rnd.Intn(len(versions))]
			req := kmsg.NewPtrJoinGroupRequest()
			req.Version, req.Group, req.MemberID, req.InstanceID = v, "g", c.member, c.instance
			req.SessionTimeoutMillis = int32(6000 + rnd.Intn(3)*5000)
			req.RebalanceTimeoutMillis = int32(5000 + rnd.Intn(3)*10000)
			req.ProtocolType = "consumer"
			for _, n := range protoSets[rnd.Intn(len(protoSets))] {
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = n, []byte(fmt.Sprintf("%s-%d", n, rnd.Intn(2)))
				req.Protocols = append(req.Protocols, p)
			}
			c.join = coordtest.DoMeta(h, clMeta(v, "c"), coordinator.JoinGroup(req))
			waiting = append(waiting, clWaiting{c.join, "join"})
			what = fmt.Sprintf("join v%d member=%q", v, c.member)
		case op < 50:
			req := kmsg.NewPtrSyncGroupRequest()
			req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 3, "g", c.member, c.gen, c.instance
			if g, ok := h.St.Groups["g"].(*coordinator.ClassicGroup); ok && g.Leader() == c.member {
				for _, o := range clients {
					if o.member != "" && rnd.Intn(4) != 0 {
						a := kmsg.NewSyncGroupRequestGroupAssignment()
						a.MemberID, a.MemberAssignment = o.member, []byte(fmt.Sprintf("a%d", rnd.Intn(100)))
						req.GroupAssignment = append(req.GroupAssignment, a)
					}
				}
			}
			c.sync = coordtest.DoMeta(h, clMeta(3, "c"), coordinator.SyncGroup(req))
			waiting = append(waiting, clWaiting{c.sync, "sync"})
			what = fmt.Sprintf("sync member=%q gen=%d", c.member, c.gen)
		case op < 60:
			req := kmsg.NewPtrHeartbeatRequest()
			req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 4, "g", c.member, c.gen, c.instance
			coordtest.DoMeta(h, clMeta(4, "c"), coordinator.Heartbeat(req))
			what = "heartbeat " + c.member
		case op < 67:
			v := int16(rnd.Intn(6))
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Version, req.Group, req.MemberID = v, "g", c.member
			if v >= 3 {
				m := kmsg.NewLeaveGroupRequestMember()
				m.MemberID, m.InstanceID = c.member, c.instance
				if c.instance != nil && rnd.Intn(2) == 0 {
					m.MemberID = ""
				}
				req.Members = append(req.Members, m)
			}
			coordtest.DoMeta(h, clMeta(v, "c"), coordinator.LeaveGroup(req))
			c.member, c.gen = "", -1
			what = "leave"
		case op < 82:
			v := int16(2 + rnd.Intn(8))
			req := kmsg.NewPtrOffsetCommitRequest()
			req.Version, req.Group = v, group
			req.MemberID, req.Generation, req.InstanceID = c.member, c.gen, c.instance
			if rnd.Intn(3) == 0 {
				req.MemberID, req.Generation, req.InstanceID = "", -1, nil
			}
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = []string{"t1", "t2"}[rnd.Intn(2)]
			for p := int32(0); p < int32(1+rnd.Intn(3)); p++ {
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset = p, int64(rnd.Intn(1000))
				rp.LeaderEpoch = int32(rnd.Intn(3) - 1)
				if v >= 2 && v <= 4 && rnd.Intn(2) == 0 {
					req.RetentionTimeMillis = int64(1000 * (1 + rnd.Intn(100)))
				} else {
					req.RetentionTimeMillis = -1
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			coordtest.DoMeta(h, clMeta(v, "c"), coordinator.OffsetCommit(req))
			what = fmt.Sprintf("commit v%d %s gen=%d", v, group, req.Generation)
		case op < 87 && op >= 85:
			// A crash and reload: the run continues on the replayed state.
			if err := h.Restart(seed + int64(step)); err != nil {
				t.Fatalf("seed %d step %d: restart: %v", seed, step, err)
			}
			for _, cl := range clients {
				cl.join, cl.sync = nil, nil // answered NOT_COORDINATOR by the failed shard
			}
			waiting = nil
			what = "restart"
		case op < 85:
			// An offset-retention sweep: expires offsets and deletes emptied groups.
			coordtest.DoMeta(h, coordinator.Meta{}, func(st *coordinator.State, call *coordinator.Call[coordinator.Ack]) {
				coordinator.ExpireOffsets(st)
				call.Reply(st, coordinator.Ack{})
			})
			what = "expire offsets"
		default:
			d := time.Duration(rnd.Intn(40_000)) * time.Millisecond
			h.Advance(d)
			what = "advance " + d.String()
		}
		trace = append(trace, what)
		for _, cl := range clients {
			clObserve(cl)
		}
		waiting = clCheckInvariants(t, h, waiting, fmt.Sprintf("seed %d step %d (%s)", seed, step, what), trace)
		rseed := seed*1000 + int64(step)
		re, err := h.Reload(rseed)
		if err != nil {
			t.Fatalf("seed %d step %d: reload: %v\ntrace: %v", seed, step, err, trace)
		}
		live, got := coordtest.DurableView(h.St), coordtest.DurableView(re)
		if !reflect.DeepEqual(live, got) {
			t.Fatalf("seed %d step %d (%s): durable views differ\n%s\ntrace:\n%v", seed, step, what, clDiff(live, got), trace)
		}
	}
}

// clObserve updates a client from its answered calls, as a real consumer would.
func clObserve(c *clClient) {
	if c.join != nil && c.join.Done() {
		if r := c.join.Resp; r != nil {
			switch {
			case r.ErrorCode == 0:
				c.member, c.gen = r.MemberID, r.Generation
			case r.ErrorCode == kerr.MemberIDRequired.Code:
				c.member = r.MemberID
			case r.ErrorCode == kerr.UnknownMemberID.Code || r.ErrorCode == kerr.FencedInstanceID.Code:
				c.member, c.gen = "", -1
			}
		}
		c.join = nil
	}
	if c.sync != nil && c.sync.Done() {
		if r := c.sync.Resp; r != nil && r.ErrorCode == kerr.UnknownMemberID.Code {
			c.member, c.gen = "", -1
		}
		c.sync = nil
	}
}

func clDiff(a, b map[string]any) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	out := ""
	for _, k := range ks {
		if !reflect.DeepEqual(a[k], b[k]) {
			out += fmt.Sprintf("  %s\n    live:     %+v\n    reloaded: %+v\n", k, a[k], b[k])
		}
	}
	return out
}

type clWaiting struct {
	call interface{ Done() bool }
	kind string
}

// clCheckInvariants checks the live classic group: a JoinGroup waits only in PreparingRebalance
// and a SyncGroup only in CompletingRebalance (no request is ever left hanging); Empty has no
// members; CompletingRebalance and Stable have a leader among the members and a protocol every
// member supports. It returns the calls still waiting.
func clCheckInvariants(t *testing.T, h *coordtest.Harness, waiting []clWaiting, where string, trace []string) []clWaiting {
	t.Helper()
	g, _ := h.St.Groups["g"].(*coordinator.ClassicGroup)
	var still []clWaiting
	for _, w := range waiting {
		if w.call.Done() {
			continue
		}
		still = append(still, w)
		want := coordinator.ClassicPreparingRebalance
		if w.kind == "sync" {
			want = coordinator.ClassicCompletingRebalance
		}
		if g == nil || g.State() != want {
			state := "no group"
			if g != nil {
				state = g.State().String()
			}
			t.Fatalf("%s: a %s call is left waiting in state %s\ntrace: %v", where, w.kind, state, trace)
		}
	}
	if g == nil {
		return still
	}
	if err := g.CheckCounters(); err != nil {
		t.Fatalf("%s: %v\ntrace: %v", where, err, trace)
	}
	switch g.State() {
	case coordinator.ClassicEmpty:
		if g.NumMembers() != 0 {
			t.Fatalf("%s: Empty group with %d members", where, g.NumMembers())
		}
	case coordinator.ClassicCompletingRebalance, coordinator.ClassicStable:
		if !g.HasMember(g.Leader()) {
			t.Fatalf("%s: leader %q is not a member\ntrace: %v", where, g.Leader(), trace)
		}
		if g.ProtocolName() == "" || !g.AllMembersSupport(g.ProtocolName()) {
			t.Fatalf("%s: selected protocol %q not supported by every member\ntrace: %v", where, g.ProtocolName(), trace)
		}
	}
	return still
}
