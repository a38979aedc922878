package member_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/streams/member"
)

// exactly_once_v2: a stream thread copies its tasks' input to an output topic with its
// transactional producer, committing the input offsets in each transaction with the member's id
// and epoch; an aborted transaction leaves nothing behind. A read_committed reader of the output
// sees every input record once, and the committed offsets are the end of the input. Once the
// member left the group, its producer's offset commit is refused (a zombie cannot commit), and a
// new producer of the same thread fences the old one.
func TestExactlyOnceV2(t *testing.T) {
	e := newEnv(t)
	e.createTopic("in", 2)
	e.createTopic("out", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.DefaultProduceTopic("in"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	const n = 200
	for i := 0; i < n; i++ {
		if err := in.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("v-%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	m := e.start("eos-app", "m", nil, func(c *member.Config) {
		c.Topology = member.Topology{Subtopologies: []member.Subtopology{{ID: "0", SourceTopics: []string{"in"}}}}
		c.ProcessingGuarantee = member.ExactlyOnceV2
	})
	eventually(t, "tasks assigned", func() bool { return m.Assignment().Active.Len() == 2 })
	p, err := m.NewTransactionalProducer(ctx, 0, kgo.DefaultProduceTopic("out"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if id := p.TransactionalID(); !strings.HasPrefix(id, "eos-app-") || !strings.HasSuffix(id, "-0") || len(id) < len("eos-app-x-0") {
		t.Fatalf("transactional id %q, want <application.id>-<process id>-<thread>", id)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"in": {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	next := map[int32]int64{}
	copied, round := 0, 0
	for copied < n && ctx.Err() == nil {
		fs := cons.PollRecords(ctx, 30)
		var recs []*kgo.Record
		offs := map[int32]int64{}
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Value: r.Value, Partition: r.Partition})
			offs[r.Partition] = r.Offset + 1
		})
		if len(recs) == 0 {
			continue
		}
		if err := p.Begin(); err != nil {
			t.Fatal(err)
		}
		if err := p.Produce(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		round++
		if round == 2 { // one aborted transaction: its copies must never be read_committed
			if err := p.AbortTransaction(ctx); err != nil {
				t.Fatal(err)
			}
			for part, off := range next {
				cons.SetOffsets(map[string]map[int32]kgo.EpochOffset{"in": {part: {Epoch: -1, Offset: off}}})
			}
			if len(next) == 0 {
				cons.SetOffsets(map[string]map[int32]kgo.EpochOffset{"in": {0: {Epoch: -1, Offset: 0}, 1: {Epoch: -1, Offset: 0}}})
			}
			continue
		}
		var offsets []member.Offset
		for part, off := range offs {
			offsets = append(offsets, member.Offset{Topic: "in", Partition: part, Offset: off, LeaderEpoch: -1})
			next[part] = off
		}
		if err := p.CommitTransaction(ctx, offsets); err != nil {
			t.Fatalf("commit: %v", err)
		}
		copied += len(recs)
	}
	got, err := e.adm.FetchOffsets(ctx, "eos-app")
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	got.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != n {
		t.Fatalf("committed offsets sum to %d, want %d", committed, n)
	}
	seen := map[string]int{}
	out, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for len(seen) < n && ctx.Err() == nil {
		out.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("%s read %d times", v, c)
		}
	}
	if len(seen) != n {
		t.Fatalf("read %d distinct records, want %d", len(seen), n)
	}

	// A second producer of thread 0 fences the first.
	p2, err := m.NewTransactionalProducer(ctx, 0, kgo.DefaultProduceTopic("out"))
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Produce(ctx, kgo.StringRecord("zombie")); err == nil {
		if err := p.CommitTransaction(ctx, nil); err == nil {
			t.Fatal("the fenced producer committed")
		}
	}
	// The member leaves: its thread's offset commit is refused.
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p2.Begin(); err != nil {
		t.Fatal(err)
	}
	err = p2.CommitTransaction(ctx, []member.Offset{{Topic: "in", Partition: 0, Offset: 1, LeaderEpoch: -1}})
	if !errors.Is(err, kerr.UnknownMemberID) && !errors.Is(err, kerr.IllegalGeneration) {
		t.Fatalf("offset commit of a member that left: %v", err)
	}
	if err := p2.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := (&member.Member{}).NewTransactionalProducer(ctx, 0); err == nil {
		t.Fatal("a member without exactly_once_v2 made a transactional producer")
	}
}
