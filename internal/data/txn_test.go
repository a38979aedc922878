package data

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnBatch is a transactional batch of n records of producer pid at epoch, sequence seq.
func txnBatch(pid int64, epoch int16, seq int32, n int) []byte {
	return makeBatch(batchOpts{idem: true, n: n, pid: pid, epoch: epoch, seq: seq, ts: 1000, attrs: attrTransactional})
}

func (e *env) produceTxn(txnID, topic string, part int32, version int16, batch []byte) kmsg.ProduceResponseTopicPartition {
	e.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TransactionID = version, -1, &txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: part, Records: batch}}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	return e.p.Produce(e.ctx, req).Topics[0].Partitions[0]
}

func (e *env) fetchIso(topic string, part int32, offset int64, committed bool) kmsg.FetchResponseTopicPartition {
	e.t.Helper()
	req := fetchReq(11, topic, part, offset)
	if committed {
		req.IsolationLevel = 1
	}
	return e.p.Fetch(e.ctx, req).Topics[0].Partitions[0]
}

func (e *env) marker(topic string, part int32, pid int64, epoch int16, commit bool) *kerr.Error {
	return e.p.AppendTxnMarker(topic, part, pid, epoch, 0, commit)
}

func batchOffsets(t testing.TB, b []byte) (out [][2]int64) {
	for _, rb := range decodeBatches(t, b) {
		out = append(out, [2]int64{rb.FirstOffset, rb.FirstOffset + int64(rb.LastOffsetDelta)})
	}
	return out
}

// A transaction's records are hidden from read_committed fetches until its COMMIT marker:
// the LSO stays at its first offset, read_uncommitted sees everything and no aborted
// transactions; the marker takes an offset and moves the LSO to the high watermark.
func TestTxnCommitMovesLastStableOffset(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, nil)
	if r := e.produce("t", 0, makeBatch(batchOpts{n: 2})); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(7, 0, 0, 3)); r.ErrorCode != 0 || r.BaseOffset != 2 {
		t.Fatalf("txn produce: %+v", r)
	}
	if r := e.produce("t", 0, makeBatch(batchOpts{n: 1})); r.ErrorCode != 0 || r.BaseOffset != 5 {
		t.Fatalf("plain produce after: %+v", r)
	}
	rc := e.fetchIso("t", 0, 0, true)
	if rc.HighWatermark != 6 || rc.LastStableOffset != 2 {
		t.Fatalf("hw %d lso %d, want 6 2", rc.HighWatermark, rc.LastStableOffset)
	}
	if got := batchOffsets(t, rc.RecordBatches); len(got) != 1 || got[0] != [2]int64{0, 1} {
		t.Fatalf("read_committed returned %v, want only [0 1]", got)
	}
	if rc.AbortedTransactions == nil || len(rc.AbortedTransactions) != 0 {
		t.Fatalf("read_committed aborted = %#v, want empty", rc.AbortedTransactions)
	}
	ru := e.fetchIso("t", 0, 0, false)
	if len(batchOffsets(t, ru.RecordBatches)) != 3 || ru.AbortedTransactions != nil || ru.LastStableOffset != 2 {
		t.Fatalf("read_uncommitted: %d batches, aborted %#v, lso %d", len(batchOffsets(t, ru.RecordBatches)), ru.AbortedTransactions, ru.LastStableOffset)
	}
	// A read_committed fetch at the LSO is in range and empty.
	if r := e.fetchIso("t", 0, 2, true); r.ErrorCode != 0 || len(r.RecordBatches) != 0 {
		t.Fatalf("fetch at lso: %+v", r)
	}
	if err := e.marker("t", 0, 7, 0, true); err != nil {
		t.Fatal(err)
	}
	rc = e.fetchIso("t", 0, 0, true)
	if rc.HighWatermark != 7 || rc.LastStableOffset != 7 {
		t.Fatalf("after commit: hw %d lso %d, want 7 7", rc.HighWatermark, rc.LastStableOffset)
	}
	bs := decodeBatches(t, rc.RecordBatches)
	if len(bs) != 4 || bs[3].FirstOffset != 6 || bs[3].Attributes&0x30 != 0x30 || bs[3].ProducerID != 7 {
		t.Fatalf("after commit: %+v", bs)
	}
	var recs []kmsg.Record
	if err := readAllRecords(bs[3], &recs); err != nil || len(recs) != 1 {
		t.Fatalf("marker records: %v %d", err, len(recs))
	}
	var key kmsg.ControlRecordKey
	if err := key.ReadFrom(recs[0].Key); err != nil || key.Type != kmsg.ControlRecordKeyTypeCommit {
		t.Fatalf("marker key %+v %v", key, err)
	}
}

