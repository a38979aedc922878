package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// mixedConsumer is a franz-go group consumer that records what it consumed and which
// partitions it owns (from its assignment callbacks).
type mixedConsumer struct {
	name string
	cl   *kgo.Client
	stop chan struct{}
	done chan struct{}
}

func startMixedConsumer(t *testing.T, ctx context.Context, addr, group, topic, name string, own *ownership,
	mu *sync.Mutex, seen map[string]int, opts ...kgo.Opt) *mixedConsumer {
	t.Helper()
	c := &mixedConsumer{name: name, stop: make(chan struct{}), done: make(chan struct{})}
	base := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(name),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.HeartbeatInterval(300 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { own.assigned(name, ps) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
			_ = cl.CommitMarkedOffsets(ctx)
			own.released(name, ps)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { own.released(name, ps) }),
		kgo.AutoCommitMarks(),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c.cl = cl
	go func() {
		defer close(c.done)
		for {
			select {
			case <-c.stop:
				return
			default:
			}
			pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
			fs := cl.PollFetches(pctx)
			pcancel()
			fs.EachRecord(func(r *kgo.Record) {
				mu.Lock()
				seen[string(r.Value)]++
				mu.Unlock()
				cl.MarkCommitRecords(r)
			})
		}
	}()
	return c
}

func (c *mixedConsumer) close() {
	close(c.stop)
	<-c.done
	_ = c.cl.CommitMarkedOffsets(context.Background())
	c.cl.Close()
}

// describeMemberTypes returns member type (0 classic, 1 consumer) → count from ConsumerGroupDescribe
// v1, or nil if the group is not a consumer group.
func describeMemberTypes(ctx context.Context, cl *kgo.Client, group string) map[int8]int {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version = 1
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		return nil
	}
	out := map[int8]int{}
	for _, m := range resp.Groups[0].Members {
		out[m.MemberType]++
	}
	return out
}

// TestMixedClassicAndConsumerProtocol (KIP-848 interop): a franz-go ServerSideBalancer consumer
// creates a consumer group; a classic cooperative-sticky franz-go consumer joins the same group
// through JoinGroup/SyncGroup and receives a server-computed share. Both consume, no partition is
// ever owned twice, every record is consumed once; when the classic member leaves, the consumer
// member takes its partitions back.
func TestMixedClassicAndConsumerProtocol(t *testing.T) {
	b := testutil.Start(t,
		"group.consumer.min.session.timeout.ms=1000", "group.consumer.session.timeout.ms=6000",
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=250",
		"group.consumer.assignment.interval.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admCl := newClient(t, b.Addr())
	adm := kadm.NewClient(admCl)
	const topic, group, parts = "kip848", "mixed-group", 6 // ownership tracks topic kip848
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	own := &ownership{owner: map[int32]string{}}
	var mu sync.Mutex
	seen := map[string]int{}

	modern := startMixedConsumer(t, ctx, b.Addr(), group, topic, "modern", own, &mu, seen,
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
	defer func() {
		if modern != nil {
			modern.close()
		}
	}()
	counts := func(want map[string]int) func() bool {
		return func() bool {
			got := own.counts()
			if len(got) != len(want) {
				return false
			}
			for k, v := range want {
				if got[k] != v {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, "modern owns all partitions", 30*time.Second, counts(map[string]int{"modern": parts}))

	classic := startMixedConsumer(t, ctx, b.Addr(), group, topic, "classic", own, &mu, seen,
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(6*time.Second))
	defer func() {
		if classic != nil {
			classic.close()
		}
	}()
	waitFor(t, "3 partitions each", 30*time.Second, counts(map[string]int{"modern": 3, "classic": 3}))
	if types := describeMemberTypes(ctx, admCl, group); types[0] != 1 || types[1] != 1 {
		t.Fatalf("member types: %v", types)
	}

	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			r := kgo.StringRecord(fmt.Sprintf("r%d", i))
			r.Partition = int32(i % parts)
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	const n = 300
	produce(0, n)
	waitFor(t, "every record consumed", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})

	// The classic member leaves (LeaveGroup): the modern member takes everything.
	classic.close()
	classic = nil
	waitFor(t, "modern owns all again", 30*time.Second, counts(map[string]int{"modern": parts}))
	produce(n, n+60)
	waitFor(t, "records after the leave consumed", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n+60
	})
	mu.Lock()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
	mu.Unlock()
	own.mu.Lock()
	defer own.mu.Unlock()
	for _, v := range own.violations {
		t.Error(v)
	}
}

// TestOnlineUpgradeAndDowngradeE2E: a classic franz-go consumer owns a classic group; a
// ServerSideBalancer consumer joins with ConsumerGroupHeartbeat and the group is upgraded online
// to a consumer group (the classic consumer stays, as a classic-protocol member); both consume
// without owning a partition twice. When the consumer-protocol member leaves, the group is
// downgraded back to a classic group and the classic consumer gets every partition.
func TestOnlineUpgradeAndDowngradeE2E(t *testing.T) {
	b := testutil.Start(t,
		"group.consumer.min.session.timeout.ms=1000", "group.consumer.session.timeout.ms=6000",
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=250",
		"group.consumer.assignment.interval.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admCl := newClient(t, b.Addr())
	adm := kadm.NewClient(admCl)
	const topic, group, parts = "kip848", "migrating-group", 4
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	own := &ownership{owner: map[int32]string{}}
	var mu sync.Mutex
	seen := map[string]int{}
	counts := func(want map[string]int) func() bool {
		return func() bool {
			got := own.counts()
			if len(got) != len(want) {
				return false
			}
			for k, v := range want {
				if got[k] != v {
					return false
				}
			}
			return true
		}
	}
	groupType := func() string {
		lg, err := adm.ListGroups(ctx)
		if err != nil {
			return ""
		}
		for _, g := range lg.Sorted() {
			if g.Group == group {
				return g.ProtocolType + "/" + g.GroupType
			}
		}
		return ""
	}
	classic := startMixedConsumer(t, ctx, b.Addr(), group, topic, "classic", own, &mu, seen,
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(6*time.Second))
	defer func() {
		if classic != nil {
			classic.close()
		}
	}()
	waitFor(t, "classic owns all partitions", 30*time.Second, counts(map[string]int{"classic": parts}))
	if gt := groupType(); gt != "consumer/classic" {
		t.Fatalf("group type before the upgrade: %q", gt)
	}

	modern := startMixedConsumer(t, ctx, b.Addr(), group, topic, "modern", own, &mu, seen,
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
	defer func() {
		if modern != nil {
			modern.close()
		}
	}()
	waitFor(t, "2 partitions each after the upgrade", 30*time.Second, counts(map[string]int{"modern": 2, "classic": 2}))
	if gt := groupType(); gt != "consumer/consumer" {
		t.Fatalf("group type after the upgrade: %q", gt)
	}

	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			r := kgo.StringRecord(fmt.Sprintf("r%d", i))
			r.Partition = int32(i % parts)
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 200)
	waitFor(t, "records consumed in the mixed group", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 200
	})

	modern.close()
	modern = nil
	waitFor(t, "classic owns all after the downgrade", 30*time.Second, counts(map[string]int{"classic": parts}))
	waitFor(t, "group is classic again", 10*time.Second, func() bool { return groupType() == "consumer/classic" })
	produce(200, 260)
	waitFor(t, "records consumed after the downgrade", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 260
	})
	mu.Lock()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
	mu.Unlock()
	own.mu.Lock()
	defer own.mu.Unlock()
	for _, v := range own.violations {
		t.Error(v)
	}
}
