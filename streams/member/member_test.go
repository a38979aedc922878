package member_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
	"github.com/muster-io/muster/streams/member"
)

// brokerOverrides make a test broker assign at once and ask for frequent
// heartbeats, so convergence takes milliseconds.
var brokerOverrides = []string{
	"group.streams.initial.rebalance.delay.ms=0",
	"group.streams.min.heartbeat.interval.ms=50",
	"group.streams.heartbeat.interval.ms=50",
}

type env struct {
	t    *testing.T
	addr string
	adm  *kadm.Client
}

func newEnv(t *testing.T) *env { return newEnvWith(t) }

// newEnvWith starts a broker with brokerOverrides plus more overrides.
func newEnvWith(t *testing.T, more ...string) *env {
	t.Helper()
	b := testutil.Start(t, append(append([]string{}, brokerOverrides...), more...)...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &env{t: t, addr: b.Addr(), adm: kadm.NewClient(cl)}
}

func (e *env) createTopic(name string, partitions int32) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.adm.CreateTopic(ctx, partitions, 1, nil, name); err != nil {
		e.t.Fatalf("create topic %s: %v", name, err)
	}
}

// twoSubtopologies reads "words" (6 partitions) in subtopology 0 and
// "counts" (4 partitions) in subtopology 1: 10 tasks.
func twoSubtopologies() member.Topology {
	return member.Topology{Epoch: 0, Subtopologies: []member.Subtopology{
		{ID: "0", SourceTopics: []string{"words"}},
		{ID: "1", SourceTopics: []string{"counts"}},
	}}
}

func allTasks() member.TaskSet {
	var ids []member.TaskID
	for p := int32(0); p < 6; p++ {
		ids = append(ids, member.TaskID{Subtopology: "0", Partition: p})
	}
	for p := int32(0); p < 4; p++ {
		ids = append(ids, member.TaskID{Subtopology: "1", Partition: p})
	}
	return member.NewTaskSet(ids...)
}

// ledger records which member holds each active task, from the callbacks,
// and flags any moment at which a task is active on two members.
type ledger struct {
	t     *testing.T
	mu    sync.Mutex
	owner map[member.TaskID]string
}

func newLedger(t *testing.T) *ledger { return &ledger{t: t, owner: map[member.TaskID]string{}} }

func (l *ledger) callbacks(name string, cfg *member.Config) {
	cfg.OnAssigned = func(active, _, _ member.TaskSet) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, id := range active {
			if o, ok := l.owner[id]; ok && o != name {
				l.t.Errorf("task %v assigned to %s while still active on %s", id, name, o)
			}
			l.owner[id] = name
		}
	}
	cfg.OnRevoked = func(active, _, _ member.TaskSet) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, id := range active {
			if l.owner[id] != name {
				l.t.Errorf("task %v revoked from %s but owned by %q", id, name, l.owner[id])
			}
			delete(l.owner, id)
		}
	}
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.owner)
}

func (e *env) start(group, name string, l *ledger, mod func(*member.Config)) *member.Member {
	e.t.Helper()
	cfg := member.Config{
		Brokers:      []string{e.addr},
		GroupID:      group,
		Topology:     twoSubtopologies(),
		RetryBackoff: 20 * time.Millisecond,
		Logger:       testLogger(),
	}
	if l != nil {
		l.callbacks(name, &cfg)
	}
	if mod != nil {
		mod(&cfg)
	}
	m, err := member.Start(cfg)
	if err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	})
	return m
}

