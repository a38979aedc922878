package txn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/testutil"
)

// A second producer with the same transactional id fences the first: the first's ongoing
// transaction is aborted and its next send or commit fails with the fencing error; the second
// commits normally. Nothing of the fenced transaction is ever read_committed.
func TestSecondProducerFencesFirst(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "f", 2)
	p1 := newClient(t, b.Addr(), kgo.TransactionalID("tx-fence"), kgo.DefaultProduceTopic("f"), kgo.RecordRetries(3))
	if err := p1.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p1.ProduceSync(ctx, kgo.StringRecord("zombie-1")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	id1, e1, _ := p1.ProducerID(ctx)

	p2 := newClient(t, b.Addr(), kgo.TransactionalID("tx-fence"), kgo.DefaultProduceTopic("f"))
	if err := p2.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p2.ProduceSync(ctx, kgo.StringRecord("live-1")).FirstErr(); err != nil {
		t.Fatalf("the new producer: %v", err)
	}
	id2, e2, _ := p2.ProducerID(ctx)
	if id2 != id1 || e2 != e1+2 {
		t.Errorf("new producer got id %d epoch %d; want id %d epoch %d (fence + bump)", id2, e2, id1, e1+2)
	}

	// The zombie's next send fails, and so does its commit.
	serr := p1.ProduceSync(ctx, kgo.StringRecord("zombie-2")).FirstErr()
	cerr := p1.EndTransaction(ctx, kgo.TryCommit)
	if serr == nil && cerr == nil {
		t.Fatal("the fenced producer sent and committed")
	}
	fencedErr := func(err error) bool {
		return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.InvalidProducerIDMapping)
	}
	if !fencedErr(serr) && !fencedErr(cerr) {
		t.Errorf("fenced producer: send %v, commit %v; want a fencing error", serr, cerr)
	}
	if err := p2.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("the new producer's commit: %v", err)
	}
	var got []string
	for _, r := range readAll(t, ctx, b.Addr(), "f", true, time.Second) {
		got = append(got, string(r.Value))
	}
	if len(got) != 1 || got[0] != "live-1" {
		t.Fatalf("read_committed saw %v, want [live-1]", got)
	}
}

// A producer that vanishes mid-transaction (records produced, offsets staged with
// TxnOffsetCommit) is aborted after its transaction.timeout.ms: the last stable offset
// advances past its records, RequireStable fetches of the group stop answering
// UNSTABLE_OFFSET_COMMIT, the staged offsets never become visible, and the producer is fenced.
func TestTimedOutTransactionIsAborted(t *testing.T) {
	b := testutil.Start(t, "transaction.abort.timed.out.transaction.cleanup.interval.ms=200")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "in", 1)
	createTopic(t, ctx, b.Addr(), "out", 1)
	produceN(t, ctx, b.Addr(), "in", 10, "x")
	p := newClient(t, b.Addr(), kgo.TransactionalID("tx-vanish"), kgo.TransactionTimeout(1500*time.Millisecond),
		kgo.DefaultProduceTopic("out"), kgo.RecordRetries(3))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("never")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw := newClient(t, b.Addr())
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "tx-vanish", pid, epoch, "vg"
	if r, err := ao.RequestWith(ctx, raw); err != nil || r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %v", err, r)
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = "tx-vanish", "vg", pid, epoch
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "in", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 10, LeaderEpoch: -1}}}}
	if r, err := tc.RequestWith(ctx, raw); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("TxnOffsetCommit: %v %+v", err, r)
	}
	adm := kadm.NewClient(raw)
	lso := func() int64 {
		o, err := adm.ListEndOffsets(ctx, "out") // read_uncommitted: the high watermark
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.IsolationLevel = 5, 1
		req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "out", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1, CurrentLeaderEpoch: -1}}}}
		r, err := req.RequestWith(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		hw, _ := o.Lookup("out", 0)
		if lso := r.Topics[0].Partitions[0].Offset; lso != 0 && lso != hw.Offset {
			t.Fatalf("lso %d, hw %d", lso, hw.Offset)
		}
		return r.Topics[0].Partitions[0].Offset
	}
	stable := func() int16 {
		f, err := adm.FetchOffsets(kadm.RequireStable(ctx), "vg")
		if err != nil {
			return -1
		}
		o, _ := f.Lookup("in", 0)
		if o.Err != nil {
			var ke *kerr.Error
			if errors.As(o.Err, &ke) {
				return ke.Code
			}
			return -1
		}
		return 0
	}
	if got := lso(); got != 0 {
		t.Fatalf("lso %d while the transaction is open, want 0", got)
	}
	start := time.Now()
	for lso() == 0 && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("aborted %v after the transaction began (timeout 1.5s)", time.Since(start).Round(10*time.Millisecond))
	if code := stable(); code != 0 {
		t.Fatalf("RequireStable fetch after the abort: %v", kerr.ErrorForCode(code))
	}
	f, _ := adm.FetchOffsets(ctx, "vg")
	if o, ok := f.Lookup("in", 0); ok && o.At >= 0 {
		t.Fatalf("the aborted transaction's offset became visible: %+v", o)
	}
	if recs := readAll(t, ctx, b.Addr(), "out", true, time.Second); len(recs) != 0 {
		t.Fatalf("read_committed saw %d records of the aborted transaction", len(recs))
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the timed-out producer committed")
	} else {
		t.Logf("the timed-out producer's commit: %v", err)
	}
}

