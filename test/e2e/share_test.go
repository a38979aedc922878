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
