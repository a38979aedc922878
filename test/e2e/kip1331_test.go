package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/streams/topodesc/topodesctest"
	"github.com/muster-io/muster/internal/streams/topology"
	"github.com/muster-io/muster/internal/testutil"
)

// KIP-1331 (docs/kip-1331.md) end to end: a real in-process broker with the http plugin pointed at
// an in-process remote store (topodesctest.Store) with fault injection, driven by raw kmsg
// requests.

var tdStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type tdEnv struct {
	t     *testing.T
	ctx   context.Context
	store *topodesctest.Store
	clock *coordtest.ManualClock
	b     *testutil.Broker
	br    *kgo.Broker
	opts  []string
}

// startTD starts a broker with the http plugin (or without a plugin when store is nil) on a
// manual clock; extra are further config overrides.
func startTD(t *testing.T, withPlugin bool, extra ...string) *tdEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e := &tdEnv{t: t, ctx: ctx, clock: coordtest.NewManualClock(tdStart)}
	opts := []string{"group.streams.initial.rebalance.delay.ms=0"}
	if withPlugin {
		e.store = topodesctest.NewStore()
		t.Cleanup(e.store.Close)
		opts = append(opts, "group.streams.topology.description.plugin.class=http",
			"group.streams.topology.description.plugin.http.url="+e.store.URL)
	}
	e.opts = append(opts, extra...)
	e.b = testutil.StartIn(t, t.TempDir(), e.clock, e.opts...)
	e.connect()
	return e
}

func (e *tdEnv) connect(opts ...kgo.Opt) {
	e.br = e.brokerOf(newClient(e.t, e.b.Addr(), opts...))
}

func (e *tdEnv) brokerOf(cl *kgo.Client) *kgo.Broker {
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(e.ctx, cl)
	if err != nil || len(meta.Brokers) != 1 {
		e.t.Fatalf("metadata: %v", err)
	}
	return cl.Broker(int(meta.Brokers[0].NodeID))
}

func (e *tdEnv) restart() {
	e.b = e.b.Restart()
	e.connect()
}

// tdMember is a raw streams member.
type tdMember struct {
	id            string
	epoch         int32
	topologyEpoch int32
}

func (m *tdMember) request(group string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, m.id, m.epoch
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		p := "proc-" + m.id
		req.ProcessID = &p
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		topo.Epoch = m.topologyEpoch
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID = "0"
		sub.SourceTopics = []string{"words"}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub}
		req.Topology = &topo
	}
	return req
}

// heartbeat sends one heartbeat on br and returns TopologyDescriptionRequired; it fails the test
// on an error response.
func (e *tdEnv) heartbeatOn(br *kgo.Broker, group string, m *tdMember) bool {
	e.t.Helper()
	resp, err := m.request(group).RequestWith(e.ctx, br)
	if err != nil {
		e.t.Fatalf("heartbeat: %v", err)
	}
	if resp.ErrorCode != 0 {
		e.t.Fatalf("heartbeat %s/%s: error %d %v", group, m.id, resp.ErrorCode, strp(resp.ErrorMessage))
	}
	m.epoch = resp.MemberEpoch
	return resp.TopologyDescriptionRequired
}

func (e *tdEnv) heartbeat(group string, m *tdMember) bool { return e.heartbeatOn(e.br, group, m) }

func (e *tdEnv) leave(group string, m *tdMember) {
	e.t.Helper()
	req := m.request(group)
	req.MemberEpoch, req.Topology, req.RebalanceTimeoutMillis = -1, nil, -1
	resp, err := req.RequestWith(e.ctx, e.br)
	if err != nil || resp.ErrorCode != 0 || resp.TopologyDescriptionRequired {
		e.t.Fatalf("leave: %v %+v", err, resp)
	}
}

func strp(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func tdDescription(t *testing.T) *topology.Description {
	t.Helper()
	d, err := topology.NewBuilder().Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"words"}, "KSTREAM-AGGREGATE-0000000001").
		Processor("KSTREAM-AGGREGATE-0000000001", []string{"counts"}, "KSTREAM-SINK-0000000002").
		Sink("KSTREAM-SINK-0000000002", "counts-output").Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *tdEnv) push(group, member string, epoch int32) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
	e.t.Helper()
	return e.pushOn(e.ctx, e.br, group, member, epoch)
}

