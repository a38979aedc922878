package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pos is a record's place in a topic.
type pos struct {
	partition int32
	offset    int64
}

// offsetLedger remembers which value sits at which offset, as one observer saw it: a second
// value at the same offset means an offset was reused (two leaders wrote it).
// A value at two offsets means a record was written twice (an idempotent producer's retry not
// deduplicated).
type offsetLedger struct {
	mu       sync.Mutex
	at       map[pos]string
	where    map[string]pos
	conflict []string
	dups     []string
}

func newLedger() *offsetLedger { return &offsetLedger{at: map[pos]string{}, where: map[string]pos{}} }

func (l *offsetLedger) note(p pos, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.at[p]; ok && prev != value {
		l.conflict = append(l.conflict, fmt.Sprintf("partition %d offset %d: %q and %q", p.partition, p.offset, prev, value))
		return
	}
	if w, ok := l.where[value]; ok && w != p {
		l.dups = append(l.dups, fmt.Sprintf("%q at partition %d offsets %d and %d", value, p.partition, w.offset, p.offset))
	}
	l.at[p], l.where[value] = value, p
}

// producer produces unique values to one topic with an idempotent franz-go producer (acks=all),
// at a bounded rate, and remembers where each acknowledged record went.
type producer struct {
	cl     *kgo.Client
	finish func(t *testing.T) // instead of cl (confluent-kafka-go)
	ledger *offsetLedger
	mu     sync.Mutex
	acked  map[string]pos
	errs   map[string]int
	done   chan struct{}
	wg     sync.WaitGroup
}

func startProducer(t *testing.T, seeds []string, topic string, every time.Duration) *producer {
	return produceTo(t, seeds, topic, -1, every)
}

// startPartitionProducer produces to one partition only, one record every 2 ms.
func startPartitionProducer(t *testing.T, seeds []string, topic string, partition int32) *producer {
	return produceTo(t, seeds, topic, partition, 2*time.Millisecond)
}

func produceTo(t *testing.T, seeds []string, topic string, partition int32, every time.Duration) *producer {
	t.Helper()
	opts := append(clientOpts(seeds), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(2*time.Millisecond),
		kgo.MaxBufferedRecords(5000), kgo.RecordDeliveryTimeout(0))
	if partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := &producer{cl: cl, ledger: newLedger(), acked: map[string]pos{}, errs: map[string]int{}, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
			v := fmt.Sprintf("v%08d", i)
			cl.Produce(context.Background(), &kgo.Record{Key: []byte(v), Value: []byte(v), Partition: partition}, func(r *kgo.Record, err error) {
				if err != nil {
					p.mu.Lock()
					p.errs[errName(err)]++
					p.mu.Unlock()
					return
				}
				at := pos{r.Partition, r.Offset}
				p.ledger.note(at, v)
				p.mu.Lock()
				p.acked[v] = at
				p.mu.Unlock()
			})
		}
	}()
	return p
}

func errName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func (p *producer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// waitProgress waits until n more records were acknowledged.
func (p *producer) waitProgress(t *testing.T, n int, d time.Duration) {
	t.Helper()
	start := p.ackedCount()
	for deadline := time.Now().Add(d); p.ackedCount() < start+n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("producer made no progress in %v (%d acknowledged, errors %v)", d, len(p.acked), p.errs)
		}
	}
}

