package groups

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
	"github.com/muster-io/muster/streams/member"
)

// histEvent is one event of GET /api/v1/groups/{g}/history.
type histEvent struct {
	Seq       int64  `json:"seq"`
	GroupType string `json:"group_type"`
	OldEpoch  int32  `json:"old_epoch"`
	NewEpoch  int32  `json:"new_epoch"`
	Causes    []struct {
		Cause, Member, Reason, Topic, Old, New string
	} `json:"causes"`
	Members []string `json:"members"`
}

// history reads a group's whole rebalance history over HTTP, oldest first.
func history(t *testing.T, b *testutil.Broker, group string) []histEvent {
	t.Helper()
	var out []histEvent
	for page := 1; ; page++ {
		resp, err := http.Get(fmt.Sprintf("http://%s/api/v1/groups/%s/history?size=1000&page=%d", b.HTTPAddr(), url.PathEscape(group), page))
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Paging struct{ Total int } `json:"paging"`
			Events []histEvent         `json:"events"`
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil // no such group (yet)
		}
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("history of %s: %d %v", group, resp.StatusCode, err)
		}
		out = append(out, h.Events...)
		if len(h.Events) == 0 || len(out) >= h.Paging.Total {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// findCause returns the last event whose causes include kind (and member, when given).
func findCause(events []histEvent, kind, member string) (histEvent, int, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		for j, c := range events[i].Causes {
			if c.Cause == kind && (member == "" || c.Member == member) {
				return events[i], j, true
			}
		}
	}
	return histEvent{}, 0, false
}

// expectCause waits until group's history has an event with cause kind (for member), checks its
// epochs advance by one (or stay, for a migration), and returns it.
func expectCause(t *testing.T, b *testutil.Broker, group, kind, member string) (histEvent, int) {
	t.Helper()
	var e histEvent
	var j int
	otEventually(t, fmt.Sprintf("%s of %s in the history of %s", kind, member, group), func() bool {
		var ok bool
		e, j, ok = findCause(history(t, b, group), kind, member)
		return ok
	})
	if e.NewEpoch != e.OldEpoch+1 && kind != "PROTOCOL_MIGRATION" {
		t.Errorf("%s: epochs %d→%d", kind, e.OldEpoch, e.NewEpoch)
	}
	if member != "" {
		found := false
		for _, m := range e.Members {
			found = found || m == member
		}
		if !found {
			t.Errorf("%s: members %v lack %s", kind, e.Members, member)
		}
	}
	return e, j
}

// cgMember is a raw KIP-848 member (ConsumerGroupHeartbeat v1, client-chosen member id).
type cgMember struct {
	t        *testing.T
	cl       *kgo.Client
	group    string
	id       string
	instance *string
	epoch    int32
	owned    []kmsg.ConsumerGroupHeartbeatRequestTopic
}

func (m *cgMember) hb(mutate func(*kmsg.ConsumerGroupHeartbeatRequest)) *kmsg.ConsumerGroupHeartbeatResponse {
	m.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = m.group, m.id, m.epoch, m.instance
	req.RebalanceTimeoutMillis = -1
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	} else {
		req.Topics = m.owned
	}
	if mutate != nil {
		mutate(req)
	}
	resp, err := req.RequestWith(otCtx(m.t), m.cl)
	if err != nil {
		m.t.Fatal(err)
	}
	if resp.ErrorCode != 0 {
		m.t.Fatalf("heartbeat of %s: error %d %v", m.id, resp.ErrorCode, resp.ErrorMessage)
	}
	if req.MemberEpoch >= 0 {
		m.epoch = resp.MemberEpoch
	}
	if resp.Assignment != nil {
		m.owned = nil
		for _, tp := range resp.Assignment.Topics {
			p := kmsg.NewConsumerGroupHeartbeatRequestTopic()
			p.TopicID, p.Partitions = tp.TopicID, tp.Partitions
			m.owned = append(m.owned, p)
		}
	}
	return resp
}

