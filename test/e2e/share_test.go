package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

// shareOverrides make share group timings test-sized: short heartbeats, sessions and locks.
var shareOverrides = []string{
	"group.share.min.heartbeat.interval.ms=100", "group.share.heartbeat.interval.ms=200",
	"group.share.min.session.timeout.ms=1000", "group.share.session.timeout.ms=3000",
	"group.share.min.record.lock.duration.ms=1000", "group.share.record.lock.duration.ms=3000",
}

func startShareBroker(t *testing.T, extra ...string) *testutil.Broker {
	return testutil.Start(t, append(append([]string{}, shareOverrides...), extra...)...)
}

// shareConsumer is a kgo share consumer of topic in group.
func shareConsumer(t *testing.T, addr, group, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, addr, append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
}

// setGroupConfig sets a group's dynamic configs (IncrementalAlterConfigs, GROUP resource).
func setGroupConfig(t *testing.T, ctx context.Context, cl *kgo.Client, group string, kv ...string) {
	t.Helper()
	if r := alterGroup(t, ctx, cl, group, false, kv...); r.ErrorCode != 0 {
		t.Fatalf("alter group config %s %v: %d %s", group, kv, r.ErrorCode, deref(r.ErrorMessage))
	}
}

func produceValues(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("v%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShareGroupThreeConsumersExactlyOnce: three kgo share consumers on one 1-partition topic,
// all accepting: each record is delivered to exactly one of them.
func TestShareGroupThreeConsumersExactlyOnce(t *testing.T) {
	b := startShareBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admCl := newClient(t, b.Addr())
	adm := kadm.NewClient(admCl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "q"); err != nil {
		t.Fatal(err)
	}
	setGroupConfig(t, ctx, admCl, "sg", "share.auto.offset.reset", "earliest")
	const n = 600
	produceValues(t, ctx, admCl, "q", 0, n)

	var mu sync.Mutex
	seen := map[string][]string{}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for c := 0; c < 3; c++ {
		name := fmt.Sprintf("c%d", c)
		cl := shareConsumer(t, b.Addr(), "sg", "q", kgo.ShareMaxRecords(50))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					mu.Lock()
					seen[string(r.Value)] = append(seen[string(r.Value)], name)
					mu.Unlock()
				})
			}
		}()
	}
	waitFor(t, "all records", 45*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= n
	})
	close(done)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	per := map[string]int{}
	for v, who := range seen {
		if len(who) != 1 {
			t.Errorf("%s delivered %d times: %v", v, len(who), who)
		}
		per[who[0]]++
	}
	t.Logf("records per consumer: %v", per)
}

// delivery is one record a share consumer got.
type delivery struct {
	consumer string
	value    string
	count    int32
}

// shareLoop runs a share consumer until stop is closed: every record is passed to decide, which
// returns how to acknowledge it (0: leave it unacknowledged, auto-accepted at the next poll).
// Deliveries are reported on out.
type shareLoop struct {
	mu   sync.Mutex
	got  []delivery
	stop chan struct{}
	done chan struct{}
}

func runShareLoop(ctx context.Context, cl *kgo.Client, name string, decide func(r *kgo.Record) kgo.AckStatus) *shareLoop {
	l := &shareLoop{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			fs := cl.PollFetches(pctx)
			cancel()
			fs.EachRecord(func(r *kgo.Record) {
				l.mu.Lock()
				l.got = append(l.got, delivery{consumer: name, value: string(r.Value), count: r.DeliveryCount()})
				l.mu.Unlock()
				if st := decide(r); st != 0 {
					r.Ack(st)
				}
			})
		}
	}()
	return l
}

func (l *shareLoop) halt() {
	close(l.stop)
	<-l.done
}

func (l *shareLoop) deliveries() []delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]delivery(nil), l.got...)
}

func (l *shareLoop) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

func accept(*kgo.Record) kgo.AckStatus { return kgo.AckAccept }

// newShareTopic creates a 1-partition topic and a client for the test.
func newShareTopic(t *testing.T, ctx context.Context, b *testutil.Broker, topic string) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	return cl, adm
}

