package txn

// Raw protocol helpers: requests at chosen versions, record batches with chosen producer ids,
// epochs and sequences, for the conformance tests.

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// rawBatch is a record batch of n records by producer pid at epoch starting at sequence seq,
// transactional or not.
func rawBatch(pid int64, epoch int16, seq int32, n int, transactional bool) []byte {
	var recs []byte
	for i := 0; i < n; i++ {
		r := kmsg.NewRecord()
		r.OffsetDelta = int32(i)
		r.Value = []byte("v")
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - len(binary.AppendVarint(nil, int64(r.Length))))
		recs = r.AppendTo(recs)
	}
	var attrs int16
	if transactional {
		attrs = 0x10
	}
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(n - 1),
		FirstTimestamp: now, MaxTimestamp: now, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq,
		NumRecords: int32(n), Records: recs}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

type prober struct {
	t  *testing.T
	rc *testutil.RawConn
}

func newProber(t *testing.T, addr string) *prober {
	rc, err := testutil.DialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return &prober{t: t, rc: rc}
}

func (p *prober) do(req kmsg.Request) kmsg.Response {
	p.t.Helper()
	resp, err := p.rc.Do(req)
	if err != nil {
		p.t.Fatalf("%T: %v", req, err)
	}
	return resp
}

func (p *prober) init(v int16, id *string, timeout int32, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = v, id, timeout, pid, epoch
	return p.do(req).(*kmsg.InitProducerIDResponse)
}

func (p *prober) addParts(v int16, id string, pid int64, epoch int16, topic string, parts ...int32) *kmsg.AddPartitionsToTxnResponse {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = v, id, pid, epoch
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: parts}}
	return p.do(req).(*kmsg.AddPartitionsToTxnResponse)
}

func (p *prober) endTxn(v int16, id string, pid int64, epoch int16, commit bool) int16 {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = v, id, pid, epoch, commit
	return p.do(req).(*kmsg.EndTxnResponse).ErrorCode
}

func (p *prober) produce(v int16, id *string, topic string, part int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis, req.TransactionID = v, -1, 5000, id
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: part, Records: batch}}}}
	return p.do(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

func errName(c int16) string {
	if c == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(c).(*kerr.Error).Message
}
