package data

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestProduceFetchRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.createTopic("orders", 2, nil)
	var bases []int64
	for i := 0; i < 3; i++ {
		sp := e.produce("orders", 1, makeBatch(batchOpts{n: 4, valSize: 10, ts: 1000}))
		if sp.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
		}
		bases = append(bases, sp.BaseOffset)
		if sp.LogAppendTime != -1 {
			t.Fatalf("LogAppendTime = %d, want -1 for CreateTime", sp.LogAppendTime)
		}
	}
	if bases[0] != 0 || bases[1] != 4 || bases[2] != 8 {
		t.Fatalf("bases %v, want [0 4 8]", bases)
	}
	fp := e.fetch("orders", 1, 0)
	if fp.ErrorCode != 0 || fp.HighWatermark != 12 || fp.LastStableOffset != 12 || fp.LogStartOffset != 0 {
		t.Fatalf("fetch partition %+v", fp)
	}
	bs := decodeBatches(t, fp.RecordBatches)
	if len(bs) != 3 {
		t.Fatalf("got %d batches", len(bs))
	}
	for i, b := range bs {
		if b.FirstOffset != int64(4*i) || b.NumRecords != 4 || b.PartitionLeaderEpoch != 0 {
			t.Fatalf("batch %d: %+v", i, b)
		}
		var r kmsg.Record
		if err := r.ReadFrom(b.Records); err != nil || len(r.Value) != 10 {
			t.Fatalf("record: %v %+v", err, r)
		}
	}
	// Fetching from inside the second batch starts with that batch.
	fp = e.fetch("orders", 1, 6)
	if bs := decodeBatches(t, fp.RecordBatches); len(bs) != 2 || bs[0].FirstOffset != 4 {
		t.Fatalf("fetch from 6: %d batches", len(bs))
	}
	// At HW: empty, no error. Past HW or before start: OFFSET_OUT_OF_RANGE.
	if fp := e.fetch("orders", 1, 12); fp.ErrorCode != 0 || len(fp.RecordBatches) != 0 {
		t.Fatalf("fetch at HW: %+v", fp)
	}
	if fp := e.fetch("orders", 1, 13); fp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch past HW: %v", kerr.ErrorForCode(fp.ErrorCode))
	}
	if fp := e.fetch("orders", 0, 0); fp.ErrorCode != 0 || fp.HighWatermark != 0 || fp.RecordBatches == nil {
		t.Fatalf("other partition: %+v", fp)
	}
	if fp := e.fetch("orders", 2, 0); fp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("bad partition: %v", kerr.ErrorForCode(fp.ErrorCode))
	}
}

func TestFetchMaxBytesReturnsAtLeastOneBatch(t *testing.T) {
	e := newEnv(t)
	e.createTopic("big", 1, nil)
	for i := 0; i < 3; i++ {
		e.produce("big", 0, makeBatch(batchOpts{n: 2, valSize: 1000}))
	}
	req := fetchReq(11, "big", 0, 0)
	req.MaxBytes = 10
	resp := e.p.Fetch(e.ctx, req)
	if bs := decodeBatches(t, resp.Topics[0].Partitions[0].RecordBatches); len(bs) != 1 {
		t.Fatalf("got %d batches, want exactly 1", len(bs))
	}
	req = fetchReq(11, "big", 0, 0)
	req.Topics[0].Partitions[0].PartitionMaxBytes = 2500
	resp = e.p.Fetch(e.ctx, req)
	if bs := decodeBatches(t, resp.Topics[0].Partitions[0].RecordBatches); len(bs) != 1 {
		t.Fatalf("got %d batches, want 1 within partition max bytes", len(bs))
	}
}

func TestFetchByTopicID(t *testing.T) {
	e := newEnv(t)
	ti := e.createTopic("ids", 1, nil)
	e.produce("ids", 0, makeBatch(batchOpts{n: 1}))
	req := fetchReq(13, "", 0, 0)
	req.Topics[0].TopicID = ti.ID
	resp := e.p.Fetch(e.ctx, req)
	if resp.Topics[0].TopicID != ti.ID || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("fetch by id: %+v", resp.Topics[0])
	}
	req.Topics[0].TopicID = [16]byte{9}
	resp = e.p.Fetch(e.ctx, req)
	if resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %v", kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode))
	}
}

