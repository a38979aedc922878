package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

// produceN produces n records "<prefix>-<i>" round-robin to topic.
func produceN(t testing.TB, ctx context.Context, addr, topic string, n int, prefix string) {
	t.Helper()
	p := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, kgo.StringRecord(fmt.Sprintf("%s-%d", prefix, i)))
	}
	if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// copyWithSession runs a franz-go GroupTransactSession that copies in → out until ctx ends.
func copyWithSession(ctx context.Context, addr, group, txnID, in, out string) error {
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(addr), kgo.TransactionalID(txnID),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(in), kgo.DefaultProduceTopic(out),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.TransactionTimeout(10*time.Second), kgo.SessionTimeout(6*time.Second), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RequireStableFetchOffsets())
	if err != nil {
		return err
	}
	defer sess.Close()
	for ctx.Err() == nil {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Key: r.Key, Value: r.Value, Partition: r.Partition})
		})
		var perr error
		if len(recs) > 0 {
			perr = sess.ProduceSync(ctx, recs...).FirstErr()
		}
		committed, err := sess.End(ctx, kgo.TransactionEndTry(perr == nil))
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("end (committed=%v): %w", committed, err)
		}
	}
	return nil
}

// endOffsets sums a topic's high watermarks.
func endOffsets(t testing.TB, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// committedSum sums the group's committed offsets on topic (-1 when the fetch fails).
func committedSum(ctx context.Context, adm *kadm.Client, group, topic string) int64 {
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil || offs.Error() != nil {
		return -1
	}
	var n int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.At > 0 {
			n += o.At
		}
	})
	return n
}

// waitNoOpenTxns waits until topic's last stable offsets reach its high watermarks: a copier
// stopped or killed inside a transaction leaves it open until the coordinator aborts it
// (transaction.timeout.ms, then the next abort sweep), and read_committed readers see nothing
// past it until then.
func waitNoOpenTxns(t testing.TB, ctx context.Context, adm *kadm.Client, topic string) {
	t.Helper()
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		open := 0
		ends.Each(func(o kadm.ListedOffset) {
			if s, ok := stable.Lookup(o.Topic, o.Partition); !ok || s.Offset != o.Offset {
				open++
			}
		})
		if open == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %d partition(s) still hold open transactions", topic, open)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checkExactlyOnce reads out with read_committed, once no transaction is open on it, and
// checks that it holds every input value "<prefix>-<i>" (i < n) exactly once, and that the
// group's committed offsets on in equal its end offsets.
func checkExactlyOnce(t testing.TB, ctx context.Context, addr, group, in, out, prefix string, n int) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	waitNoOpenTxns(t, ctx, adm, out)
	end := endOffsets(t, ctx, adm, in)
	if got := committedSum(ctx, adm, group, in); got != end {
		t.Errorf("group %s committed %d on %s, want its end %d", group, got, in, end)
	}
	seen := map[string]int{}
	for _, r := range readAll(t, ctx, addr, out, true, 2*time.Second) {
		seen[string(r.Value)]++
	}
	missing, dups := 0, 0
	for i := 0; i < n; i++ {
		switch c := seen[fmt.Sprintf("%s-%d", prefix, i)]; {
		case c == 0:
			missing++
		case c > 1:
			dups++
		}
	}
	if missing > 0 || dups > 0 || len(seen) != n {
		t.Fatalf("read_committed %s: %d distinct values, %d missing, %d duplicated (want %d exactly once)", out, len(seen), missing, dups, n)
	}
}

// Two franz-go GroupTransactSession copiers share a group and copy in → out; one stops halfway
// (its partitions move to the other). A read_committed reader of out sees every input record
// exactly once; the committed offsets are the end of in.
func TestGroupTransactSessionCopy(t *testing.T) {
	// A copier stopped inside a transaction leaves it to the coordinator's abort sweep.
	b := testutil.Start(t, "transaction.abort.timed.out.transaction.cleanup.interval.ms=500")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "in", 4)
	createTopic(t, ctx, b.Addr(), "out", 4)
	const n = 2000
	produceN(t, ctx, b.Addr(), "in", n/2, "v")
	var wg sync.WaitGroup
	run := func(ctx context.Context, id string) {
		defer wg.Done()
		if err := copyWithSession(ctx, b.Addr(), "copy", id, "in", "out"); err != nil {
			t.Errorf("copier %s: %v", id, err)
		}
	}
	c1, stop1 := context.WithCancel(ctx)
	defer stop1()
	c2, stop2 := context.WithCancel(ctx)
	defer stop2()
	wg.Add(2)
	go run(c1, "copier-1")
	go run(c2, "copier-2")
	time.Sleep(500 * time.Millisecond)
	p := newClient(t, b.Addr(), kgo.DefaultProduceTopic("in"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := n / 2; i < n; i++ {
		if err := p.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("v-%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if i == 3*n/4 {
			stop1()
		}
	}
	adm := kadm.NewClient(newClient(t, b.Addr()))
	for committedSum(ctx, adm, "copy", "in") != endOffsets(t, ctx, adm, "in") && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	stop2()
	wg.Wait()
	checkExactlyOnce(t, ctx, b.Addr(), "copy", "in", "out", "v", n)
}