func (e *tdEnv) pushOn(ctx context.Context, br *kgo.Broker, group, member string, epoch int32) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
	req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	req.Group, req.MemberID, req.TopologyEpoch = group, member, epoch
	req.TopologyDescription = tdDescription(e.t).ToRequest()
	resp, err := req.RequestWith(ctx, br)
	if err != nil {
		e.t.Errorf("push: %v", err)
		return &kmsg.StreamsGroupTopologyDescriptionUpdateResponse{ErrorCode: -1}
	}
	return resp
}

func (e *tdEnv) describe(group string, include bool) kmsg.StreamsGroupDescribeResponseGroup {
	e.t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups, req.IncludeTopologyDescription = []string{group}, include
	resp, err := req.RequestWith(e.ctx, e.br)
	if err != nil || len(resp.Groups) != 1 {
		e.t.Fatalf("describe: %v", err)
	}
	return resp.Groups[0]
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var code int16
	if want != nil {
		code = want.Code
	}
	if got != code {
		t.Fatalf("%s: error code %d (%v), want %d (%v)", what, got, kerr.ErrorForCode(got), code, want)
	}
}

// metric returns the value line of a Prometheus metric from /metrics.
func (e *tdEnv) metric(name string) string {
	e.t.Helper()
	resp, err := http.Get("http://" + e.b.HTTPAddr() + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimPrefix(l, name+" ")
		}
	}
	return ""
}

// eventually polls cond (real time) for a bounded while.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Solicit → push → AVAILABLE and no more solicitation; push validation; describe statuses; metrics.
func TestKIP1331SolicitPushDescribe(t *testing.T) {
	e := startTD(t, true)
	a := &tdMember{id: "member-a"}
	if !e.heartbeat("app", a) {
		t.Fatal("first v1 heartbeat of a group with a topology was not solicited")
	}
	if e.heartbeat("app", a) {
		t.Fatal("solicited again while the first solicitation is in flight")
	}
	if d := e.describe("app", true); d.ErrorCode != 0 || d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionNotStored || d.TopologyDescription != nil {
		t.Fatalf("describe before push: %+v", d)
	}

	// Push validation.
	r := e.push("app", "", 0)
	wantCode(t, "empty member", r.ErrorCode, kerr.InvalidRequest)
	r = e.push("app", "nobody", 0)
	wantCode(t, "unknown member", r.ErrorCode, kerr.UnknownMemberID)
	r = e.push("no-such-group", "member-a", 0)
	wantCode(t, "unknown group", r.ErrorCode, kerr.UnknownMemberID)
	r = e.push("app", "member-a", 7)
	wantCode(t, "wrong epoch", r.ErrorCode, kerr.InvalidRequest)
	if want := "Topology epoch 7 does not match the group's current topology epoch 0."; strp(r.ErrorMessage) != want {
		t.Fatalf("wrong epoch message %q", strp(r.ErrorMessage))
	}
	if n := e.store.Calls(http.MethodPut); n != 0 {
		t.Fatalf("plugin called %d times for rejected pushes", n)
	}

	r = e.push("app", "member-a", 0)
	wantCode(t, "push", r.ErrorCode, nil)
	if _, ok := e.store.Stored("app", 0); !ok {
		t.Fatal("store has no description after a successful push")
	}
	for i := 0; i < 3; i++ {
		if e.heartbeat("app", a) {
			t.Fatal("solicited after a successful push")
		}
		e.clock.Advance(30 * time.Second)
	}
	gets := e.store.Calls(http.MethodGet)
	d := e.describe("app", false)
	if d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionNotRequested || d.TopologyDescription != nil || e.store.Calls(http.MethodGet) != gets {
		t.Fatalf("describe without the flag: status %d, plugin calls %d→%d", d.TopologyDescriptionStatus, gets, e.store.Calls(http.MethodGet))
	}
	d = e.describe("app", true)
	if d.ErrorCode != 0 || d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionAvailable {
		t.Fatalf("describe after push: %+v", d)
	}
	got, err := topology.FromDescribe(d.TopologyDescription)
	if err != nil || !got.Equal(tdDescription(t)) {
		t.Fatalf("described topology differs: %v %+v", err, got)
	}
	// An unknown group keeps its error and NOT_REQUESTED.
	if d := e.describe("ghost", true); d.ErrorCode == 0 || d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionNotRequested {
		t.Fatalf("describe unknown group: %+v", d)
	}
	for name, want := range map[string]string{"set_success": "1", "get_success": "1", "set_error": "0"} {
		if v := e.metric("muster_group_coordinator_streams_group_topology_description_" + name + "_total"); v != want {
			t.Fatalf("metric %s = %q, want %s", name, v, want)
		}
	}
}