func readAllRecords(rb kmsg.RecordBatch, out *[]kmsg.Record) error {
	b := rb.Records
	for i := int32(0); i < rb.NumRecords; i++ {
		var r kmsg.Record
		if err := r.ReadFrom(b); err != nil {
			return err
		}
		n := int(r.Length) + varintLen(r.Length)
		b = b[n:]
		*out = append(*out, r)
	}
	return nil
}

// An ABORT marker indexes the transaction: read_committed fetches that return its records
// report it (producer and first offset), and it is durable across a restart.
func TestTxnAbortIndexesTransaction(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, nil)
	e.produceTxn("tx", "t", 0, 11, txnBatch(7, 0, 0, 2))
	e.produceTxn("tx", "t", 0, 11, txnBatch(7, 0, 2, 2))
	if err := e.marker("t", 0, 7, 0, false); err != nil {
		t.Fatal(err)
	}
	e.produceTxn("tx", "t", 0, 11, txnBatch(7, 0, 4, 1)) // the next transaction: offset 5
	check := func(when string) {
		rc := e.fetchIso("t", 0, 0, true)
		if rc.LastStableOffset != 5 || len(rc.AbortedTransactions) != 1 ||
			rc.AbortedTransactions[0].ProducerID != 7 || rc.AbortedTransactions[0].FirstOffset != 0 {
			t.Fatalf("%s: lso %d aborted %+v", when, rc.LastStableOffset, rc.AbortedTransactions)
		}
		// A fetch starting after the aborted range does not report it.
		if r := e.fetchIso("t", 0, 5, true); len(r.AbortedTransactions) != 0 {
			t.Fatalf("%s: fetch past the abort reports %+v", when, r.AbortedTransactions)
		}
	}
	check("live")
	e.restart()
	check("after restart")
	if err := e.marker("t", 0, 7, 0, true); err != nil {
		t.Fatal(err)
	}
	if r := e.fetchIso("t", 0, 0, true); r.LastStableOffset != 7 || r.HighWatermark != 7 {
		t.Fatalf("after commit of the reloaded open transaction: %+v", r)
	}
}

// The produce rules of Kafka's ProducerAppendInfo: transactional batches need a transactional
// id (the whole request fails), a non-transactional batch of a producer with an open
// transaction is INVALID_TXN_STATE, and a marker with a newer epoch fences older batches.
func TestTxnProduceRules(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 2, nil)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 11, -1
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{
		{Partition: 0, Records: makeBatch(batchOpts{n: 1})},
		{Partition: 1, Records: txnBatch(9, 0, 0, 1)},
	}}}
	for _, p := range e.p.Produce(e.ctx, req).Topics[0].Partitions {
		if p.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
			t.Fatalf("partition %d: %d, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the whole request", p.Partition, p.ErrorCode)
		}
	}
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(9, 0, 0, 1)); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	idem := makeBatch(batchOpts{idem: true, n: 1, pid: 9, epoch: 0, seq: 1})
	if r := e.produce("t", 0, idem); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("non-transactional batch in an open transaction: %d", r.ErrorCode)
	}
	// The coordinator aborts at a bumped epoch (a timeout): the producer's late batch is fenced.
	if err := e.p.AppendTxnMarker("t", 0, 9, 1, 0, false); err != nil {
		t.Fatal(err)
	}
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(9, 0, 1, 1)); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("batch of the fenced epoch: %d", r.ErrorCode)
	}
	// Markers: an older epoch or coordinator epoch is refused; a re-sent one takes no offset.
	if err := e.p.AppendTxnMarker("t", 0, 9, 0, 0, true); err != kerr.InvalidProducerEpoch {
		t.Fatalf("old-epoch marker: %v", err)
	}
	if err := e.p.AppendTxnMarker("t", 0, 9, 1, 3, false); err != nil {
		t.Fatal(err)
	}
	if err := e.p.AppendTxnMarker("t", 0, 9, 1, 2, false); err != kerr.TransactionCoordinatorFenced {
		t.Fatalf("old coordinator epoch: %v", err)
	}
	_, hw, _ := e.p.byName["t"].parts[0].stableOffsets()
	if err := e.p.AppendTxnMarker("t", 0, 9, 1, 3, false); err != nil {
		t.Fatal(err)
	}
	if _, hw2, _ := e.p.byName["t"].parts[0].stableOffsets(); hw2 != hw {
		t.Fatalf("a re-sent marker moved the high watermark %d → %d", hw, hw2)
	}
	// The new epoch starts a fresh sequence; the fence survives a restart.
	e.restart()
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(9, 0, 2, 1)); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("after restart, the fenced epoch: %d", r.ErrorCode)
	}
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(9, 2, 0, 1)); r.ErrorCode != 0 {
		t.Fatalf("new epoch: %d", r.ErrorCode)
	}
	if err := e.p.AppendTxnMarker("t", 0, 9, 2, 3, true); err != nil {
		t.Fatal(err)
	}
}