// TestShareGroupReleaseRedelivers: a consumer RELEASEs every record and leaves; a second
// consumer gets all of them again with a higher delivery count.
func TestShareGroupReleaseRedelivers(t *testing.T) {
	b := startShareBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, _ := newShareTopic(t, ctx, b, "rel")
	setGroupConfig(t, ctx, cl, "g-rel", "share.auto.offset.reset", "earliest", "share.delivery.count.limit", "10")
	produceValues(t, ctx, cl, "rel", 0, 20)

	// a releases what it polls until it has seen every record, then closes at once (kgo's
	// prefetch may take records back in between: their counts only grow).
	a := shareConsumer(t, b.Addr(), "g-rel", "rel")
	seenA := map[string]bool{}
	waitFor(t, "a sees the records", 20*time.Second, func() bool {
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer pcancel()
		for _, r := range a.PollFetches(pctx).Records() {
			seenA[string(r.Value)] = true
			r.Ack(kgo.AckRelease)
		}
		return len(seenA) == 20
	})
	if err := a.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	a.Close()

	bc := shareConsumer(t, b.Addr(), "g-rel", "rel")
	lb := runShareLoop(ctx, bc, "b", accept)
	waitFor(t, "b gets the released records", 20*time.Second, func() bool {
		seen := map[string]bool{}
		for _, d := range lb.deliveries() {
			seen[d.value] = true
		}
		return len(seen) == 20
	})
	lb.halt()
	for _, d := range lb.deliveries() {
		if d.count < 2 {
			t.Errorf("b got %s with delivery count %d, want at least 2", d.value, d.count)
		}
	}
}

// TestShareGroupRejectNeverRedelivers: rejected records are archived: no consumer ever gets them
// again, while new records keep flowing.
func TestShareGroupRejectNeverRedelivers(t *testing.T) {
	b := startShareBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, adm := newShareTopic(t, ctx, b, "rej")
	setGroupConfig(t, ctx, cl, "g-rej", "share.auto.offset.reset", "earliest")
	produceValues(t, ctx, cl, "rej", 0, 10)

	a := shareConsumer(t, b.Addr(), "g-rej", "rej")
	la := runShareLoop(ctx, a, "a", func(*kgo.Record) kgo.AckStatus { return kgo.AckReject })
	waitFor(t, "a rejects the records", 20*time.Second, func() bool { return la.count() >= 10 })
	la.halt()
	if err := a.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	a.Close()

	bc := shareConsumer(t, b.Addr(), "g-rej", "rej")
	lb := runShareLoop(ctx, bc, "b", accept)
	produceValues(t, ctx, cl, "rej", 10, 5)
	waitFor(t, "b gets the new records", 20*time.Second, func() bool { return lb.count() >= 5 })
	time.Sleep(time.Second)
	lb.halt()
	for _, d := range lb.deliveries() {
		var n int
		fmt.Sscanf(d.value, "v%d", &n)
		if n < 10 {
			t.Errorf("rejected record %s delivered again (count %d)", d.value, d.count)
		}
	}
	offs, err := adm.DescribeShareGroupOffsets(ctx, "g-rej")
	if err != nil {
		t.Fatal(err)
	}
	if o := offs["g-rej"].Offsets["rej"][0]; o.StartOffset != 15 {
		t.Errorf("share-partition start offset %d, want 15", o.StartOffset)
	}
}

