package coordinator

import (
	"fmt"
	"testing"
)

// BenchmarkStreamsConverge200 measures op-level convergence of a 200-member streams group: 200
// members (100 processes of 2) join a group with two stateful subtopologies of 200 tasks each
// (one standby replica), then heartbeat round-robin until the group is Stable. One op is the
// whole convergence; heartbeats/op counts the heartbeats it took.
func BenchmarkStreamsConverge200(b *testing.B) {
	const members = 200
	topo := topology(0,
		topoSub{id: "0", sources: []string{"in-a"}, changelogs: []string{"app-a-changelog"}},
		topoSub{id: "1", sources: []string{"in-b"}, changelogs: []string{"app-b-changelog"}},
	)
	var beats int
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h := newStreamsHarness(b, newTestTopics("in-a", 200, "in-b", 200, "app-a-changelog", 200, "app-b-changelog", 200),
			"group.streams.num.standby.replicas=1")
		ms := make([]*tMember, members)
		for j := range ms {
			ms[j] = newTMember(fmt.Sprintf("m%03d", j), fmt.Sprintf("p%03d", j/2), topo)
			h.beat("g", ms[j])
		}
		rounds := h.converge("g", ms, 50)
		if rounds < 0 {
			b.Fatal("did not converge")
		}
		beats += members + rounds*members
	}
	b.ReportMetric(float64(beats)/float64(b.N), "heartbeats/op")
}

// BenchmarkStreamsHeartbeatStable200 measures one steady-state heartbeat of a member of a
// Stable 200-member group.
func BenchmarkStreamsHeartbeatStable200(b *testing.B) {
	topo := topology(0, topoSub{id: "0", sources: []string{"in-a"}, changelogs: []string{"app-a-changelog"}})
	h := newStreamsHarness(b, newTestTopics("in-a", 400, "app-a-changelog", 400), "group.streams.num.standby.replicas=1")
	ms := make([]*tMember, 200)
	for j := range ms {
		ms[j] = newTMember(fmt.Sprintf("m%03d", j), fmt.Sprintf("p%03d", j/2), topo)
		h.beat("g", ms[j])
	}
	if h.converge("g", ms, 50) < 0 {
		b.Fatal("did not converge")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.records = h.records[:0]
		h.beat("g", ms[i%len(ms)])
	}
}

// BenchmarkStreamsHeartbeatSteadyHandler is BenchmarkStreamsHeartbeatStable200 without the
// request building and harness: the requests are built beforehand, the Call and batch reused, so
// allocs/op is the handler's own. It fails if a steady heartbeat writes a record.
func BenchmarkStreamsHeartbeatSteadyHandler(b *testing.B) {
	topo := topology(0, topoSub{id: "0", sources: []string{"in-a"}, changelogs: []string{"app-a-changelog"}})
	h := newStreamsHarness(b, newTestTopics("in-a", 400, "app-a-changelog", 400), "group.streams.num.standby.replicas=1")
	ms := make([]*tMember, 200)
	for j := range ms {
		ms[j] = newTMember(fmt.Sprintf("m%03d", j), fmt.Sprintf("p%03d", j/2), topo)
		h.beat("g", ms[j])
	}
	if h.converge("g", ms, 50) < 0 {
		b.Fatal("did not converge")
	}
	for _, m := range ms {
		h.beat("g", m) // every member has seen the final epochs
	}
	ops := make([]func(*State, *Call[*StreamsHeartbeatResult]), len(ms))
	for i, m := range ms {
		ops[i] = StreamsGroupHeartbeat(m.request("g"))
	}
	cid := "client"
	res := &testResult[*StreamsHeartbeatResult]{}
	c := NewCall(Meta{APIVersion: 1, ClientID: &cid, ClientHost: "/127.0.0.1"}, Waiter[*StreamsHeartbeatResult](res))
	records := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.replied, res.set = false, false
		ops[i%len(ops)](h.st, c)
		records += len(h.st.out.Records)
		h.st.DiscardEffects()
		if r := res.resp.Response; r.ErrorCode != 0 {
			b.Fatalf("error %d", r.ErrorCode)
		}
	}
	if records != 0 {
		b.Fatalf("a steady heartbeat wrote %d records", records)
	}
}
