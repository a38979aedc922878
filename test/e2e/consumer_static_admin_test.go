package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// KIP-848 static membership and admin removal over loopback (Kafka's GroupMetadataManager:
// getOrMaybeSubscribeStaticConsumerGroupMember, throwIfConsumerGroupIsFull,
// classicGroupLeaveToConsumerGroup → consumerGroupFenceMembers).

// smember is a raw ConsumerGroupHeartbeat member, static when instance is set; it owns the last
// assignment it was given.
type smember struct {
	id, instance string
	epoch        int32
	owned        []kmsg.ConsumerGroupHeartbeatRequestTopic
}

// beat sends one heartbeat (a join at epoch 0) and returns the response; the member takes the
// response's epoch and assignment only when it has no error.
func (m *smember) beat(t *testing.T, ctx context.Context, cl *kgo.Client, group string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = group, m.id, epoch
	if m.instance != "" {
		req.InstanceID = &m.instance
	}
	req.RebalanceTimeoutMillis = -1
	req.Topics = m.owned
	if epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.SubscribedTopicNames = []string{"static-t"}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("heartbeat %s: %v", m.id, err)
	}
	if resp.ErrorCode == 0 {
		m.epoch = resp.MemberEpoch
		if resp.Assignment != nil {
			m.owned = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			for _, tp := range resp.Assignment.Topics {
				m.owned = append(m.owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: tp.TopicID, Partitions: tp.Partitions})
			}
		}
	}
	return resp
}

