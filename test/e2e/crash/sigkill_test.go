package crash

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestSIGKILLKeepsAcknowledgedRecordsAndCommits: a producer keeps producing while a classic
// group consumes part of the topic and commits synchronously; muster is killed with SIGKILL
// mid-stream and restarted on the same data dir. Every acknowledged record is there, every
// acknowledged commit is there, and the group continues from its committed offsets: no
// committed record is consumed again and every other record is consumed.
func TestSIGKILLKeepsAcknowledgedRecordsAndCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	addr, dir := freeAddr(t), t.TempDir()
	p := startProc(t, addr, dir)
	const topic, group = "crash-topic", "crash-group"
	adm := kadm.NewClient(newClient(t, addr))
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	// Producer: every acknowledged value is recorded; it runs until the broker dies.
	var mu sync.Mutex
	acked := map[string]bool{}
	prod := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.RecordRetries(0), kgo.RequestRetries(0), kgo.RecordDeliveryTimeout(3*time.Second))
	prodCtx, prodStop := context.WithCancel(ctx)
	prodDone := make(chan struct{})
	go func() {
		defer close(prodDone)
		for i := 0; prodCtx.Err() == nil; i++ {
			var batch []*kgo.Record
			for j := 0; j < 10; j++ {
				batch = append(batch, kgo.StringRecord(fmt.Sprintf("v-%d-%d", i, j)))
			}
			for _, r := range prod.ProduceSync(prodCtx, batch...) {
				if r.Err == nil {
					mu.Lock()
					acked[string(r.Record.Value)] = true
					mu.Unlock()
				}
			}
		}
	}()
	ackedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	for ackedCount() < 300 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}

	// Phase 1: a group member consumes some records and commits them synchronously.
	// Its session is short: it cannot leave (the broker dies first), so after the restart the
	// re-armed session timer must remove it before the group can move on.
	phase1 := map[string]bool{}
	c1 := newClient(t, addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.SessionTimeout(6*time.Second), kgo.RebalanceTimeout(6*time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	for len(phase1) < 200 && ctx.Err() == nil {
		fs := c1.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { phase1[string(r.Value)] = true })
	}
	if err := c1.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil || committed.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, committed.Error())
	}
	var committedTotal int64
	committed.Each(func(o kadm.OffsetResponse) { committedTotal += o.At })
	if committedTotal != int64(len(phase1)) {
		t.Fatalf("committed offsets sum to %d, consumed %d", committedTotal, len(phase1))
	}
	// Crash with the producer still running (and the group member still in the group).
	time.Sleep(100 * time.Millisecond)
	p.kill()
	prodStop()
	prod.Close() // fails what is still buffered or in flight
	<-prodDone
	c1.Close()
	t.Logf("acknowledged %d records, committed %d before SIGKILL", ackedCount(), committedTotal)

	// Restart on the same data dir.
	startProc(t, addr, dir)
	adm2 := kadm.NewClient(newClient(t, addr))
	after, err := adm2.FetchOffsets(ctx, group)
	if err != nil || after.Error() != nil {
		t.Fatalf("fetch offsets after restart: %v %v", err, after.Error())
	}
	committed.Each(func(o kadm.OffsetResponse) {
		got, ok := after.Lookup(o.Topic, o.Partition)
		if !ok || got.At != o.At {
			t.Errorf("%s/%d: committed offset %d before the crash, %v after", o.Topic, o.Partition, o.At, got.At)
		}
	})

	// Every acknowledged record is in the log.
	ends, err := adm2.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	all := map[string]bool{}
	reader := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	for int64(len(all)) < total && ctx.Err() == nil {
		reader.PollFetches(ctx).EachRecord(func(r *kgo.Record) { all[string(r.Value)] = true })
	}
	mu.Lock()
	for v := range acked {
		if !all[v] {
			t.Errorf("acknowledged record %s lost", v)
		}
	}
	mu.Unlock()

	// Phase 2: the group continues from its committed offsets.
	phase2 := map[string]bool{}
	c2 := newClient(t, addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	for int64(len(phase2)) < total-committedTotal && ctx.Err() == nil {
		c2.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if phase1[string(r.Value)] {
				t.Errorf("committed record %s consumed again", r.Value)
			}
			phase2[string(r.Value)] = true
		})
	}
	if int64(len(phase2)) != total-committedTotal {
		t.Fatalf("phase 2 consumed %d records, want %d", len(phase2), total-committedTotal)
	}
	if err := c2.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit after restart: %v", err)
	}
}
