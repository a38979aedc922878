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

// ownership tracks which client owns which partition, from the clients' assignment callbacks,
// and records any partition assigned to a client while another one still owns it.
type ownership struct {
	mu         sync.Mutex
	owner      map[int32]string
	violations []string
}

func (o *ownership) assigned(name string, ps map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range ps["kip848"] {
		if cur, ok := o.owner[p]; ok && cur != name {
			o.violations = append(o.violations, fmt.Sprintf("partition %d assigned to %s while %s owns it", p, name, cur))
		}
		o.owner[p] = name
	}
}

func (o *ownership) released(name string, ps map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range ps["kip848"] {
		if o.owner[p] == name {
			delete(o.owner, p)
		}
	}
}

func (o *ownership) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for _, n := range o.owner {
		out[n]++
	}
	return out
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConsumerGroupServerSideAssignment: three franz-go KIP-848 consumers (ServerSideBalancer)
// share six partitions; no partition is ever owned twice, every record is consumed once, a
// leaving member's partitions move to the others, and a silent member is fenced after the
// session timeout.
func TestConsumerGroupServerSideAssignment(t *testing.T) {
	b := testutil.Start(t,
		"group.consumer.min.session.timeout.ms=1000", "group.consumer.session.timeout.ms=3000",
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=250")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admCl := newClient(t, b.Addr())
	adm := kadm.NewClient(admCl)
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, "kip848"); err != nil {
		t.Fatal(err)
	}

	own := &ownership{owner: map[int32]string{}}
	var mu sync.Mutex
	seen := map[string]int{}
	type consumer struct {
		cl   *kgo.Client
		stop chan struct{}
		done chan struct{}
	}
	start := func(name string) *consumer {
		c := &consumer{stop: make(chan struct{}), done: make(chan struct{})}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ClientID(name),
			kgo.ConsumerGroup("cg848"), kgo.ConsumeTopics("kip848"), kgo.ServerSideBalancer(),
			kgo.Balancers(kgo.CooperativeStickyBalancer()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { own.assigned(name, ps) }),
			kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
				_ = cl.CommitMarkedOffsets(ctx)
				own.released(name, ps)
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { own.released(name, ps) }),
			kgo.AutoCommitMarks(),
		)
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
	stopConsumer := func(c *consumer) {
		close(c.stop)
		<-c.done
		_ = c.cl.CommitMarkedOffsets(context.Background())
		c.cl.Close()
	}
	cs := []*consumer{start("c1"), start("c2"), start("c3")}
	defer func() {
		for _, c := range cs {
			if c != nil {
				stopConsumer(c)
			}
		}
	}()
	balanced := func(want map[string]int) func() bool {
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
	waitFor(t, "2 partitions per consumer", 30*time.Second, balanced(map[string]int{"c1": 2, "c2": 2, "c3": 2}))

	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("kip848"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			r := kgo.StringRecord(fmt.Sprintf("r%d", i))
			r.Partition = int32(i % 6)
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	const n = 600
	produce(0, n)
	waitFor(t, "every record consumed", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	mu.Lock()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
	mu.Unlock()

	// c3 leaves: its partitions move to c1 and c2.
	stopConsumer(cs[2])
	cs[2] = nil
	waitFor(t, "c3's partitions moved", 30*time.Second, balanced(map[string]int{"c1": 3, "c2": 3}))
	produce(n, n+60)
	waitFor(t, "records after the leave consumed", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n+60
	})

	// A silent member: it joins through a raw heartbeat and never heartbeats again.
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version = 1
	hb.Group = "cg848"
	hb.MemberID = "silent-member-0000000001"
	hb.RebalanceTimeoutMillis = 5000
	hb.SubscribedTopicNames = []string{"kip848"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp, err := hb.RequestWith(ctx, admCl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("silent join: %v %+v", err, resp)
	}
	describeMembers := func() []string {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"cg848"}
		out, err := req.RequestWith(ctx, admCl)
		if err != nil || len(out.Groups) != 1 || out.Groups[0].ErrorCode != 0 {
			t.Fatalf("describe: %v %+v", err, out)
		}
		var ids []string
		for _, m := range out.Groups[0].Members {
			ids = append(ids, m.MemberID)
		}
		return ids
	}
	if got := describeMembers(); len(got) != 3 {
		t.Fatalf("members with the silent one: %v", got)
	}
	waitFor(t, "silent member fenced", 20*time.Second, func() bool { return len(describeMembers()) == 2 })
	waitFor(t, "partitions back with c1 and c2", 30*time.Second, balanced(map[string]int{"c1": 3, "c2": 3}))

	own.mu.Lock()
	defer own.mu.Unlock()
	for _, v := range own.violations {
		t.Error(v)
	}
}