// stop stops producing and waits (bounded) for the records in flight.
func (p *producer) stop(t *testing.T) {
	t.Helper()
	close(p.done)
	p.wg.Wait()
	if p.finish != nil {
		p.finish(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		t.Logf("producer flush: %v (records still unacknowledged are not required)", err)
	}
	p.cl.Close()
}

// groupConsumers is a consumer group of franz-go members (classic, or KIP-848 with the
// server-side assignor) that records every record it receives.
type groupConsumers struct {
	group   string
	cls     []*kgo.Client
	closers []func() // confluent-kafka-go consumers
	ledger  *offsetLedger
	mu      sync.Mutex
	seen    map[string]bool
	stopc   chan struct{}
	wg      sync.WaitGroup
}

func startGroup(t *testing.T, seeds []string, topic, group string, members int, kip848 bool) *groupConsumers {
	t.Helper()
	g := &groupConsumers{group: group, ledger: newLedger(), seen: map[string]bool{}, stopc: make(chan struct{})}
	for i := 0; i < members; i++ {
		opts := append(clientOpts(seeds), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(500*time.Millisecond),
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond), kgo.FetchMaxWait(500*time.Millisecond))
		if kip848 {
			opts = append(opts, kgo.ServerSideBalancer())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		g.cls = append(g.cls, cl)
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for {
				select {
				case <-g.stopc:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				fs := cl.PollFetches(ctx)
				cancel()
				fs.EachRecord(func(r *kgo.Record) {
					g.ledger.note(pos{r.Partition, r.Offset}, string(r.Value))
					g.mu.Lock()
					g.seen[string(r.Value)] = true
					g.mu.Unlock()
				})
			}
		}()
	}
	return g
}

// missing returns the acknowledged values the group has not received (sorted, at most 5).
func (g *groupConsumers) missing(acked map[string]pos) (int, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for v := range acked {
		if !g.seen[v] {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	n := len(out)
	if len(out) > 5 {
		out = out[:5]
	}
	return n, out
}

// missingByPartition counts the acknowledged records the group has not received per partition.
func (g *groupConsumers) missingByPartition(acked map[string]pos) map[int32]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[int32]int{}
	for v, at := range acked {
		if !g.seen[v] {
			out[at.partition]++
		}
	}
	return out
}

// highest is the highest offset the group received per partition.
func (g *groupConsumers) highest() map[int32]int64 {
	g.ledger.mu.Lock()
	defer g.ledger.mu.Unlock()
	out := map[int32]int64{}
	for at := range g.ledger.at {
		if at.offset >= out[at.partition] {
			out[at.partition] = at.offset
		}
	}
	return out
}

func (g *groupConsumers) close() {
	close(g.stopc)
	g.wg.Wait()
	for _, cl := range g.cls {
		cl.Close()
	}
	for _, c := range g.closers {
		c()
	}
}

// merge adds what q acknowledged to p's view (two producers checked as one).
func (p *producer) merge(q *producer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for v, at := range q.acked {
		p.acked[v] = at
		p.ledger.note(at, v)
	}
	for e, n := range q.errs {
		p.errs["confluent: "+e] += n
	}
}

// verifyConsumed waits until every group received every acknowledged record, and checks that
// no observer saw two values at one offset.
func verifyConsumed(t *testing.T, p *producer, groups []*groupConsumers, d time.Duration) {
	t.Helper()
	p.mu.Lock()
	acked := make(map[string]pos, len(p.acked))
	for v, at := range p.acked {
		acked[v] = at
	}
	errs := fmt.Sprint(p.errs)
	p.mu.Unlock()
	for _, g := range groups {
		for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
			n, some := g.missing(acked)
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("group %s: %d of %d acknowledged records never consumed (e.g. %v); missing per partition %v, group's highest offset per partition %v",
					g.group, n, len(acked), some, g.missingByPartition(acked), g.highest())
			}
		}
	}
	for _, l := range append([]*offsetLedger{p.ledger}, ledgersOf(groups)...) {
		l.mu.Lock()
		if len(l.conflict) > 0 {
			t.Errorf("an offset holds two records: %v", l.conflict)
		}
		if len(l.dups) > 0 {
			t.Errorf("records written twice: %v", l.dups)
		}
		l.mu.Unlock()
	}
	// The producer's and the consumers' views agree on every acknowledged record's offset.
	for _, g := range groups {
		g.ledger.mu.Lock()
		for v, at := range acked {
			if got, ok := g.ledger.at[at]; ok && got != v {
				t.Errorf("group %s read %q at partition %d offset %d where %q was acknowledged", g.group, got, at.partition, at.offset, v)
			}
		}
		g.ledger.mu.Unlock()
	}
	t.Logf("consumed: %d acknowledged records by %d groups; producer errors seen %s", len(acked), len(groups), errs)
}

func ledgersOf(groups []*groupConsumers) []*offsetLedger {
	var out []*offsetLedger
	for _, g := range groups {
		out = append(out, g.ledger)
	}
	return out
}

// partitionLeader is one partition as a node's Metadata describes it.
type partitionLeader struct {
	leader, epoch int32
	code          int16
}

// leadersOf returns topic's partitions as node n's Metadata names them (nil: no answer).
func leadersOf(n *node, topic string) []partitionLeader {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := n.raw(req)
	if err != nil {
		return nil
	}
	md := resp.(*kmsg.MetadataResponse)
	if len(md.Topics) != 1 || md.Topics[0].ErrorCode != 0 {
		return nil
	}
	out := make([]partitionLeader, len(md.Topics[0].Partitions))
	for _, p := range md.Topics[0].Partitions {
		if p.Partition >= 0 && int(p.Partition) < len(out) {
			out[p.Partition] = partitionLeader{p.Leader, p.LeaderEpoch, p.ErrorCode}
		}
	}
	return out
}

// waitLeadersExcept waits until node n names a live leader other than node not for every
// partition of topic, and returns them.
func waitLeadersExcept(t *testing.T, n *node, topic string, not int32, d time.Duration) []partitionLeader {
	t.Helper()
	var last []partitionLeader
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		last = leadersOf(n, topic)
		ok := len(last) > 0
		for _, p := range last {
			if p.code != 0 || p.leader < 0 || p.leader == not {
				ok = false
			}
		}
		if ok {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d: partitions of %s not led by the others within %v: %+v", n.id, topic, d, last)
		}
	}
}