func (m *smember) ok(t *testing.T, ctx context.Context, cl *kgo.Client, group string, epoch int32) {
	t.Helper()
	if resp := m.beat(t, ctx, cl, group, epoch); resp.ErrorCode != 0 {
		t.Fatalf("heartbeat %s (epoch %d): %v %s", m.id, epoch, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
}

func (m *smember) count() int {
	n := 0
	for _, tp := range m.owned {
		n += len(tp.Partitions)
	}
	return n
}

func wantErrCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	if (want == nil && got != 0) || (want != nil && got != want.Code) {
		t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// settle heartbeats every member until the group is Stable with each member at the group epoch.
func settle(t *testing.T, ctx context.Context, cl *kgo.Client, group string, ms ...*smember) {
	t.Helper()
	for round := 0; round < 10; round++ {
		for _, m := range ms {
			m.ok(t, ctx, cl, group, m.epoch)
		}
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("describe %s: %v %+v", group, err, resp)
		}
		g := resp.Groups[0]
		done := g.State == "Stable"
		for _, m := range ms {
			done = done && m.epoch == g.Epoch
		}
		if done {
			return
		}
	}
	t.Fatalf("group %s did not settle", group)
}

func describeMembers(t *testing.T, ctx context.Context, adm *kadm.Client, group string) map[string]kadm.ConsumerGroupMember {
	t.Helper()
	ds, err := adm.DescribeConsumerGroups(ctx, group)
	if err != nil || ds.Error() != nil {
		t.Fatalf("describe %s: %v %v", group, err, ds.Error())
	}
	out := map[string]kadm.ConsumerGroupMember{}
	for _, m := range ds[group].Members {
		out[m.MemberID] = m
	}
	return out
}

// TestConsumerGroupAdminRemovesMembersThroughLeaveGroup: LeaveGroup v3+ naming a static member by
// instance id only (kadm's LeaveGroup, what Admin.removeMembersFromConsumerGroup sends) removes
// the consumer-protocol member, bumps the group epoch and answers NONE; a dynamic
// consumer-protocol member named by member id is removed too; the partitions go to the member
// that stays; the instance id is then free, so a new member joins with it at epoch 0 without
// UNRELEASED_INSTANCE_ID, and the removed member's own heartbeats are refused.
func TestConsumerGroupAdminRemovesMembersThroughLeaveGroup(t *testing.T) {
	b := testutil.Start(t, "group.consumer.assignment.interval.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, "static-t"); err != nil {
		t.Fatal(err)
	}
	const group = "admin-remove"
	a := &smember{id: "member-a", instance: "inst-a"}
	d := &smember{id: "member-d"}
	s := &smember{id: "member-s"}
	a.ok(t, ctx, cl, group, 0)
	d.ok(t, ctx, cl, group, 0)
	s.ok(t, ctx, cl, group, 0)
	settle(t, ctx, cl, group, a, d, s)
	before, _ := groupEpoch(ctx, t, cl, group)

	// Admin removal of the static member by instance id.
	rs, err := adm.LeaveGroup(ctx, kadm.LeaveGroup(group).InstanceIDs("inst-a").Reason("removed by an admin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Error(); err != nil || len(rs) != 1 {
		t.Fatalf("admin removal by instance id: %v %+v", err, rs)
	}
	after, _ := groupEpoch(ctx, t, cl, group)
	if after != before+1 {
		t.Fatalf("group epoch %d after the removal, want %d", after, before+1)
	}
	if ms := describeMembers(t, ctx, adm, group); len(ms) != 2 || ms["member-a"].MemberID != "" {
		t.Fatalf("members after removing inst-a: %+v", ms)
	}

	// Admin removal of a dynamic consumer-protocol member by member id (raw LeaveGroup v5).
	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Version = 5
	lreq.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = "member-d"
	lreq.Members = []kmsg.LeaveGroupRequestMember{lm}
	lresp, err := lreq.RequestWith(ctx, cl)
	if err != nil || lresp.ErrorCode != 0 || len(lresp.Members) != 1 {
		t.Fatalf("leave by member id: %v %+v", err, lresp)
	}
	wantErrCode(t, "member-d removal", lresp.Members[0].ErrorCode, nil)
	if e, _ := groupEpoch(ctx, t, cl, group); e != after+1 {
		t.Fatalf("group epoch %d after removing member-d, want %d", e, after+1)
	}

	// The member that stays gets every partition.
	settle(t, ctx, cl, group, s)
	if s.count() != 6 {
		t.Fatalf("remaining member owns %d partitions, want 6", s.count())
	}

	// The removed members are gone; inst-a is free for a new member.
	wantErrCode(t, "removed dynamic member's heartbeat", d.beat(t, ctx, cl, group, d.epoch).ErrorCode, kerr.UnknownMemberID)
	a2 := &smember{id: "member-a2", instance: "inst-a"}
	resp := a2.beat(t, ctx, cl, group, 0)
	wantErrCode(t, "new member with the released instance id", resp.ErrorCode, nil)
	wantErrCode(t, "removed static member's heartbeat", a.beat(t, ctx, cl, group, a.epoch).ErrorCode, kerr.FencedInstanceID)
	settle(t, ctx, cl, group, a2, s)
	if a2.count()+s.count() != 6 || a2.count() == 0 {
		t.Fatalf("after the new static member joined: %d + %d partitions", a2.count(), s.count())
	}

	// Unknown instance ids and mismatched member ids answer per member.
	rs, err = adm.LeaveGroup(ctx, kadm.LeaveGroup(group).InstanceIDs("nope"))
	if err != nil || len(rs) != 1 {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Err != kerr.UnknownMemberID {
			t.Fatalf("unknown instance id: %v", r.Err)
		}
	}
	lm.MemberID, lm.InstanceID = "someone-else", kmsg.StringPtr("inst-a")
	lreq.Members = []kmsg.LeaveGroupRequestMember{lm}
	if lresp, err := lreq.RequestWith(ctx, cl); err != nil || lresp.Members[0].ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("mismatched member id: %v %+v", err, lresp)
	}
}

// TestConsumerGroupStaticReplacementAtMaxSize: a static member that left temporarily (epoch -2)
// is replaced by a member joining with its instance id while the group is at
// group.consumer.max.size: the replacement keeps its partitions and the group epoch; a new
// dynamic member is still refused, and an instance id still in use answers
// UNRELEASED_INSTANCE_ID, not GROUP_MAX_SIZE_REACHED.
func TestConsumerGroupStaticReplacementAtMaxSize(t *testing.T) {
	b := testutil.Start(t, "group.consumer.assignment.interval.ms=0", "group.consumer.max.size=2")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "static-t"); err != nil {
		t.Fatal(err)
	}
	const group = "static-full"
	a := &smember{id: "member-a", instance: "inst-a"}
	o := &smember{id: "member-o"}
	a.ok(t, ctx, cl, group, 0)
	o.ok(t, ctx, cl, group, 0)
	settle(t, ctx, cl, group, a, o)
	epoch, _ := groupEpoch(ctx, t, cl, group)

	wantErrCode(t, "a third member", (&smember{id: "member-x"}).beat(t, ctx, cl, group, 0).ErrorCode, kerr.GroupMaxSizeReached)
	wantErrCode(t, "instance id in use", (&smember{id: "member-y", instance: "inst-a"}).beat(t, ctx, cl, group, 0).ErrorCode, kerr.UnreleasedInstanceID)

	if resp := a.beat(t, ctx, cl, group, -2); resp.ErrorCode != 0 || resp.MemberEpoch != -2 {
		t.Fatalf("temporary leave: %+v", resp)
	}
	a2 := &smember{id: "member-a2", instance: "inst-a"}
	a2.ok(t, ctx, cl, group, 0)
	if a2.count() != a.count() || a2.epoch != epoch {
		t.Fatalf("replacement: %d partitions at epoch %d, want %d at %d", a2.count(), a2.epoch, a.count(), epoch)
	}
	if e, _ := groupEpoch(ctx, t, cl, group); e != epoch {
		t.Fatalf("the replacement bumped the group epoch: %d → %d", epoch, e)
	}
	wantErrCode(t, "the replaced member id", a.beat(t, ctx, cl, group, a.epoch).ErrorCode, kerr.FencedInstanceID)
}

// TestConsumerGroupStaticSessionExpiry: a static member that stops heartbeating, or that left
// temporarily and does not return, is fenced when its session expires; the group epoch is
// bumped, its partitions go to the others, and its instance id is free for a new member.
func TestConsumerGroupStaticSessionExpiry(t *testing.T) {
	clock := coordtest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := testutil.StartIn(t, t.TempDir(), clock, "group.consumer.assignment.interval.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "static-t"); err != nil {
		t.Fatal(err)
	}
	const group = "static-expiry"
	for _, leaveFirst := range []bool{false, true} {
		a := &smember{id: "member-a", instance: "inst-a"}
		o := &smember{id: "member-o"}
		if leaveFirst {
			a.id, o.id = "member-a-2", "member-o-2"
		}
		a.ok(t, ctx, cl, group, 0)
		o.ok(t, ctx, cl, group, 0)
		settle(t, ctx, cl, group, a, o)
		if leaveFirst {
			a.ok(t, ctx, cl, group, -2)
		}
		before, _ := groupEpoch(ctx, t, cl, group)
		// Only o keeps heartbeating through a's session (45 s).
		for i := 0; i < 5; i++ {
			clock.Advance(10 * time.Second)
			o.ok(t, ctx, cl, group, o.epoch)
		}
		eventually(t, "a fenced after its session", func() bool {
			e, _ := groupEpoch(ctx, t, cl, group)
			return e > before
		})
		settle(t, ctx, cl, group, o)
		if o.count() != 4 {
			t.Fatalf("leaveFirst=%v: the remaining member owns %d partitions, want 4", leaveFirst, o.count())
		}
		n := &smember{id: a.id + "-new", instance: "inst-a"}
		wantErrCode(t, "a new member with the expired instance id", n.beat(t, ctx, cl, group, 0).ErrorCode, nil)
		for _, m := range []*smember{n, o} {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.MemberEpoch = group, m.id, -1
			if m.instance != "" {
				req.InstanceID = &m.instance
			}
			if resp, err := req.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
				t.Fatalf("leave %s: %v %+v", m.id, err, resp)
			}
		}
	}
}