// verifier is the transaction coordinator's side of the verification in these tests: it
// answers a fixed error per partition and can run something (a marker) while it answers.
type verifier struct {
	mu     sync.Mutex
	errs   map[TopicPartition]*kerr.Error
	during func()
	calls  int
}

func (v *verifier) VerifyTxnPartitions(_ context.Context, _ string, _ int64, _ int16, parts []TopicPartition) []*kerr.Error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls++
	if v.during != nil {
		v.during()
	}
	out := make([]*kerr.Error, len(parts))
	for i, tp := range parts {
		out[i] = v.errs[tp]
	}
	return out
}

// Verification errors map by Produce version as Kafka's AddPartitionsToTxnManager maps them,
// and a marker landing between verification and append (the transaction ended) refuses the
// batch (Kafka's VerificationGuard), so no hanging transaction is opened.
func TestTxnProduceVerification(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 3, nil)
	v := &verifier{errs: map[TopicPartition]*kerr.Error{
		{"t", 1}: kerr.TransactionAbortable,
		{"t", 2}: kerr.ProducerFenced,
	}}
	e.p.SetTxnVerifier(v)
	for _, c := range []struct {
		version int16
		part    int32
		want    *kerr.Error
	}{
		{11, 1, kerr.TransactionAbortable}, {10, 1, kerr.InvalidTxnState}, {9, 2, kerr.InvalidProducerEpoch},
	} {
		if r := e.produceTxn("tx", "t", c.part, c.version, txnBatch(4, 0, 0, 1)); r.ErrorCode != c.want.Code {
			t.Errorf("v%d partition %d: %s, want %s", c.version, c.part, kerr.ErrorForCode(r.ErrorCode), c.want)
		}
	}
	v.during = func() { _ = e.marker("t", 0, 4, 0, false) }
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(4, 0, 0, 1)); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("marker during verification: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	v.during = nil
	if _, _, lso := e.p.byName["t"].parts[0].stableOffsets(); lso != 1 {
		t.Fatalf("lso %d: a transaction was left open", lso)
	}
	if r := e.produceTxn("tx", "t", 0, 11, txnBatch(4, 0, 0, 1)); r.ErrorCode != 0 {
		t.Fatalf("verified produce: %s", kerr.ErrorForCode(r.ErrorCode))
	}
}