// Solicitation: v0 heartbeats are never solicited and do not consume the group's solicitation.
func TestKIP1331V0NeverSolicited(t *testing.T) {
	e := startTD(t, true)
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(88, 0)
	v0 := e.brokerOf(newClient(t, e.b.Addr(), kgo.MaxVersions(vs)))
	old := &tdMember{id: "old"}
	for i := 0; i < 3; i++ {
		if e.heartbeatOn(v0, "app", old) {
			t.Fatal("v0 heartbeat solicited")
		}
	}
	if !e.heartbeat("app", &tdMember{id: "new"}) {
		t.Fatal("v1 heartbeat not solicited after v0 heartbeats")
	}
}

// Solicitation: at most one solicitation per in-flight window with several members; the next one
// after the window when nobody pushed.
func TestKIP1331OneSolicitationPerWindow(t *testing.T) {
	e := startTD(t, true, "group.streams.topology.description.inflight.timeout.ms=5000")
	ms := []*tdMember{{id: "m1"}, {id: "m2"}, {id: "m3"}}
	count := func(rounds int) int {
		n := 0
		for i := 0; i < rounds; i++ {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for _, m := range ms {
				wg.Add(1)
				go func(m *tdMember) {
					defer wg.Done()
					resp, err := m.request("app").RequestWith(e.ctx, e.br)
					if err != nil || resp.ErrorCode != 0 {
						t.Errorf("heartbeat: %v %+v", err, resp)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					m.epoch = resp.MemberEpoch
					if resp.TopologyDescriptionRequired {
						n++
					}
				}(m)
			}
			wg.Wait()
		}
		return n
	}
	if n := count(4); n != 1 {
		t.Fatalf("%d solicitations in one window, want 1", n)
	}
	e.clock.Advance(5 * time.Second)
	if n := count(3); n != 1 {
		t.Fatalf("%d solicitations in the second window, want 1", n)
	}
}

// Push: a permanent failure (413 too large, 400 invalid) is answered 135 with a message naming
// KIP-1331's error (TOPOLOGY_DESCRIPTION_TOO_LARGE, INVALID_REQUEST), never re-solicited at that
// epoch — also after a restart — but a new topology epoch is.
func TestKIP1331PermanentFailure(t *testing.T) {
	e := startTD(t, true, "group.streams.topology.description.inflight.timeout.ms=1000")
	for _, tc := range []struct {
		group  string
		status int
		name   string
	}{{"big", 413, "TOPOLOGY_DESCRIPTION_TOO_LARGE"}, {"bad", 400, "INVALID_REQUEST"}} {
		m := &tdMember{id: "m-" + tc.group}
		if !e.heartbeat(tc.group, m) {
			t.Fatalf("%s: not solicited", tc.group)
		}
		e.store.FailNext(http.MethodPut, tc.status, 1)
		r := e.push(tc.group, m.id, 0)
		wantCode(t, tc.group+" push", r.ErrorCode, kerr.StreamsTopologyDescriptionUpdateFailed)
		if !strings.HasPrefix(strp(r.ErrorMessage), tc.name) {
			t.Fatalf("%s: message %q does not name %s", tc.group, strp(r.ErrorMessage), tc.name)
		}
		for i := 0; i < 3; i++ {
			e.clock.Advance(2 * time.Second)
			if e.heartbeat(tc.group, m) {
				t.Fatalf("%s: re-solicited after a permanent failure", tc.group)
			}
		}
	}
	e.restart()
	m := &tdMember{id: "m-big2"}
	if e.heartbeat("big", m) {
		t.Fatal("re-solicited at the failed epoch after a restart")
	}
	// A topology upgrade (epoch 1) is solicited.
	up := &tdMember{id: "m-big3", topologyEpoch: 1}
	if !e.heartbeat("big", up) {
		t.Fatal("new topology epoch not solicited")
	}
	if d := e.describe("big", false); d.Topology == nil || d.Topology.Epoch != 1 {
		t.Fatalf("topology not upgraded: %+v", d.Topology)
	}
	wantCode(t, "push at the new epoch", e.push("big", up.id, 1).ErrorCode, nil)
}

// Push: a transient failure (500) arms the back-off: no solicitation inside the window, a
// re-solicitation after it, the window doubling per consecutive failure.
func TestKIP1331TransientFailureBackoff(t *testing.T) {
	e := startTD(t, true, "group.streams.topology.description.backoff.initial.ms=10000",
		"group.streams.topology.description.backoff.max.ms=60000")
	m := &tdMember{id: "m"}
	if !e.heartbeat("app", m) {
		t.Fatal("not solicited")
	}
	e.store.FailNext(http.MethodPut, 500, 2)
	r := e.push("app", m.id, 0)
	wantCode(t, "transient push", r.ErrorCode, kerr.StreamsTopologyDescriptionUpdateFailed)
	e.clock.Advance(9 * time.Second)
	if e.heartbeat("app", m) {
		t.Fatal("solicited inside the back-off window")
	}
	e.clock.Advance(time.Second)
	if !e.heartbeat("app", m) {
		t.Fatal("not re-solicited after the back-off window")
	}
	wantCode(t, "second transient push", e.push("app", m.id, 0).ErrorCode, kerr.StreamsTopologyDescriptionUpdateFailed)
	e.clock.Advance(10 * time.Second)
	if e.heartbeat("app", m) {
		t.Fatal("window did not double after a second consecutive failure")
	}
	e.clock.Advance(10 * time.Second)
	if !e.heartbeat("app", m) {
		t.Fatal("not re-solicited after the doubled window")
	}
	wantCode(t, "push", e.push("app", m.id, 0).ErrorCode, nil)
	// Later heartbeats (inside the session timeout, so the group never empties and the cleanup
	// leaves it alone) are not solicited.
	for i := 0; i < 5; i++ {
		e.clock.Advance(30 * time.Second)
		if e.heartbeat("app", m) {
			t.Fatal("solicited after success")
		}
	}
	if v := e.metric("muster_group_coordinator_streams_group_topology_description_set_error_total"); v != "2" {
		t.Fatalf("set_error %q", v)
	}
}

// Describe: plugin data loss (GET 404 while the broker believed it stored) answers NOT_STORED,
// clears StoredTopologyEpoch, and the next heartbeat re-solicits; a plugin error answers ERROR
// with the group's ErrorCode untouched.
func TestKIP1331DescribeErrorAndDataLoss(t *testing.T) {
	e := startTD(t, true)
	m := &tdMember{id: "m"}
	e.heartbeat("app", m)
	wantCode(t, "push", e.push("app", m.id, 0).ErrorCode, nil)

	e.store.FailNext(http.MethodGet, 500, 1)
	d := e.describe("app", true)
	if d.ErrorCode != 0 || d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionError || d.TopologyDescription != nil {
		t.Fatalf("plugin error: %+v", d)
	}
	if e.heartbeat("app", m) {
		t.Fatal("a get error re-solicited")
	}

	e.store.FailNext(http.MethodGet, 404, 1)
	d = e.describe("app", true)
	if d.ErrorCode != 0 || d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionNotStored {
		t.Fatalf("data loss: %+v", d)
	}
	eventually(t, "re-solicitation after data loss", func() bool { return e.heartbeat("app", m) })
	wantCode(t, "re-push", e.push("app", m.id, 0).ErrorCode, nil)
	if d := e.describe("app", true); d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionAvailable {
		t.Fatalf("after re-push: status %d", d.TopologyDescriptionStatus)
	}
}

// Deletion: DeleteGroups calls deleteTopology before tombstoning; a failing delete still deletes
// the group.
func TestKIP1331DeleteGroups(t *testing.T) {
	e := startTD(t, true)
	for _, g := range []string{"ok", "fails"} {
		m := &tdMember{id: "m-" + g}
		e.heartbeat(g, m)
		wantCode(t, "push "+g, e.push(g, m.id, 0).ErrorCode, nil)
		e.leave(g, m)
	}
	// A group without a stored description is deleted without a plugin call.
	plain := &tdMember{id: "m-plain"}
	e.heartbeat("plain", plain)
	e.leave("plain", plain)

	del := func(g string) {
		t.Helper()
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{g}
		resp, err := req.RequestWith(e.ctx, e.br)
		if err != nil || len(resp.Groups) != 1 {
			t.Fatalf("delete groups: %v", err)
		}
		wantCode(t, "delete "+g, resp.Groups[0].ErrorCode, nil)
		if d := e.describe(g, true); d.ErrorCode != kerr.GroupIDNotFound.Code {
			t.Fatalf("%s still exists: %+v", g, d)
		}
	}
	del("ok")
	if _, ok := e.store.Stored("ok", 0); ok || e.store.Calls(http.MethodDelete) != 1 {
		t.Fatalf("description of a deleted group not deleted (DELETE calls %d)", e.store.Calls(http.MethodDelete))
	}
	e.store.FailNext(http.MethodDelete, 500, 1)
	del("fails")
	if e.store.Calls(http.MethodDelete) != 2 {
		t.Fatalf("DELETE calls %d, want 2", e.store.Calls(http.MethodDelete))
	}
	del("plain")
	if e.store.Calls(http.MethodDelete) != 2 {
		t.Fatal("deleteTopology called for a group without a stored description")
	}
	if v := e.metric("muster_group_coordinator_streams_group_topology_description_delete_error_total"); v != "1" {
		t.Fatalf("delete_error %q", v)
	}

	// Order: while deleteTopology hangs, the group still exists; once the plugin call ends (here
	// by failing), the group is deleted.
	m := &tdMember{id: "m-ordered"}
	e.heartbeat("ordered", m)
	wantCode(t, "push ordered", e.push("ordered", m.id, 0).ErrorCode, nil)
	e.leave("ordered", m)
	e.store.FailNext(http.MethodDelete, topodesctest.Hang, 1)
	done := make(chan int16, 1)
	br := e.brokerOf(newClient(t, e.b.Addr()))
	go func() {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"ordered"}
		resp, err := req.RequestWith(e.ctx, br)
		if err != nil || len(resp.Groups) != 1 {
			done <- -1
			return
		}
		done <- resp.Groups[0].ErrorCode
	}()
	eventually(t, "deleteTopology call", func() bool { return e.store.Calls(http.MethodDelete) == 3 })
	if d := e.describe("ordered", false); d.ErrorCode != 0 {
		t.Fatalf("group tombstoned before deleteTopology completed: %+v", d)
	}
	e.store.Close()
	if code := <-done; code != 0 {
		t.Fatalf("delete after a failed deleteTopology: code %d", code)
	}
	if d := e.describe("ordered", false); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("ordered still exists: %+v", d)
	}
}

