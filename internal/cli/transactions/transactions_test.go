package transactions

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/testutil"
)

func runCmd(now time.Time, args ...string) clikittest.Result {
	return clikittest.Run(newCommand(clikit.Env{Now: func() time.Time { return now }, Loc: time.UTC}), args...)
}

// txnBatch is a transactional record batch of producer pid at epoch (one record).
func txnBatch(pid int64, epoch int16) []byte {
	r := kmsg.NewRecord()
	r.Value = []byte("hanging")
	body := r.AppendTo(nil)
	r.Length = int32(len(body) - len(binary.AppendVarint(nil, int64(r.Length))))
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: 0x10, FirstTimestamp: time.Now().UnixMilli(),
		MaxTimestamp: time.Now().UnixMilli(), ProducerID: pid, ProducerEpoch: epoch, NumRecords: 1, Records: r.AppendTo(nil)}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// list, describe and describe-producers show an ongoing transaction; a hanging transaction (a
// transactional batch the coordinator never learnt of, as before KIP-890 verification) is found
// by find-hanging and aborted by abort --start-offset, which moves the last stable offset.
func TestTransactionsCommand(t *testing.T) {
	b := testutil.Start(t, "transaction.partition.verification.enable=false")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("tx-ok"), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("v"), Partition: 0}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	okPID, okEpoch, _ := p.ProducerID(ctx)

	// The hanging one: a producer id of "tx-hang" whose batch reached t-1 without
	// AddPartitionsToTxn.
	id := "tx-hang"
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = &id, 60000
	ir, err := ip.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("init: %v %+v", err, ir)
	}
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TransactionID, pr.TimeoutMillis = -1, &id, 5000
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 1, Records: txnBatch(ir.ProducerID, ir.ProducerEpoch)}}}}
	presp, err := pr.RequestWith(ctx, cl)
	if err != nil || presp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("produce: %v %+v", err, presp)
	}
	later := time.Now().Add(time.Minute)
	bs := []string{"--bootstrap-server", b.Addr()}
	run := func(args ...string) clikittest.Result { return runCmd(later, append(bs, args...)...) }

	out := run("list")
	if out.Code != 0 || !strings.Contains(out.Stdout, "tx-ok") || !strings.Contains(out.Stdout, "Ongoing") ||
		!strings.HasPrefix(out.Stdout, "TransactionalId\tCoordinator\tProducerId\tTransactionState") && !strings.HasPrefix(out.Stdout, "TransactionalId") {
		t.Fatalf("list: %+v", out)
	}
	var listed struct {
		Transactions []listedTxn `json:"transactions"`
	}
	if out := run("--list", "--output", "json"); out.Code != 0 || json.Unmarshal([]byte(out.Stdout), &listed) != nil || len(listed.Transactions) != 2 {
		t.Fatalf("list json: %+v", out)
	}
	var d describedTxn
	if out := run("describe", "--transactional-id", "tx-ok", "--output", "json"); out.Code != 0 || json.Unmarshal([]byte(out.Stdout), &d) != nil ||
		d.State != "Ongoing" || d.ProducerID != okPID || d.ProducerEpoch != okEpoch || strings.Join(d.TopicPartitions, ",") != "t-0" || d.DurationMs == nil {
		t.Fatalf("describe: %+v %+v", out, d)
	}
	if out := run("describe", "--transactional-id", "nobody"); out.Code != 1 || !strings.Contains(out.Stderr, "Failed to describe transaction state of transactional-id `nobody`") {
		t.Fatalf("describe of an unknown id: %+v", out)
	}
	out = run("describe-producers", "--topic", "t", "--partition", "1")
	if out.Code != 0 || !strings.Contains(out.Stdout, "CurrentTransactionStartOffset") || len(strings.Split(strings.TrimSpace(out.Stdout), "\n")) != 2 {
		t.Fatalf("describe-producers: %+v", out)
	}
	var hanging struct {
		Hanging []hangingTxn `json:"hangingTransactions"`
	}
	out = run("find-hanging", "--topic", "t", "--max-transaction-timeout", "0", "--output", "json")
	if out.Code != 0 || json.Unmarshal([]byte(out.Stdout), &hanging) != nil || len(hanging.Hanging) != 1 ||
		hanging.Hanging[0].Partition != 1 || hanging.Hanging[0].ProducerID != ir.ProducerID || hanging.Hanging[0].StartOffset != 0 {
		t.Fatalf("find-hanging: %+v", out)
	}
	if out := run("find-hanging"); out.Code != 1 || !strings.Contains(out.Stderr, "requires either --topic or --broker-id") {
		t.Fatalf("find-hanging without scope: %+v", out)
	}
	if out := run("abort", "--topic", "t", "--partition", "1", "--start-offset", "7"); out.Code != 1 || !strings.Contains(out.Stderr, "Could not find any open transactions starting at offset 7") {
		t.Fatalf("abort of nothing: %+v", out)
	}
	if out := run("--abort", "--topic", "t", "--partition", "1", "--start-offset", "0"); out.Code != 0 {
		t.Fatalf("abort: %+v", out)
	}
	if out := run("find-hanging", "--broker-id", "0", "--max-transaction-timeout", "0"); out.Code != 0 || strings.Count(out.Stdout, "\n") != 1 {
		t.Fatalf("find-hanging after the abort: %+v", out)
	}
	lso := kmsg.NewPtrListOffsetsRequest()
	lso.IsolationLevel = 1
	lso.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 1, Timestamp: -1, CurrentLeaderEpoch: -1}}}}
	if r, err := lso.RequestWith(ctx, cl); err != nil || r.Topics[0].Partitions[0].Offset != 2 {
		t.Fatalf("last stable offset of t-1 after the abort: %v %+v", err, r)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if out := run("list"); out.Code != 0 || !strings.Contains(out.Stdout, "CompleteCommit") {
		t.Fatalf("list after commit: %+v", out)
	}
}

// Usage errors are found before any connection is made.
func TestUsageErrors(t *testing.T) {
	const bs = "127.0.0.1:1"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bootstrap-server", bs}, "Exactly one command is needed"},
		{[]string{"--bootstrap-server", bs, "--list", "--describe"}, "Exactly one command is needed"},
		{[]string{"list"}, "bootstrap-server"},
		{[]string{"--bootstrap-server", bs, "describe"}, "transactional-id"},
		{[]string{"--bootstrap-server", bs, "abort", "--topic", "t", "--partition", "0"}, "--start-offset"},
		{[]string{"--bootstrap-server", bs, "abort", "--topic", "t", "--partition", "0", "--producer-id", "1"}, "--producer-epoch"},
		{[]string{"--bootstrap-server", bs, "find-hanging", "--partition", "1"}, "requires either --topic"},
		{[]string{"--bootstrap-server", bs, "list", "--output", "yaml"}, "--output"},
	} {
		out := runCmd(time.Now(), c.args...)
		if out.Code != 1 || !strings.Contains(out.Stderr, c.want) {
			t.Errorf("%v: code %d stderr %q, want %q", c.args, out.Code, out.Stderr, c.want)
		}
	}
}