// A read_committed long poll waits while the transaction is open and wakes when its marker
// moves the LSO.
func TestTxnLongPollWakesOnMarker(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, nil)
	e.produceTxn("tx", "t", 0, 11, txnBatch(3, 0, 0, 2))
	req := fetchReq(11, "t", 0, 0)
	req.IsolationLevel, req.MinBytes, req.MaxWaitMillis = 1, 1, 10_000
	done := make(chan kmsg.FetchResponseTopicPartition, 1)
	go func() { done <- e.p.Fetch(e.ctx, req).Topics[0].Partitions[0] }()
	select {
	case r := <-done:
		t.Fatalf("returned before the commit: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	start := time.Now()
	if err := e.marker("t", 0, 3, 0, true); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if len(batchOffsets(t, r.RecordBatches)) != 2 || r.LastStableOffset != 3 {
			t.Fatalf("woken fetch: %+v", r)
		}
		t.Logf("woke %v after the marker", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("the marker did not wake the read_committed long poll")
	}
}

// ListOffsets read_committed answers the LSO for latest and does not find records at or past
// it.
func TestTxnListOffsetsReadCommitted(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, nil)
	e.produce("t", 0, makeBatch(batchOpts{n: 2, ts: 100}))
	e.produceTxn("tx", "t", 0, 11, makeBatch(batchOpts{idem: true, n: 2, pid: 5, ts: 500, attrs: attrTransactional}))
	list := func(ts int64, iso int8) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.IsolationLevel = 7, iso
		req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: ts, CurrentLeaderEpoch: -1}}}}
		return e.p.ListOffsets(e.ctx, req).Topics[0].Partitions[0].Offset
	}
	for _, c := range []struct {
		ts   int64
		iso  int8
		want int64
	}{{-1, 0, 4}, {-1, 1, 2}, {500, 0, 2}, {500, 1, -1}, {100, 1, 0}, {-3, 1, 1}} {
		if got := list(c.ts, c.iso); got != c.want {
			t.Errorf("timestamp %d isolation %d: %d, want %d", c.ts, c.iso, got, c.want)
		}
	}
}

// Retention never deletes past the last stable offset; DeleteRecords may (up to the high
// watermark, as Kafka), and the LSO is then the new log start. Aborted transactions leave the
// index when the log start passes their marker.
func TestTxnRetentionAndDeleteRecords(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, map[string]string{"retention.ms": "1000"})
	part := e.p.byName["t"].parts[0]
	e.produceTxn("tx", "t", 0, 11, txnBatch(1, 0, 0, 1)) // 0: aborted below
	e.marker("t", 0, 1, 0, false)                        // 1
	e.produce("t", 0, makeBatch(batchOpts{n: 1}))        // 2
	e.produceTxn("tx", "t", 0, 11, txnBatch(2, 0, 0, 1)) // 3: open
	e.produce("t", 0, makeBatch(batchOpts{n: 1}))        // 4
	e.now = e.now.Add(time.Hour)
	e.p.EnforceRetention()
	if ls, hw, lso := part.stableOffsets(); ls != 3 || hw != 5 || lso != 3 {
		t.Fatalf("after retention: log start %d hw %d lso %d, want 3 5 3", ls, hw, lso)
	}
	if len(part.aborted) != 0 {
		t.Fatalf("aborted index kept %+v below the log start", part.aborted)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "t", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 4}}}}
	if r := e.p.DeleteRecords(e.ctx, req).Topics[0].Partitions[0]; r.ErrorCode != 0 || r.LowWatermark != 4 {
		t.Fatalf("delete records: %+v", r)
	}
	if ls, _, lso := part.stableOffsets(); ls != 4 || lso != 4 {
		t.Fatalf("after DeleteRecords: log start %d lso %d", ls, lso)
	}
	e.restart()
	part = e.p.byName["t"].parts[0]
	if ls, _, lso := part.stableOffsets(); ls != 4 || lso != 4 || len(part.aborted) != 0 {
		t.Fatalf("after restart: log start %d lso %d aborted %+v", ls, lso, part.aborted)
	}
}

// DescribeProducers reports each producer's epoch, sequence, coordinator epoch and open
// transaction.
func TestDescribeProducers(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, nil)
	e.produce("t", 0, makeBatch(batchOpts{idem: true, n: 3, pid: 1, epoch: 2, seq: 0}))
	e.produce("t", 0, makeBatch(batchOpts{n: 1})) // offset 3
	e.produceTxn("tx", "t", 0, 11, txnBatch(2, 0, 0, 2))
	e.p.AppendTxnMarker("t", 0, 3, 4, 7, false) // a marker only
	req := kmsg.NewPtrDescribeProducersRequest()
	req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0, 5}}}
	resp := e.p.DescribeProducers(e.ctx, req)
	ps := resp.Topics[0].Partitions
	if ps[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: %d", ps[1].ErrorCode)
	}
	got := ps[0].ActiveProducers
	if len(got) != 3 {
		t.Fatalf("producers %+v", got)
	}
	want := []struct {
		pid        int64
		epoch      int32
		seq        int32
		coord      int32
		txnStartAt int64
	}{{1, 2, 2, -1, -1}, {2, 0, 1, -1, 4}, {3, 4, -1, 7, -1}}
	for i, w := range want {
		g := got[i]
		if g.ProducerID != w.pid || g.ProducerEpoch != w.epoch || g.LastSequence != w.seq || g.CoordinatorEpoch != w.coord || g.CurrentTxnStartOffset != w.txnStartAt {
			t.Errorf("producer %d: %+v, want %+v", i, g, w)
		}
	}
}