func subscribe(topics ...string) func(*kmsg.ConsumerGroupHeartbeatRequest) {
	return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = topics }
}

// TestRebalanceHistoryCauses drives groups of every type over loopback through each cause of a
// group epoch bump and checks what the history records: the cause, the member, the epochs
// (old → new = old + 1) and the details (old and new subscription, topic and partitions, reason).
func TestRebalanceHistoryCauses(t *testing.T) {
	b := testutil.Start(t, "group.consumer.assignment.interval.ms=0",
		"group.consumer.min.session.timeout.ms=1000", "group.consumer.session.timeout.ms=1500",
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=100",
		"group.streams.min.heartbeat.interval.ms=100", "group.streams.heartbeat.interval.ms=100",
		"group.streams.initial.rebalance.delay.ms=0", "muster.rebalance.log.interval.ms=0")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t": 2, "u": 1, "r-1": 1, "s-1": 1, "words": 2})
	cl := otClient(t, addr)
	mk := func(group, id string) *cgMember { return &cgMember{t: t, cl: cl, group: group, id: id} }

	// Joins, a subscription change, a regex change, an assignor change.
	a, bm, c := mk("h", "member-a"), mk("h", "member-b"), mk("h", "member-c")
	a.hb(subscribe("t"))
	e, _ := expectCause(t, b, "h", "MEMBER_JOINED", "member-a")
	if e.OldEpoch != 0 || e.NewEpoch != 1 || e.GroupType != "consumer" {
		t.Errorf("first join: %+v", e)
	}
	bm.hb(subscribe("t"))
	expectCause(t, b, "h", "MEMBER_JOINED", "member-b")
	bm.hb(subscribe("t", "u"))
	e, j := expectCause(t, b, "h", "SUBSCRIPTION_CHANGED", "member-b")
	if c := e.Causes[j]; c.Old != "t" || c.New != "t,u" {
		t.Errorf("subscription change: %+v", c)
	}
	c.hb(func(r *kmsg.ConsumerGroupHeartbeatRequest) { re := "r-.*"; r.SubscribedTopicRegex = &re })
	expectCause(t, b, "h", "MEMBER_JOINED", "member-c")
	c.hb(func(r *kmsg.ConsumerGroupHeartbeatRequest) { re := "s-.*"; r.SubscribedTopicRegex = &re })
	e, j = expectCause(t, b, "h", "REGEX_CHANGED", "member-c")
	if c := e.Causes[j]; c.Old != "r-.*" || c.New != "s-.*" {
		t.Errorf("regex change: %+v", c)
	}
	a.hb(func(r *kmsg.ConsumerGroupHeartbeatRequest) { s := "range"; r.ServerAssignor = &s })
	e, j = expectCause(t, b, "h", "ASSIGNOR_CHANGED", "member-a")
	if c := e.Causes[j]; c.New != "range" {
		t.Errorf("assignor change: %+v", c)
	}

	// A partition added to a subscribed topic: the next heartbeat bumps the epoch.
	adm := kadm.NewClient(cl)
	if _, err := adm.CreatePartitions(otCtx(t), 2, "t"); err != nil {
		t.Fatal(err)
	}
	otEventually(t, "the metadata change", func() bool {
		a.hb(nil)
		_, _, ok := findCause(history(t, b, "h"), "METADATA_CHANGED", "")
		return ok
	})
	e, j = expectCause(t, b, "h", "METADATA_CHANGED", "")
	if c := e.Causes[j]; c.Topic != "t" || c.Old != "2" || c.New != "4" {
		t.Errorf("metadata change: %+v", c)
	}

	// A member that leaves; one whose session expires.
	bm.hb(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -1 })
	expectCause(t, b, "h", "MEMBER_LEFT", "member-b")
	stop := time.Now().Add(4 * time.Second)
	for time.Now().Before(stop) { // a keeps its session; c goes silent
		a.hb(nil)
		if _, _, ok := findCause(history(t, b, "h"), "MEMBER_FENCED", "member-c"); ok {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	e, j = expectCause(t, b, "h", "MEMBER_FENCED", "member-c")
	if r := e.Causes[j].Reason; r != "session timeout" {
		t.Errorf("fenced reason %q", r)
	}

	// A member that does not revoke within its rebalance timeout.
	r1, r2 := mk("rt", "member-slow"), mk("rt", "member-new")
	r1.hb(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.SubscribedTopicNames = []string{"t"}
		r.RebalanceTimeoutMillis = 600
	})
	r1.hb(nil)
	r2.hb(subscribe("t"))
	owned := r1.owned // the slow member keeps reporting everything it had
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, _, ok := findCause(history(t, b, "rt"), "MEMBER_FENCED", "member-slow"); ok {
			break
		}
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = 1, "rt", r1.id, r1.epoch, -1
		req.Topics = owned
		req.RequestWith(otCtx(t), cl)
		r2.hb(nil)
		time.Sleep(100 * time.Millisecond)
	}
	e, j = expectCause(t, b, "rt", "MEMBER_FENCED", "member-slow")
	if r := e.Causes[j].Reason; r != "rebalance timeout" {
		t.Errorf("fenced reason %q, want rebalance timeout", r)
	}

	// An administrator removes a static member by its instance id (LeaveGroup v5, as Kafka's
	// Admin.removeMembersFromConsumerGroup).
	inst := "instance-d"
	d := mk("adm", "member-d")
	d.instance = &inst
	d.hb(subscribe("t"))
	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Version, lreq.Group = 5, "adm"
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.InstanceID = &inst
	lreq.Members = []kmsg.LeaveGroupRequestMember{lm}
	if resp, err := lreq.RequestWith(otCtx(t), cl); err != nil || resp.ErrorCode != 0 || resp.Members[0].ErrorCode != 0 {
		t.Fatalf("LeaveGroup by instance id: %v %+v", err, resp)
	}
	expectCause(t, b, "adm", "ADMIN_REMOVAL", "member-d")

	// A classic group: a franz-go classic consumer joins and leaves; then a KIP-848 member joins
	// the classic group (online upgrade).
	classic, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("mig"), kgo.ConsumeTopics("t"), kgo.ClientID("classic-1"))
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pctx.Err() == nil {
			fctx, fcancel := context.WithTimeout(pctx, 100*time.Millisecond)
			classic.PollFetches(fctx)
			fcancel()
		}
	}()
	e, _ = expectCause(t, b, "mig", "MEMBER_JOINED", "")
	if e.GroupType != "classic" {
		t.Errorf("classic join recorded as %s", e.GroupType)
	}
	otEventually(t, "the classic group is Stable", func() bool {
		var st string
		adm.DescribeGroups(otCtx(t), "mig")
		ds, _ := adm.DescribeGroups(otCtx(t), "mig")
		for _, g := range ds {
			st = g.State
		}
		return st == "Stable"
	})
	k := mk("mig", "member-k")
	k.hb(subscribe("t"))
	e, _ = expectCause(t, b, "mig", "PROTOCOL_MIGRATION", "")
	if e.GroupType != "consumer" || e.Causes[0].Old != "classic" || e.Causes[0].New != "consumer" {
		t.Errorf("migration: %+v", e)
	}
	pcancel()
	<-done
	classic.Close()
	expectCause(t, b, "mig", "MEMBER_LEFT", "")

	// A streams group: a member joins with topology epoch 1; a second member brings topology
	// epoch 2 (a rolling upgrade); then the group's standby replicas change.
	sm := func(process string, epoch int32) *member.Member {
		m, err := member.Start(member.Config{Brokers: []string{addr}, GroupID: "app", ProcessID: process,
			Topology: member.Topology{Epoch: epoch, Subtopologies: []member.Subtopology{{ID: "0", SourceTopics: []string{"words"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			m.Close(ctx)
		})
		return m
	}
	m1 := sm("p1", 1)
	otEventually(t, "the first streams member joins", func() bool { return m1.MemberEpoch() > 0 })
	e, _ = expectCause(t, b, "app", "MEMBER_JOINED", m1.MemberID())
	if e.GroupType != "streams" {
		t.Errorf("streams join recorded as %s", e.GroupType)
	}
	m2 := sm("p2", 2)
	otEventually(t, "the second streams member joins", func() bool { return m2.MemberEpoch() > 0 })
	e, j = expectCause(t, b, "app", "TOPOLOGY_CHANGED", "")
	if c := e.Causes[j]; c.New != "2" {
		t.Errorf("topology change: %+v", c)
	}
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "app"
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "streams.num.standby.replicas", kmsg.StringPtr("1")
	res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{cfg}
	alter.Resources = []kmsg.IncrementalAlterConfigsRequestResource{res}
	if resp, err := alter.RequestWith(otCtx(t), cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("alter group config: %v %+v", err, resp)
	}
	e, j = expectCause(t, b, "app", "ASSIGNMENT_CONFIG_CHANGED", "")
	if c := e.Causes[j]; !strings.Contains(c.New, "num.standby.replicas=1") {
		t.Errorf("assignment config change: %+v", c)
	}

	// The bumps are counted by group type and cause.
	m := otMetrics(t, b)
	for series, min := range map[string]float64{
		`muster_group_coordinator_rebalances_by_cause_total{cause="MEMBER_JOINED",group_type="consumer"}`:      3,
		`muster_group_coordinator_rebalances_by_cause_total{cause="MEMBER_FENCED",group_type="consumer"}`:      2,
		`muster_group_coordinator_rebalances_by_cause_total{cause="ADMIN_REMOVAL",group_type="consumer"}`:      1,
		`muster_group_coordinator_rebalances_by_cause_total{cause="MEMBER_JOINED",group_type="classic"}`:       1,
		`muster_group_coordinator_rebalances_by_cause_total{cause="MEMBER_JOINED",group_type="streams"}`:       1,
		`muster_group_coordinator_rebalances_by_cause_total{cause="PROTOCOL_MIGRATION",group_type="consumer"}`: 1,
	} {
		if m[series] < min {
			t.Errorf("%s = %v, want ≥ %v", series, m[series], min)
		}
	}
}

// TestRebalanceHistoryBound: 10,000 rebalances of one group leave exactly the configured bound
// of events, the newest, in memory and in the store (a restart replays no more), and deleting the
// group deletes them.
func TestRebalanceHistoryBound(t *testing.T) {
	b := testutil.Start(t, "group.consumer.assignment.interval.ms=0", "muster.rebalance.history.max.events=100")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"x": 1, "y": 1})
	cl := otClient(t, addr)
	m := &cgMember{t: t, cl: cl, group: "busy", id: "member-busy"}
	const bumps = 10_000
	for i := 0; i < bumps; i++ {
		topic := []string{"x", "y"}[i%2] // every heartbeat changes the subscription
		m.hb(subscribe(topic))
	}
	check := func(b *testutil.Broker, when string) {
		t.Helper()
		h := history(t, b, "busy")
		if len(h) != 100 {
			t.Fatalf("%s: %d events kept, want 100", when, len(h))
		}
		if first, last := h[0], h[len(h)-1]; last.Seq != bumps-1 || first.Seq != bumps-100 || last.NewEpoch != bumps {
			t.Errorf("%s: events %d..%d, last epoch %d", when, first.Seq, last.Seq, last.NewEpoch)
		}
	}
	check(b, "live")
	b = b.Restart()
	check(b, "after a restart")
	m.cl = otClient(t, b.Addr())
	m.hb(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -1 })
	adm := kadm.NewClient(m.cl)
	if _, err := adm.DeleteGroups(otCtx(t), "busy"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + b.HTTPAddr() + "/api/v1/groups/busy/history")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("history of a deleted group: %d, want 404", resp.StatusCode)
	}
}
