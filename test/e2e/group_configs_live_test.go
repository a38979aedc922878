package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// TestGroupConfigsApplyToLiveGroups: dynamic group configs set with IncrementalAlterConfigs on a
// GROUP resource reach a live group on its next heartbeat (Kafka's GroupConfigManager, read by
// GroupMetadataManager per heartbeat): consumer.heartbeat.interval.ms is the interval a
// KIP-848 member is told, consumer.session.timeout.ms the session after which it is fenced;
// streams.heartbeat.interval.ms likewise for a KIP-1071 member, and streams.num.standby.replicas
// bumps the streams group epoch and gives the members standby tasks. Deleting an override
// restores the broker's value.
func TestGroupConfigsApplyToLiveGroups(t *testing.T) {
	clock := coordtest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := testutil.StartIn(t, t.TempDir(), clock,
		"group.consumer.assignment.interval.ms=0", "group.streams.initial.rebalance.delay.ms=0",
		"group.consumer.min.session.timeout.ms=1000", "group.consumer.min.heartbeat.interval.ms=500",
		"group.streams.min.session.timeout.ms=1000", "group.streams.min.heartbeat.interval.ms=500",
		"group.streams.max.standby.replicas=1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"static-t", "words"} {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	alter := func(group string, kvs ...string) {
		t.Helper()
		if r := alterGroup(t, ctx, cl, group, false, kvs...); r.ErrorCode != 0 {
			t.Fatalf("alter %s %v: %d %s", group, kvs, r.ErrorCode, deref(r.ErrorMessage))
		}
	}

	// KIP-848: the interval and the session follow the group's configs.
	const cg = "live-consumer"
	m := &smember{id: "member-1"}
	if resp := m.beat(t, ctx, cl, cg, 0); resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("join: %+v", resp)
	}
	alter(cg, "consumer.heartbeat.interval.ms", "1000", "consumer.session.timeout.ms", "6000")
	if resp := m.beat(t, ctx, cl, cg, m.epoch); resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 1000 {
		t.Fatalf("heartbeat after the change: interval %d, want 1000 (%+v)", resp.HeartbeatIntervalMillis, resp)
	}
	before, _ := groupEpoch(ctx, t, cl, cg)
	clock.Advance(7 * time.Second) // past the group's 6 s session, far below the broker's 45 s
	eventually(t, "member fenced after the group's session timeout", func() bool {
		e, _ := groupEpoch(ctx, t, cl, cg)
		return e > before
	})
	if ms := describeMembers(t, ctx, adm, cg); len(ms) != 0 {
		t.Fatalf("members after the session expired: %v", ms)
	}
	// Deleting the overrides restores the broker's values.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, cg
	for _, name := range []string{"consumer.heartbeat.interval.ms", "consumer.session.timeout.ms"} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = name, kmsg.IncrementalAlterConfigOpDelete
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("delete overrides: %v %+v", err, resp)
	}
	m2 := &smember{id: "member-2"}
	if resp := m2.beat(t, ctx, cl, cg, 0); resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("join after the overrides were deleted: %+v", resp)
	}

	// KIP-1071: two members of two processes share the tasks without standbys; then
	// streams.num.standby.replicas=1 gives each a standby of the other's task.
	br, _ := nrBroker(t, ctx, b.Addr())
	const sg = "live-streams"
	ms := []*rawStreamsMember{{id: "streams-a", process: "proc-a"}, {id: "streams-b", process: "proc-b"}}
	var interval int32
	round := func() {
		for _, m := range ms {
			resp, err := m.request(sg).RequestWith(ctx, br)
			if err != nil || resp.ErrorCode != 0 {
				t.Fatalf("streams heartbeat %s: %v %+v", m.id, err, resp)
			}
			m.epoch, m.endpointEpoch, interval = resp.MemberEpoch, resp.EndpointInformationEpoch, resp.HeartbeatIntervalMillis
			if resp.ActiveTasks != nil {
				m.active, m.standby, m.warmup = resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks
			}
		}
	}
	stable := func(standbys int) bool {
		g := nrDescribe(t, ctx, br, sg)
		return g.State == "Stable" && ms[0].epoch == g.Epoch && ms[1].epoch == g.Epoch &&
			countTasks(ms[0].active) == 1 && countTasks(ms[1].active) == 1 &&
			countTasks(ms[0].standby) == standbys && countTasks(ms[1].standby) == standbys
	}
	round()
	for i := 0; i < 10 && !stable(0); i++ {
		round()
	}
	if !stable(0) || interval != 5000 {
		t.Fatalf("streams group did not settle without standbys: %+v %+v interval %d", ms[0], ms[1], interval)
	}
	epoch := nrDescribe(t, ctx, br, sg).Epoch
	alter(sg, "streams.num.standby.replicas", "1", "streams.heartbeat.interval.ms", "1500")
	round()
	if g := nrDescribe(t, ctx, br, sg); g.Epoch != epoch+1 || interval != 1500 {
		t.Fatalf("after streams.num.standby.replicas=1: group epoch %d (was %d), interval %d", g.Epoch, epoch, interval)
	}
	for i := 0; i < 10 && !stable(1); i++ {
		round()
	}
	if !stable(1) {
		t.Fatalf("no standby tasks after streams.num.standby.replicas=1: a=%v/%v b=%v/%v", ms[0].active, ms[0].standby, ms[1].active, ms[1].standby)
	}
}