// txnKVBatch is a transactional batch of key/value records of producer pid (epoch 0).
func txnKVBatch(t testing.TB, pid int64, seq int32, recs ...kv) []byte {
	b := kvBatch(t, 0, pid, seq, recs...)
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	rb.Attributes |= attrTransactional
	raw := rb.AppendTo(nil)
	sealBatch(raw)
	return raw
}

// The cleaner follows Kafka's transactional rules: an aborted transaction's records never
// supersede older values and are removed; markers stay while their transaction has batches,
// then get a delete horizon and go once it passed; nothing at or past the LSO is cleaned.
func TestCleanerTransactions(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, tinySegments)
	now := e.now.UnixMilli()
	produceTxn := func(pid int64, seq int32, recs ...kv) {
		if r := e.produceTxn("tx", "c", 0, 11, txnKVBatch(t, pid, seq, recs...)); r.ErrorCode != 0 {
			t.Fatalf("txn produce: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "0", now))) // 0
	produceTxn(7, 0, rec("a", "aborted", now))                   // 1
	e.marker("c", 0, 7, 0, false)                                // 2
	produceTxn(8, 0, rec("b", "1", now))                         // 3
	e.marker("c", 0, 8, 0, true)                                 // 4
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("b", "2", now))) // 5
	produceTxn(8, 1, rec("c", "1", now))                         // 6
	e.marker("c", 0, 8, 0, true)                                 // 7
	produceTxn(9, 0, rec("c", "open", now))                      // 8: open, never cleaned
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("c", "2", now))) // 9
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("z", "z", now))) // 10, active
	e.p.CleanLogs()
	bs, got := e.readLog("c")
	control := map[int64]bool{}
	for _, b := range bs {
		if b.Attributes&attrControl != 0 {
			control[b.FirstOffset] = true
		}
	}
	var data []logRecord
	for _, r := range got {
		if !control[r.offset] {
			data = append(data, r)
		}
	}
	if s := recordsString(data); s != "0:a=0 5:b=2 6:c=1 8:c=open 9:c=2 10:z=z" {
		t.Fatalf("after the first cleaning: %s", s)
	}
	offsets := func() (out []int64) {
		bs, _ := e.readLog("c")
		for _, b := range bs {
			out = append(out, b.FirstOffset)
		}
		return out
	}
	// The aborted batch stays empty (producer 7's last batch keeps its sequence), with its
	// marker; the batch of the first committed transaction of producer 8 is gone.
	if len(bs) < 2 || bs[1].FirstOffset != 1 || bs[1].NumRecords != 0 {
		t.Fatalf("aborted batch: %+v", bs[1])
	}
	if o := offsets(); len(o) != 10 || o[2] != 2 || o[3] != 4 {
		t.Fatalf("batches after the first cleaning: %v", o)
	}
	// read_committed filters the aborted range and stops at the open transaction.
	rc := e.fetchIso("c", 0, 0, true)
	if rc.LastStableOffset != 8 || len(rc.AbortedTransactions) != 1 || rc.AbortedTransactions[0].ProducerID != 7 {
		t.Fatalf("read_committed after cleaning: lso %d aborted %+v", rc.LastStableOffset, rc.AbortedTransactions)
	}
	// The open transaction commits; the next cleaning finds no batch of producer 8's first
	// transaction: its marker gets a delete horizon, and goes after delete.retention.ms.
	e.marker("c", 0, 9, 0, true)                                 // 11
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("y", "y", now))) // 12
	e.p.CleanLogs()
	if o := offsets(); len(o) != 12 || o[3] != 4 {
		t.Fatalf("marker 4 left before its horizon: %v", o)
	}
	e.now = e.now.Add(25 * time.Hour)
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("x", "x", now))) // 13
	e.p.CleanLogs()
	o := offsets()
	for _, off := range o {
		if off == 4 {
			t.Fatalf("marker 4 kept past its horizon: %v", o)
		}
	}
	if o[1] != 2 {
		t.Fatalf("abort marker 2 went while its (emptied) batch was still in the log: %v", o)
	}
}