// TestShareGroupLockExpiry: a consumer that takes records and never acknowledges them loses
// them when their acquisition lock expires (share.record.lock.duration.ms); another consumer
// then gets them, with the delivery count incremented.
func TestShareGroupLockExpiry(t *testing.T) {
	b := startShareBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, _ := newShareTopic(t, ctx, b, "lock")
	setGroupConfig(t, ctx, cl, "g-lock", "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "2000")
	produceValues(t, ctx, cl, "lock", 0, 10)

	// a polls once and then hangs: no further poll, so nothing is acknowledged.
	a := shareConsumer(t, b.Addr(), "g-lock", "lock")
	var got []*kgo.Record
	waitFor(t, "a gets records", 20*time.Second, func() bool {
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer pcancel()
		got = append(got, a.PollFetches(pctx).Records()...)
		return len(got) > 0
	})
	for _, r := range got {
		if dl := time.Until(r.AcquisitionDeadline()); dl > 2500*time.Millisecond || dl <= 0 {
			t.Errorf("acquisition deadline in %v, want about 2s", dl)
		}
	}
	start := time.Now()
	bc := shareConsumer(t, b.Addr(), "g-lock", "lock")
	lb := runShareLoop(ctx, bc, "b", accept)
	want := map[string]bool{}
	for _, r := range got {
		want[string(r.Value)] = true
	}
	waitFor(t, "b gets a's records after the lock expired", 20*time.Second, func() bool {
		n := 0
		for _, d := range lb.deliveries() {
			if want[d.value] && d.count >= 2 {
				n++
			}
		}
		return n == len(want)
	})
	if el := time.Since(start); el < time.Second {
		t.Errorf("a's records went to b after %v, before their lock could expire", el)
	}
	lb.halt()
}

// TestShareGroupDeliveryCountLimit: a record released on every delivery is delivered
// share.delivery.count.limit times, then archived.
func TestShareGroupDeliveryCountLimit(t *testing.T) {
	b := startShareBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, adm := newShareTopic(t, ctx, b, "poison")
	setGroupConfig(t, ctx, cl, "g-poison", "share.auto.offset.reset", "earliest", "share.delivery.count.limit", "3")
	produceValues(t, ctx, cl, "poison", 0, 4)

	a := shareConsumer(t, b.Addr(), "g-poison", "poison")
	la := runShareLoop(ctx, a, "a", func(*kgo.Record) kgo.AckStatus { return kgo.AckRelease })
	waitFor(t, "the share-partition moves past the archived records", 30*time.Second, func() bool {
		offs, err := adm.DescribeShareGroupOffsets(ctx, "g-poison")
		return err == nil && offs["g-poison"].Offsets["poison"][0].StartOffset == 4
	})
	time.Sleep(500 * time.Millisecond)
	la.halt()
	counts := map[string][]int32{}
	for _, d := range la.deliveries() {
		counts[d.value] = append(counts[d.value], d.count)
	}
	for v, cs := range counts {
		if len(cs) != 3 || cs[0] != 1 || cs[1] != 2 || cs[2] != 3 {
			t.Errorf("%s delivered with counts %v, want [1 2 3]", v, cs)
		}
	}
	if len(counts) != 4 {
		t.Errorf("%d records delivered, want 4", len(counts))
	}
}

// TestShareGroupAutoOffsetReset: a new share group starts at the end of the log (latest, the
// default) or at its beginning (share.auto.offset.reset=earliest).
func TestShareGroupAutoOffsetReset(t *testing.T) {
	b := startShareBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, adm := newShareTopic(t, ctx, b, "reset")
	produceValues(t, ctx, cl, "reset", 0, 5)

	setGroupConfig(t, ctx, cl, "g-earliest", "share.auto.offset.reset", "earliest")
	e := shareConsumer(t, b.Addr(), "g-earliest", "reset")
	le := runShareLoop(ctx, e, "earliest", accept)
	l := shareConsumer(t, b.Addr(), "g-latest", "reset")
	ll := runShareLoop(ctx, l, "latest", accept)
	waitFor(t, "latest group starts", 20*time.Second, func() bool {
		offs, err := adm.DescribeShareGroupOffsets(ctx, "g-latest")
		return err == nil && offs["g-latest"].Offsets["reset"][0].StartOffset == 5
	})
	produceValues(t, ctx, cl, "reset", 5, 5)
	waitFor(t, "both groups get their records", 20*time.Second, func() bool { return le.count() >= 10 && ll.count() >= 5 })
	time.Sleep(300 * time.Millisecond)
	le.halt()
	ll.halt()
	for _, d := range ll.deliveries() {
		var n int
		fmt.Sscanf(d.value, "v%d", &n)
		if n < 5 {
			t.Errorf("latest group got %s, produced before it started", d.value)
		}
	}
	if n := ll.count(); n != 5 {
		t.Errorf("latest group got %d records, want 5", n)
	}
	if n := le.count(); n != 10 {
		t.Errorf("earliest group got %d records, want 10", n)
	}
}