// Deletion: the periodic cleanup deletes the description of an Empty group whose offsets expired,
// clears StoredTopologyEpoch, and the group then expires; a failed delete is retried next cycle and
// keeps the group.
func TestKIP1331CleanupThenExpiry(t *testing.T) {
	e := startTD(t, true, "offsets.retention.check.interval.ms=60000")
	m := &tdMember{id: "m"}
	e.heartbeat("app", m)
	wantCode(t, "push", e.push("app", m.id, 0).ErrorCode, nil)
	e.leave("app", m)

	// Three failing cycles: the group is kept through the retention sweeps of those ticks.
	e.store.FailNext(http.MethodDelete, 500, 3)
	eventually(t, "three failed cleanup cycles", func() bool {
		e.clock.Advance(time.Minute)
		return e.store.Calls(http.MethodDelete) >= 3
	})
	if d := e.describe("app", false); d.ErrorCode != 0 {
		t.Fatalf("group expired while its description was still stored: %+v", d)
	}
	eventually(t, "retried cleanup", func() bool {
		e.clock.Advance(time.Minute)
		_, stored := e.store.Stored("app", 0)
		return !stored
	})
	eventually(t, "group expiry", func() bool {
		e.clock.Advance(time.Minute)
		return e.describe("app", false).ErrorCode == kerr.GroupIDNotFound.Code
	})
	if v := e.metric("muster_group_coordinator_streams_group_topology_description_cleanup_eligible_total"); v == "0" || v == "" {
		t.Fatalf("cleanup_eligible %q", v)
	}
}