// A verification the transaction coordinator cannot answer yet (the transaction is completing,
// the coordinator is loading, moved or unreachable) answers NOT_ENOUGH_REPLICAS, which every
// producer retries without a metadata refresh (Kafka's ReplicaManager translates these
// verification errors so that older clients retry), at every Produce version.
func TestTxnProduceVerificationRetriable(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 4, nil)
	v := &verifier{errs: map[TopicPartition]*kerr.Error{
		{"t", 0}: kerr.ConcurrentTransactions,
		{"t", 1}: kerr.CoordinatorLoadInProgress,
		{"t", 2}: kerr.CoordinatorNotAvailable,
		{"t", 3}: kerr.NotCoordinator,
	}}
	e.p.SetTxnVerifier(v)
	for _, version := range []int16{3, 10, 11} {
		for part := int32(0); part < 4; part++ {
			if r := e.produceTxn("tx", "t", part, version, txnBatch(4, 0, 0, 1)); r.ErrorCode != kerr.NotEnoughReplicas.Code {
				t.Errorf("v%d partition %d (%s): %s, want NOT_ENOUGH_REPLICAS", version, part,
					v.errs[TopicPartition{"t", part}], kerr.ErrorForCode(r.ErrorCode))
			}
		}
	}
}

// A producer a partition knows only from a transaction marker (its transaction added the
// partition but wrote nothing there) has an epoch and no sequence yet: its next batch must
// start at sequence 0, at that epoch or a newer one (Kafka's ProducerAppendInfo.checkSequence:
// only a producer with no epoch at all may start anywhere).
func TestTxnMarkerOnlyProducerSequence(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 1, nil)
	if err := e.marker("t", 0, 7, 2, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		epoch int16
		seq   int32
		want  int16
	}{
		{2, 5, kerr.OutOfOrderSequenceNumber.Code},
		{3, 4, kerr.OutOfOrderSequenceNumber.Code},
		{1, 0, kerr.InvalidProducerEpoch.Code},
		{2, 0, 0},
		{2, 1, 0},
	} {
		if r := e.produceTxn("tx", "t", 0, 9, txnBatch(7, c.epoch, c.seq, 1)); r.ErrorCode != c.want {
			t.Errorf("epoch %d seq %d: %s, want %s", c.epoch, c.seq, kerr.ErrorForCode(r.ErrorCode), kerr.ErrorForCode(c.want))
		}
	}
	// The same after a restart (the marker's producer state is durable).
	if err := e.marker("t", 0, 8, 0, true); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if r := e.produceTxn("tx", "t", 0, 9, txnBatch(8, 0, 3, 1)); r.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Errorf("after a restart, seq 3: %s, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(r.ErrorCode))
	}
}

// One Produce carries the transactional batches of one producer: batches of two producer ids
// (or two epochs) fail the whole request with INVALID_PRODUCER_ID_MAPPING and nothing is
// appended (Kafka's ReplicaManager.appendRecordsWithTransactionVerification).
func TestTxnProduceOneProducerPerRequest(t *testing.T) {
	e := newEnv(t)
	e.createTopic("t", 2, nil)
	e.p.SetTxnVerifier(&verifier{})
	for _, other := range [][2]int64{{5, 0}, {4, 1}} {
		req := kmsg.NewPtrProduceRequest()
		id := "tx"
		req.Version, req.Acks, req.TransactionID = 11, -1, &id
		req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{
			{Partition: 0, Records: txnBatch(4, 0, 0, 1)},
			{Partition: 1, Records: txnBatch(other[0], int16(other[1]), 0, 1)},
		}}}
		for _, rp := range e.p.Produce(e.ctx, req).Topics[0].Partitions {
			if rp.ErrorCode != kerr.InvalidProducerIDMapping.Code {
				t.Errorf("producers 4/0 and %d/%d: partition %d answered %s, want INVALID_PRODUCER_ID_MAPPING",
					other[0], other[1], rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
		}
	}
	for part := int32(0); part < 2; part++ {
		if _, hw, _ := e.p.byName["t"].parts[part].stableOffsets(); hw != 0 {
			t.Errorf("partition %d: high watermark %d, want nothing appended", part, hw)
		}
	}
}