// A zombie member's TxnOffsetCommit from an old generation is refused (KIP-447): the group
// rebalanced, so its generation is stale (ILLEGAL_GENERATION); an unknown member id is
// UNKNOWN_MEMBER_ID; the current generation commits.
func TestZombieTxnOffsetCommitRefused(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "z", 1)
	cl := newClient(t, b.Addr())
	join := func(member string) (string, int32) {
		for {
			req := kmsg.NewPtrJoinGroupRequest()
			req.Version, req.Group, req.MemberID = 7, "zg", member
			req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 30000, 30000, "consumer"
			md := kmsg.NewConsumerMemberMetadata()
			md.Topics = []string{"z"}
			req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ErrorCode == kerr.MemberIDRequired.Code {
				member = resp.MemberID
				continue
			}
			if resp.ErrorCode != 0 {
				t.Fatalf("join: %v", kerr.ErrorForCode(resp.ErrorCode))
			}
			sreq := kmsg.NewPtrSyncGroupRequest()
			sreq.Version, sreq.Group, sreq.MemberID, sreq.Generation = 5, "zg", resp.MemberID, resp.Generation
			sreq.ProtocolType, sreq.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range") // mandatory from v5
			sreq.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: resp.MemberID, MemberAssignment: []byte{}}}
			if sr, err := sreq.RequestWith(ctx, cl); err != nil || sr.ErrorCode != 0 {
				t.Fatalf("sync: %v %v", err, sr)
			}
			return resp.MemberID, resp.Generation
		}
	}
	member, gen1 := join("")
	_, gen2 := join(member) // the member rejoins: a new generation
	if gen2 <= gen1 {
		t.Fatalf("generations %d then %d", gen1, gen2)
	}
	p := newClient(t, b.Addr(), kgo.TransactionalID("tx-zombie"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "tx-zombie", pid, epoch, "zg"
	if r, err := ao.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %v", err, r)
	}
	commit := func(memberID string, gen int32) error {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version = 3
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "tx-zombie", "zg", pid, epoch
		req.MemberID, req.Generation = memberID, gen
		req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "z", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
		r, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode)
	}
	for _, c := range []struct {
		member string
		gen    int32
		want   error
	}{{member, gen1, kerr.IllegalGeneration}, {"zombie", gen2, kerr.UnknownMemberID}, {member, gen2, nil}} {
		if err := commit(c.member, c.gen); !errors.Is(err, c.want) && !(err == nil && c.want == nil) {
			t.Errorf("TxnOffsetCommit member %s generation %d: %v, want %v", c.member, c.gen, err, c.want)
		}
	}
	// Without AddOffsetsToTxn for another group, the commit is refused.
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = 3
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "tx-zombie", "other-group", pid, epoch, -1
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "z", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
	r, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	want := kerr.InvalidTxnState // up to v3; v4 answers TRANSACTION_ABORTABLE
	if r.Version >= 4 {
		want = kerr.TransactionAbortable
	}
	if code := r.Topics[0].Partitions[0].ErrorCode; code != want.Code && shardOf("other-group") != shardOf("zg") {
		t.Errorf("TxnOffsetCommit v%d of a group not added: %v, want %v", r.Version, kerr.ErrorForCode(code), want)
	}
	if err := p.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}

// shardOf is the group coordinator shard of a group with the test broker's 8 shards.
func shardOf(group string) int32 { return coordinator.ShardFor(group, 8) }