func TestProduceCorruptBatch(t *testing.T) {
	e := newEnv(t)
	e.createTopic("c", 1, nil)
	b := makeBatch(batchOpts{n: 3, valSize: 5})
	b[len(b)-1] ^= 0xff
	if sp := e.produce("c", 0, b); sp.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("bad CRC: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := e.produce("c", 0, b[:30]); sp.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("short: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	old := makeBatch(batchOpts{n: 1})
	old[16] = 1
	if sp := e.produce("c", 0, old); sp.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("magic 1: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	two := append(makeBatch(batchOpts{n: 1}), makeBatch(batchOpts{n: 1})...)
	if sp := e.produce("c", 0, two); sp.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("two batches: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if _, hw, _ := e.p.Offsets("c", 0); hw != 0 {
		t.Fatalf("hw = %d after rejected batches", hw)
	}
	if fp := e.fetch("c", 0, 0); len(fp.RecordBatches) != 0 {
		t.Fatal("rejected batch was stored")
	}
}

func TestProduceAutoCreateAndErrors(t *testing.T) {
	e := newEnv(t)
	if sp := e.produce("auto", 0, makeBatch(batchOpts{n: 1})); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("auto-create produce: %+v", sp)
	}
	if ti, ok := e.p.Topic("auto"); !ok || ti.Partitions != 1 {
		t.Fatalf("auto topic %+v %v", ti, ok)
	}
	if sp := e.produce("bad name!", 0, makeBatch(batchOpts{n: 1})); sp.ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("bad name: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	e.close()
	e.cfg.AutoCreateTopics = false
	e.open()
	if sp := e.produce("nope", 0, makeBatch(batchOpts{n: 1})); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("no auto-create: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 9, 2
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "auto"
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: makeBatch(batchOpts{n: 1})}}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	if resp := e.p.Produce(e.ctx, req); resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRequiredAcks.Code {
		t.Fatal("acks=2 accepted")
	}
	req.Acks = 0
	if resp := e.p.Produce(e.ctx, req); resp != nil {
		t.Fatal("acks=0 must return nil")
	}
	if _, hw, _ := e.p.Offsets("auto", 0); hw != 2 {
		t.Fatalf("acks=0 produce not appended: hw=%d", hw)
	}
}

func TestProduceLogAppendTime(t *testing.T) {
	e := newEnv(t)
	e.createTopic("lat", 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	sp := e.produce("lat", 0, makeBatch(batchOpts{n: 2, ts: 5}))
	if sp.ErrorCode != 0 || sp.LogAppendTime != e.now.UnixMilli() {
		t.Fatalf("produce %+v", sp)
	}
	bs := decodeBatches(t, e.fetch("lat", 0, 0).RecordBatches)
	if bs[0].MaxTimestamp != e.now.UnixMilli() || bs[0].Attributes&0x08 == 0 {
		t.Fatalf("batch %+v", bs[0])
	}
}

func TestIdempotentDuplicateAndGap(t *testing.T) {
	e := newEnv(t)
	e.createTopic("idem", 1, nil)
	pid := initPID(t, e)
	b0 := makeBatch(batchOpts{n: 3, idem: true, pid: pid, epoch: 0, seq: 0})
	if sp := e.produce("idem", 0, b0); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("first: %+v", sp)
	}
	e.produce("idem", 0, makeBatch(batchOpts{n: 1})) // a non-idempotent batch in between
	b1 := makeBatch(batchOpts{n: 2, idem: true, pid: pid, epoch: 0, seq: 3})
	if sp := e.produce("idem", 0, b1); sp.ErrorCode != 0 || sp.BaseOffset != 4 {
		t.Fatalf("second: %+v", sp)
	}
	// Retries of both answer their original offsets and store nothing.
	if sp := e.produce("idem", 0, b0); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("dup first: %+v", sp)
	}
	if sp := e.produce("idem", 0, b1); sp.ErrorCode != 0 || sp.BaseOffset != 4 {
		t.Fatalf("dup second: %+v", sp)
	}
	if _, hw, _ := e.p.Offsets("idem", 0); hw != 6 {
		t.Fatalf("hw = %d, want 6", hw)
	}
	gap := makeBatch(batchOpts{n: 1, idem: true, pid: pid, epoch: 0, seq: 7})
	if sp := e.produce("idem", 0, gap); sp.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	// The state survives a restart.
	e.restart()
	if sp := e.produce("idem", 0, b1); sp.ErrorCode != 0 || sp.BaseOffset != 4 {
		t.Fatalf("dup after restart: %+v", sp)
	}
	if sp := e.produce("idem", 0, gap); sp.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap after restart: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := e.produce("idem", 0, makeBatch(batchOpts{n: 1, idem: true, pid: pid, epoch: 0, seq: 5})); sp.ErrorCode != 0 || sp.BaseOffset != 6 {
		t.Fatalf("next after restart: %+v", sp)
	}
	// A new epoch must start at 0; then the old epoch is fenced.
	if sp := e.produce("idem", 0, makeBatch(batchOpts{n: 1, idem: true, pid: pid, epoch: 1, seq: 4})); sp.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("new epoch seq 4: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := e.produce("idem", 0, makeBatch(batchOpts{n: 1, idem: true, pid: pid, epoch: 1, seq: 0})); sp.ErrorCode != 0 {
		t.Fatalf("new epoch: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := e.produce("idem", 0, makeBatch(batchOpts{n: 1, idem: true, pid: pid, epoch: 0, seq: 6})); sp.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("old epoch: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	e.restart()
	if sp := e.produce("idem", 0, makeBatch(batchOpts{n: 1, idem: true, pid: pid, epoch: 1, seq: 1})); sp.ErrorCode != 0 || sp.BaseOffset != 8 {
		t.Fatalf("epoch 1 after restart: %+v", sp)
	}
}

func TestIdempotentKeepsFiveBatches(t *testing.T) {
	e := newEnv(t)
	e.createTopic("five", 1, nil)
	pid := initPID(t, e)
	var batches [][]byte
	for i := 0; i < 7; i++ {
		b := makeBatch(batchOpts{n: 1, idem: true, pid: pid, seq: int32(i)})
		batches = append(batches, b)
		e.produce("five", 0, b)
	}
	e.restart()
	for i := 2; i < 7; i++ {
		if sp := e.produce("five", 0, batches[i]); sp.ErrorCode != 0 || sp.BaseOffset != int64(i) {
			t.Fatalf("dup %d: %+v", i, sp)
		}
	}
	if sp := e.produce("five", 0, batches[1]); sp.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("forgotten batch: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
}

func initPID(t *testing.T, e *env) int64 {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	resp := e.p.InitProducerID(e.ctx, req)
	if resp.ErrorCode != 0 || resp.ProducerEpoch != 0 {
		t.Fatalf("init producer id: %+v", resp)
	}
	return resp.ProducerID
}

func TestInitProducerIDMonotonicAcrossRestart(t *testing.T) {
	e := newEnv(t)
	a, b := initPID(t, e), initPID(t, e)
	if b <= a {
		t.Fatalf("ids %d, %d not increasing", a, b)
	}
	e.restart()
	if c := initPID(t, e); c <= b {
		t.Fatalf("id %d after restart not above %d", c, b)
	}
	txn := "tx"
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &txn
	if resp := e.p.InitProducerID(e.ctx, req); resp.ErrorCode == 0 {
		t.Fatal("transactional id accepted")
	}
}

func TestRestartKeepsRecordsAndTopics(t *testing.T) {
	e := newEnv(t)
	ti := e.createTopic("keep", 3, map[string]string{"retention.ms": "1000"})
	for i := 0; i < 5; i++ {
		e.produce("keep", 2, makeBatch(batchOpts{n: 10, valSize: 3}))
	}
	e.restart()
	got, ok := e.p.Topic("keep")
	if !ok || got.ID != ti.ID || got.Partitions != 3 || got.Configs["retention.ms"] != "1000" {
		t.Fatalf("topic after restart %+v", got)
	}
	if _, hw, _ := e.p.Offsets("keep", 2); hw != 50 {
		t.Fatalf("hw after restart %d", hw)
	}
	if sp := e.produce("keep", 2, makeBatch(batchOpts{n: 1})); sp.BaseOffset != 50 {
		t.Fatalf("offset after restart %d", sp.BaseOffset)
	}
	if bs := decodeBatches(t, e.fetch("keep", 2, 0).RecordBatches); len(bs) != 6 {
		t.Fatalf("%d batches after restart", len(bs))
	}
}

func TestConcurrentProduceDenseOffsets(t *testing.T) {
	e := newEnv(t)
	e.createTopic("conc", 2, nil)
	const workers, per = 16, 20
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				req := kmsg.NewPtrProduceRequest()
				req.Version, req.Acks = 11, -1
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic = "conc"
				rt.Partitions = []kmsg.ProduceRequestTopicPartition{
					{Partition: 0, Records: makeBatch(batchOpts{n: 3})},
					{Partition: 1, Records: makeBatch(batchOpts{n: 1 + w%3})},
				}
				req.Topics = []kmsg.ProduceRequestTopic{rt}
				for _, sp := range e.p.Produce(context.Background(), req).Topics[0].Partitions {
					if sp.ErrorCode != 0 {
						t.Errorf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
					}
				}
			}
		}(w)
	}
	wg.Wait()
	for part := int32(0); part < 2; part++ {
		_, hw, _ := e.p.Offsets("conc", part)
		next := int64(0)
		for _, b := range decodeBatches(t, e.fetch("conc", part, 0).RecordBatches) {
			if b.FirstOffset != next {
				t.Fatalf("partition %d: batch at %d, want %d", part, b.FirstOffset, next)
			}
			next += int64(b.NumRecords)
		}
		if next != hw {
			t.Fatalf("partition %d: records end at %d, hw %d", part, next, hw)
		}
	}
	if _, hw, _ := e.p.Offsets("conc", 0); hw != workers*per*3 {
		t.Fatalf("hw %d", hw)
	}
}