// testLogger discards the member's log unless MUSTER_TEST_LOG is set.
func testLogger() *slog.Logger {
	var w io.Writer = io.Discard
	if os.Getenv("MUSTER_TEST_LOG") != "" {
		w = os.Stderr
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// eventually polls cond until it holds (10 s at most).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// partition reports whether the members' active tasks are disjoint, cover
// all, and every member has at least one.
func partition(all member.TaskSet, ms ...*member.Member) bool {
	var union member.TaskSet
	total := 0
	for _, m := range ms {
		a := m.Assignment().Active
		if a.Len() == 0 {
			return false
		}
		total += a.Len()
		union = union.Union(a)
	}
	return total == all.Len() && union.Equal(all)
}

func describe(t *testing.T, e *env, group string) kmsg.StreamsGroupDescribeResponseGroup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kcl, err := kgo.NewClient(kgo.SeedBrokers(e.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	kresp, err := kcl.Broker(int(coordinatorOf(t, kcl, group))).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return kresp.(*kmsg.StreamsGroupDescribeResponse).Groups[0]
}

// TestMembersShareTasks: one member gets every task; a second joins and the
// two converge to a split in which every task is active exactly once (never
// on two members at a time); when one leaves, the other gets all tasks
// back; after both close the group is empty.
func TestMembersShareTasks(t *testing.T) {
	e := newEnv(t)
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	all := allTasks()
	l := newLedger(t)

	m1 := e.start("app", "m1", l, nil)
	eventually(t, "m1 owns every task", func() bool { return m1.Assignment().Active.Equal(all) })
	if m1.MemberEpoch() <= 0 {
		t.Fatalf("member epoch %d after joining", m1.MemberEpoch())
	}

	m2 := e.start("app", "m2", l, nil)
	eventually(t, "m1 and m2 split the tasks", func() bool { return partition(all, m1, m2) && l.count() == all.Len() })
	g := describe(t, e, "app")
	if len(g.Members) != 2 {
		t.Fatalf("describe: %d members, want 2", len(g.Members))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m2.Close(ctx); err != nil {
		t.Fatalf("close m2: %v", err)
	}
	if !m2.Assignment().Empty() {
		t.Fatalf("m2 still owns %v after Close", m2.Assignment())
	}
	eventually(t, "m1 owns every task again", func() bool { return m1.Assignment().Active.Equal(all) })
	eventually(t, "one member left", func() bool { return len(describe(t, e, "app").Members) == 1 })

	if err := m1.Close(ctx); err != nil {
		t.Fatalf("close m1: %v", err)
	}
	if l.count() != 0 {
		t.Fatalf("%d tasks still active after both closed", l.count())
	}
	g = describe(t, e, "app")
	if len(g.Members) != 0 || g.State != "Empty" {
		t.Fatalf("after close: state %q, %d members; want Empty, 0", g.State, len(g.Members))
	}
	for _, m := range []*member.Member{m1, m2} {
		if err := m.Err(); err != nil {
			t.Errorf("member error: %v", err)
		}
	}
}

// TestMissingSourceTopics: a topology reading a topic that does not exist
// gets no tasks and the MISSING_SOURCE_TOPICS status.
func TestMissingSourceTopics(t *testing.T) {
	e := newEnv(t)
	m := e.start("lonely", "m", nil, func(c *member.Config) {
		c.Topology = member.Topology{Subtopologies: []member.Subtopology{{ID: "0", SourceTopics: []string{"nope"}}}}
	})
	eventually(t, "MISSING_SOURCE_TOPICS", func() bool { return m.HasStatus(member.StatusMissingSourceTopics) })
	if !m.Assignment().Empty() {
		t.Fatalf("assignment %v, want none", m.Assignment())
	}
	s := m.Status()
	if len(s) == 0 || !strings.Contains(s[0].String(), "MISSING_SOURCE_TOPICS") {
		t.Fatalf("status %v", s)
	}
}

// TestCommitTaskOffsets: offsets committed with the member's id and epoch
// are stored; after Close the member refuses to commit.
func TestCommitTaskOffsets(t *testing.T) {
	e := newEnv(t)
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	m := e.start("committer", "m", nil, nil)
	eventually(t, "tasks assigned", func() bool { return m.Assignment().Active.Len() == 10 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.CommitTaskOffsets(ctx, []member.Offset{
		{Topic: "words", Partition: 2, Offset: 42, LeaderEpoch: -1},
		{Topic: "counts", Partition: 0, Offset: 7, LeaderEpoch: -1, Metadata: "m"},
	}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	got, err := e.adm.FetchOffsets(ctx, "committer")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := got.Lookup("words", 2); o.At != 42 {
		t.Errorf("words/2 committed %d, want 42", o.At)
	}
	if o, _ := got.Lookup("counts", 0); o.At != 7 || o.Metadata != "m" {
		t.Errorf("counts/0 committed %d %q, want 7 \"m\"", o.At, o.Metadata)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.CommitTaskOffsets(ctx, []member.Offset{{Topic: "words", Partition: 0, Offset: 1}}); err != member.ErrClosed {
		t.Fatalf("commit after close: %v, want ErrClosed", err)
	}
}

// TestFencedMemberRejoins: another client heartbeats with the member's id
// and a wrong epoch, so the coordinator fences (removes) the member. The
// member's next heartbeat gets UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH: it
// drops its tasks (OnLost), rejoins with epoch 0 and gets them back.
func TestFencedMemberRejoins(t *testing.T) {
	e := newEnv(t)
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	all := allTasks()
	var mu sync.Mutex
	lost, revoked := 0, 0
	m := e.start("fenced", "m", nil, func(c *member.Config) {
		c.OnRevoked = func(active, _, _ member.TaskSet) {
			mu.Lock()
			defer mu.Unlock()
			revoked++
		}
		c.OnLost = func(active, _, _ member.TaskSet) {
			mu.Lock()
			defer mu.Unlock()
			if active.Equal(all) {
				lost++
			}
		}
	})
	eventually(t, "tasks assigned", func() bool { return m.Assignment().Active.Equal(all) })
	firstEpoch := m.MemberEpoch()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kcl, err := kgo.NewClient(kgo.SeedBrokers(e.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	node := coordinatorOf(t, kcl, "fenced")
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "fenced", m.MemberID(), firstEpoch+100
	req.RebalanceTimeoutMillis = -1
	kresp, err := kcl.Broker(int(node)).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := kresp.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode; code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("fencing heartbeat: error code %d, want FENCED_MEMBER_EPOCH", code)
	}
	eventually(t, "tasks dropped on fencing", func() bool { mu.Lock(); defer mu.Unlock(); return lost == 1 })
	eventually(t, "tasks back after rejoin", func() bool { return m.Assignment().Active.Equal(all) })
	mu.Lock()
	if revoked != 0 {
		t.Errorf("OnRevoked called %d times on fencing; lost tasks go to OnLost", revoked)
	}
	mu.Unlock()
	if m.MemberEpoch() <= firstEpoch {
		t.Errorf("epoch after rejoin %d, want > %d", m.MemberEpoch(), firstEpoch)
	}
	if err := m.Err(); err != nil {
		t.Fatalf("member error: %v", err)
	}
}

func coordinatorOf(t *testing.T, kcl *kgo.Client, group string) int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = group
	fc.CoordinatorKeys = []string{group}
	fr, err := fc.RequestWith(ctx, kcl)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Coordinators) > 0 {
		return fr.Coordinators[0].NodeID
	}
	return fr.NodeID
}
