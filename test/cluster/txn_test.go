package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/pgtest"
)

// copyTransactionally runs a franz-go GroupTransactSession copying in → out until ctx ends
// (consume, produce, commit the offsets in the transaction); extra are more client options
// (credentials).
func copyTransactionally(ctx context.Context, seeds []string, group, txnID, in, out string, extra ...kgo.Opt) error {
	sess, err := kgo.NewGroupTransactSession(append(append(clientOpts(seeds), extra...), kgo.TransactionalID(txnID),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(in), kgo.DefaultProduceTopic(out),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.TransactionTimeout(10*time.Second), kgo.SessionTimeout(6*time.Second), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RequireStableFetchOffsets())...)
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
		if _, err := sess.End(ctx, kgo.TransactionEndTry(perr == nil)); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("end: %w", err)
		}
	}
	return nil
}

// TestClusterTransactionsAcrossNodes: exactly-once copying with franz-go's GroupTransactSession
// over three nodes, whose partitions, group coordinator shards and transaction coordinator
// shards are spread over all of them: the transaction coordinator writes its markers at each
// partition's leader and at the group's coordinator wherever they are. Every input record is in
// the output exactly once for a read_committed reader, and the group's committed offsets reach
// the input's end.
func TestClusterTransactionsAcrossNodes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 3)
	for _, topic := range []string{"in", "out"} {
		if _, err := bs[0].Plane().CreateTopic(topic, 6, nil); err != nil {
			t.Fatal(err)
		}
	}
	sd := seeds(bs)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 600
	prod, err := kgo.NewClient(append(clientOpts(sd), kgo.DefaultProduceTopic("in"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, kgo.StringRecord(fmt.Sprintf("r-%d", i)))
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	adm := kadm.NewClient(prod)
	runCopiers(t, ctx, adm, sd, n)

	readOutExactlyOnce(t, ctx, n, clientOpts(sd)...)
}

// runCopiers runs two transactional copiers of in → out in group "copier" (extra options for
// their clients) until the group's committed offsets of "in" add up to n, then stops them.
func runCopiers(t *testing.T, ctx context.Context, adm *kadm.Client, seeds []string, n int64, extra ...kgo.Opt) {
	t.Helper()
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := copyTransactionally(cctx, seeds, "copier", fmt.Sprintf("copier-%d", i), "in", "out", extra...); err != nil {
				errs <- err
			}
		}()
	}
	for {
		offs, err := adm.FetchOffsets(ctx, "copier")
		sum := int64(0)
		if err == nil {
			offs.Each(func(o kadm.OffsetResponse) {
				if o.Topic == "in" && o.At > 0 {
					sum += o.At
				}
			})
		}
		if sum == n {
			return
		}
		select {
		case err := <-errs:
			t.Fatalf("copier: %v", err)
		case <-ctx.Done():
			t.Fatalf("the copiers committed %d of %d input offsets", sum, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readOutExactlyOnce reads topic "out" read_committed from the start with a client of opts and
// fails unless each input record r-0 … r-(n-1) is there exactly once.
func readOutExactlyOnce(t *testing.T, ctx context.Context, n int, opts ...kgo.Opt) {
	t.Helper()
	rd, err := kgo.NewClient(append(opts, kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	seen := map[string]int{}
	for total := 0; total < n && ctx.Err() == nil; {
		rd.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			total++
		})
	}
	for i := 0; i < n; i++ {
		if c := seen[fmt.Sprintf("r-%d", i)]; c != 1 {
			t.Fatalf("r-%d read %d times from out (read_committed)", i, c)
		}
	}
}