func TestProducerStateExpires(t *testing.T) {
	e := newEnv(t)
	e.createTopic("exp", 1, nil)
	pid := initPID(t, e)
	b0 := makeBatch(batchOpts{n: 1, idem: true, pid: pid, seq: 0})
	e.produce("exp", 0, b0)
	e.now = e.now.Add(23 * time.Hour)
	if sp := e.produce("exp", 0, b0); sp.BaseOffset != 0 {
		t.Fatalf("dup within expiration: %+v", sp)
	}
	// Past producer.id.expiration.ms the next append drops the state: the
	// old batch is no longer a duplicate (Kafka accepts unknown producers).
	e.now = e.now.Add(2 * time.Hour)
	e.produce("exp", 0, makeBatch(batchOpts{n: 1}))
	if sp := e.produce("exp", 0, b0); sp.ErrorCode != 0 || sp.BaseOffset != 2 {
		t.Fatalf("after expiry: %+v", sp)
	}
	// Expiry while down: state is dropped on load.
	e.now = e.now.Add(25 * time.Hour)
	e.restart()
	if sp := e.produce("exp", 0, b0); sp.ErrorCode != 0 || sp.BaseOffset != 3 {
		t.Fatalf("after restart expiry: %+v", sp)
	}
}

// TestProduceTimestampBounds: on a CreateTime topic a record whose timestamp lies more than
// message.timestamp.before.max.ms before the broker's clock or message.timestamp.after.max.ms
// after it rejects its batch with INVALID_TIMESTAMP and a record error naming it (Kafka's
// LogValidator.validateTimestamp); -1 (no timestamp) is never checked, the default after bound
// is one hour, and LogAppendTime topics do not check the producer's timestamps.
func TestProduceTimestampBounds(t *testing.T) {
	e := newEnv(t)
	now := e.now.UnixMilli()
	e.createTopic("tb", 1, map[string]string{"message.timestamp.before.max.ms": "60000", "message.timestamp.after.max.ms": "60000"})
	e.createTopic("def", 1, nil)
	e.createTopic("lat", 1, map[string]string{"message.timestamp.type": "LogAppendTime", "message.timestamp.before.max.ms": "0"})
	// Three records at now-30s, now-2m, now+2m: the second and third are out of range.
	deltas := []int64{0, -90_000, 150_000}
	b := makeBatch(batchOpts{n: 3, ts: now - 30_000, tsOf: func(i int) int64 { return deltas[i] }})
	sp := e.produce("tb", 0, b)
	if sp.ErrorCode != kerr.InvalidTimestamp.Code || len(sp.ErrorRecords) != 2 ||
		sp.ErrorRecords[0].RelativeOffset != 1 || sp.ErrorRecords[1].RelativeOffset != 2 {
		t.Fatalf("out-of-range timestamps: %v %+v", kerr.ErrorForCode(sp.ErrorCode), sp.ErrorRecords)
	}
	if _, hw, _ := e.p.Offsets("tb", 0); hw != 0 {
		t.Fatalf("rejected batch appended: hw=%d", hw)
	}
	for name, ts := range map[string]int64{"in range": now - 59_000, "none": -1} {
		if sp := e.produce("tb", 0, makeBatch(batchOpts{n: 1, ts: ts})); sp.ErrorCode != 0 {
			t.Fatalf("%s: %v", name, kerr.ErrorForCode(sp.ErrorCode))
		}
	}
	// Defaults: no lower bound, one hour ahead at most.
	if sp := e.produce("def", 0, makeBatch(batchOpts{n: 1, ts: 1})); sp.ErrorCode != 0 {
		t.Fatalf("old timestamp on a default topic: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := e.produce("def", 0, makeBatch(batchOpts{n: 1, ts: now + 3_600_001})); sp.ErrorCode != kerr.InvalidTimestamp.Code {
		t.Fatalf("timestamp more than an hour ahead: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := e.produce("lat", 0, makeBatch(batchOpts{n: 1, ts: 1})); sp.ErrorCode != 0 {
		t.Fatalf("LogAppendTime topic: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
}
