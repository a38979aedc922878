// Package txn runs transactional (exactly-once) applications against muster over loopback:
// franz-go, sarama, confluent-kafka-go and kafkajs producers and consumers, fencing, timeouts,
// and read-process-write copies that survive SIGKILLs of the copier and of muster.
package txn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(t testing.TB, ctx context.Context, addr, topic string, partitions int32) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// readAll reads every record of topic from the start with the isolation level, until no record
// arrives for quiet.
func readAll(t testing.TB, ctx context.Context, addr, topic string, committed bool, quiet time.Duration) []*kgo.Record {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(100*time.Millisecond))
	var out []*kgo.Record
	for {
		pctx, cancel := context.WithTimeout(ctx, quiet)
		fs := cl.PollFetches(pctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r); n++ })
		if n == 0 || ctx.Err() != nil {
			return out
		}
	}
}

// A franz-go transactional producer: an aborted transaction's records are invisible to a
// read_committed consumer and visible to a read_uncommitted one; a committed transaction's are
// visible to both.
func TestTransactionalProducerReadCommitted(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "t", 3)
	p := newClient(t, b.Addr(), kgo.TransactionalID("tx-basic"), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(prefix string, n int, commit kgo.TransactionEndTry) {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := p.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("%s-%d", prefix, i))).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
		if err := p.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end transaction: %v", err)
		}
	}
	produce("aborted", 10, kgo.TryAbort)
	produce("committed", 10, kgo.TryCommit)
	produce("aborted2", 5, kgo.TryAbort)
	produce("committed2", 5, kgo.TryCommit)
	rc := readAll(t, ctx, b.Addr(), "t", true, time.Second)
	ru := readAll(t, ctx, b.Addr(), "t", false, time.Second)
	count := func(rs []*kgo.Record, prefix string) int {
		n := 0
		for _, r := range rs {
			if len(r.Value) > len(prefix) && string(r.Value[:len(prefix)+1]) == prefix+"-" {
				n++
			}
		}
		return n
	}
	if count(rc, "aborted") != 0 || count(rc, "aborted2") != 0 || count(rc, "committed") != 10 || count(rc, "committed2") != 5 || len(rc) != 15 {
		t.Fatalf("read_committed saw %d records: aborted %d, committed %d", len(rc), count(rc, "aborted"), count(rc, "committed"))
	}
	if count(ru, "aborted") != 10 || count(ru, "committed") != 10 || len(ru) != 30 {
		t.Fatalf("read_uncommitted saw %d records", len(ru))
	}
}