// Without a plugin the group expires normally.
func TestKIP1331NoPluginExpiryIgnoresStoredEpoch(t *testing.T) {
	e := startTD(t, false, "offsets.retention.check.interval.ms=60000")
	m := &tdMember{id: "m"}
	e.heartbeat("app", m)
	e.leave("app", m)
	eventually(t, "group expiry", func() bool {
		e.clock.Advance(time.Minute)
		return e.describe("app", false).ErrorCode == kerr.GroupIDNotFound.Code
	})
}

// A hanging plugin call never stalls heartbeats of another group on the same shard: the push
// awaits the plugin outside the shard loop.
func TestKIP1331HangingPluginDoesNotStallShard(t *testing.T) {
	e := startTD(t, true)
	const shards = 8 // testutil's offsets.topic.num.partitions
	other := ""
	for i := 0; other == ""; i++ {
		if id := fmt.Sprintf("other-%d", i); coordinator.ShardFor(id, shards) == coordinator.ShardFor("slow", shards) {
			other = id
		}
	}
	m := &tdMember{id: "m"}
	e.heartbeat("slow", m)
	e.store.FailNext(http.MethodPut, topodesctest.Hang, 1)
	pushDone := make(chan struct{})
	go func() {
		defer close(pushDone)
		pctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
		defer cancel()
		e.pushOn(pctx, e.brokerOf(newClient(t, e.b.Addr())), "slow", m.id, 0)
	}()
	eventually(t, "push reaching the plugin", func() bool { return e.store.Calls(http.MethodPut) == 1 })
	start := time.Now()
	o := &tdMember{id: "o"}
	for i := 0; i < 5; i++ {
		e.heartbeat(other, o)
	}
	took := time.Since(start)
	select {
	case <-pushDone:
		t.Fatal("push finished; the plugin was supposed to hang")
	default:
	}
	t.Logf("5 heartbeats of %s on the shard of a hanging push took %v", other, took)
	e.store.Close() // releases the hanging PUT
	<-pushDone
}

