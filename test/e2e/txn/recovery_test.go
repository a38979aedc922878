package txn

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/coordinator/txn"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/testutil"
)

// A crash between a transaction's PrepareCommit and its markers (Kafka's
// loadTransactionsForTxnTopicPartition): the restarted coordinator finds the transaction
// prepared and completes it — the COMMIT markers reach the data partition (the last stable
// offset passes the records) and the group coordinator (the staged offsets become committed),
// and the state is CompleteCommit. An Ongoing transaction found on the restart stays Ongoing and
// abortable. The crash is made by writing the PrepareCommit record into the stopped broker's
// store, as the coordinator does before its markers.
func TestPreparedTransactionCompletesOnRestart(t *testing.T) {
	dir := t.TempDir()
	b := testutil.StartIn(t, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "r", 1)
	createTopic(t, ctx, b.Addr(), "src", 1)
	openTxn := func(id string) (int64, int16) {
		p := newClient(t, b.Addr(), kgo.TransactionalID(id), kgo.DefaultProduceTopic("r"), kgo.TransactionTimeout(10*time.Minute))
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, kgo.StringRecord(id+"-1"), kgo.StringRecord(id+"-2")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pid, epoch, err := p.ProducerID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		raw := newClient(t, b.Addr())
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, pid, epoch, "g-"+id
		if r, err := ao.RequestWith(ctx, raw); err != nil || r.ErrorCode != 0 {
			t.Fatalf("AddOffsetsToTxn: %v %+v", err, r)
		}
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = id, "g-"+id, pid, epoch, -1
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "src", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7, LeaderEpoch: -1}}}}
		if r, err := tc.RequestWith(ctx, raw); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("TxnOffsetCommit: %v %+v", err, r)
		}
		return pid, epoch
	}
	openTxn("prepared")
	openTxn("ongoing")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// The crash point: "prepared" is PrepareCommit in the store, no marker written.
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenPebbleNamespace(db, store.TransactionNamespace, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	shard := txn.ShardFor("prepared", 8)
	var key, val []byte
	if err := st.Scan(ctx, shard, func(r store.Record) error {
		var k kmsg.TxnMetadataKey
		if k.ReadFrom(r.Key) == nil && k.TransactionalID == "prepared" {
			key, val = r.Key, r.Value
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(val); err != nil || v.State != kmsg.TransactionStateOngoing {
		t.Fatalf("stored state %v %v", v.State, err)
	}
	v.State = kmsg.TransactionStatePrepareCommit
	lease, err := st.Acquire(ctx, shard)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Append(ctx, []store.Record{{Key: key, Value: v.AppendTo(nil)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	b2 := testutil.StartIn(t, dir, nil)
	adm := kadm.NewClient(newClient(t, b2.Addr()))
	var d kadm.DescribedTransactions
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if d, err = adm.DescribeTransactions(ctx, "prepared", "ongoing"); err == nil && d["prepared"].State == "CompleteCommit" {
			break
		}
	}
	if d["prepared"].State != "CompleteCommit" || d["ongoing"].State != "Ongoing" {
		t.Fatalf("after the restart: prepared %s, ongoing %s", d["prepared"].State, d["ongoing"].State)
	}
	offs, err := adm.FetchOffsets(kadm.RequireStable(ctx), "g-prepared")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("src", 0); o.Err != nil || o.At != 7 {
		t.Fatalf("the prepared transaction's offset: %+v", o)
	}
	if offs, err := adm.FetchOffsets(ctx, "g-ongoing"); err != nil {
		t.Fatal(err)
	} else if o, ok := offs.Lookup("src", 0); ok && o.At >= 0 {
		t.Fatalf("the ongoing transaction's offset is visible: %+v", o)
	}
	// Asking for stable offsets of the partition the ongoing transaction holds: UNSTABLE_OFFSET_COMMIT.
	{
		req := kmsg.NewPtrOffsetFetchRequest()
		req.RequireStable = true
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = "g-ongoing"
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = "src", []int32{0}
		g.Topics = append(g.Topics, rt)
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, newClient(t, b2.Addr(), kgo.MaxVersions(kversion.V3_8_0())))
		if err != nil {
			t.Fatal(err)
		}
		if p := resp.Groups[0].Topics[0].Partitions[0]; p.ErrorCode != kerr.UnstableOffsetCommit.Code || p.Offset != -1 {
			t.Fatalf("stable fetch of a partition with pending transactional offsets: %v offset %d", kerr.ErrorForCode(p.ErrorCode), p.Offset)
		}
	}
	// read_committed sees the prepared transaction's records, and stops at the ongoing one's.
	var got []string
	for _, r := range readAll(t, ctx, b2.Addr(), "r", true, time.Second) {
		got = append(got, string(r.Value))
	}
	if len(got) != 2 || got[0] != "prepared-1" {
		t.Fatalf("read_committed after the restart: %v", got)
	}
	// The ongoing one is still abortable: a new producer of its id fences and aborts it.
	p := newClient(t, b2.Addr(), kgo.TransactionalID("ongoing"), kgo.DefaultProduceTopic("r"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, r := range readAll(t, ctx, b2.Addr(), "r", true, time.Second) {
		got = append(got, string(r.Value))
	}
	if len(got) != 3 || got[2] != "after" {
		t.Fatalf("read_committed after aborting the ongoing transaction: %v", got)
	}
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