// Without a plugin: push → UNSUPPORTED_VERSION, no solicitation, describe NOT_STORED.
func TestKIP1331NoPlugin(t *testing.T) {
	e := startTD(t, false)
	m := &tdMember{id: "m"}
	for i := 0; i < 3; i++ {
		if e.heartbeat("app", m) {
			t.Fatal("solicited without a plugin")
		}
	}
	wantCode(t, "push", e.push("app", m.id, 0).ErrorCode, kerr.UnsupportedVersion)
	if d := e.describe("app", true); d.ErrorCode != 0 || d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionNotStored {
		t.Fatalf("describe: %+v", d)
	}
	if d := e.describe("app", false); d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionNotRequested {
		t.Fatalf("describe without flag: %+v", d)
	}
}

// Persistence: StoredTopologyEpoch survives a restart (disk plugin): describe is AVAILABLE after
// the restart and the group is not re-solicited.
func TestKIP1331DiskPluginSurvivesRestart(t *testing.T) {
	e := startTD(t, false, "group.streams.topology.description.plugin.class=disk")
	m := &tdMember{id: "m"}
	if !e.heartbeat("app", m) {
		t.Fatal("not solicited")
	}
	wantCode(t, "push", e.push("app", m.id, 0).ErrorCode, nil)
	e.restart()
	if e.heartbeat("app", m) {
		t.Fatal("re-solicited after a restart although the description is stored")
	}
	d := e.describe("app", true)
	if d.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionAvailable {
		t.Fatalf("after restart: %+v", d)
	}
	if got, err := topology.FromDescribe(d.TopologyDescription); err != nil || !got.Equal(tdDescription(t)) {
		t.Fatalf("described topology differs: %v", err)
	}
}

// BenchmarkKIP1331Push measures one StreamsGroupTopologyDescriptionUpdate round trip over
// loopback (validation op, memory plugin setTopology, bookkeeping op with a durable write
// only when the stored epoch changes) and one describe with the description.
func BenchmarkKIP1331Push(b *testing.B) {
	br := testutil.Start(b, "group.streams.initial.rebalance.delay.ms=0", "group.streams.topology.description.plugin.class=memory")
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(br.Addr()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		b.Fatal(err)
	}
	kb := cl.Broker(int(meta.Brokers[0].NodeID))
	m := &tdMember{id: "m"}
	if resp, err := m.request("app").RequestWith(ctx, kb); err != nil || resp.ErrorCode != 0 {
		b.Fatalf("heartbeat: %v %+v", err, resp)
	}
	d, err := topology.NewBuilder().Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"words"}, "KSTREAM-SINK-0000000001").
		Sink("KSTREAM-SINK-0000000001", "out").Done().Build()
	if err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	req.Group, req.MemberID, req.TopologyDescription = "app", "m", d.ToRequest()
	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups, dreq.IncludeTopologyDescription = []string{"app"}, true
	b.Run("push", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if resp, err := req.RequestWith(ctx, kb); err != nil || resp.ErrorCode != 0 {
				b.Fatalf("push: %v %+v", err, resp)
			}
		}
	})
	b.Run("describe", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if resp, err := dreq.RequestWith(ctx, kb); err != nil || resp.Groups[0].TopologyDescriptionStatus != 3 {
				b.Fatalf("describe: %v %+v", err, resp)
			}
		}
	})
}
