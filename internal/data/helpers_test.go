package data

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type env struct {
	t   testing.TB
	dir string
	db  *pebble.DB
	p   *Plane
	cfg Config
	ctx context.Context
	now time.Time
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), ctx: context.Background(), now: time.UnixMilli(1_700_000_000_000)}
	e.cfg = Config{NodeID: 1, AdvertisedHost: "127.0.0.1", AdvertisedPort: 9092, ClusterID: "muster-test",
		AutoCreateTopics: true, Now: func() time.Time { return e.now }}
	e.open()
	t.Cleanup(func() { e.close() })
	return e
}

func (e *env) open() {
	e.t.Helper()
	db, err := pebble.Open(e.dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := Open(db, e.cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db, e.p = db, p
}

func (e *env) close() {
	if e.db == nil {
		return
	}
	_ = e.p.Close()
	if err := e.db.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.db, e.p = nil, nil
}

func (e *env) restart() { e.close(); e.open() }

// batchOpts describes a test record batch.
type batchOpts struct {
	idem    bool // idempotent: pid, epoch and seq are used
	n       int
	valSize int
	pid     int64
	epoch   int16
	seq     int32
	ts      int64 // first timestamp; record i has ts+i (unless tsOf is set)
	attrs   int16
	// tsOf, when set, gives record i's timestamp delta instead of i.
	tsOf func(i int) int64
	// compress, when set, compresses the records section; the codec bits of
	// attrs must say which codec it is.
	compress func([]byte) []byte
}

// makeBatch encodes a magic-2 record batch the way a client does: kmsg
// records, kmsg.RecordBatch.AppendTo, CRC-32C over attributes..end.
func makeBatch(o batchOpts) []byte {
	if !o.idem {
		o.pid, o.epoch, o.seq = -1, -1, -1
	}
	var recs []byte
	for i := 0; i < o.n; i++ {
		r := kmsg.NewRecord()
		r.TimestampDelta64 = int64(i)
		if o.tsOf != nil {
			r.TimestampDelta64 = o.tsOf(i)
		}
		r.OffsetDelta = int32(i)
		r.Key = []byte{byte(i)}
		r.Value = make([]byte, o.valSize)
		for j := range r.Value {
			r.Value[j] = byte(i + j)
		}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - varintLen(r.Length))
		recs = r.AppendTo(recs)
	}
	maxTS := o.ts + int64(o.n-1)
	if o.tsOf != nil {
		maxTS = o.ts
		for i := 0; i < o.n; i++ {
			maxTS = max(maxTS, o.ts+o.tsOf(i))
		}
	}
	if o.compress != nil {
		recs = o.compress(recs)
	}
	b := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           o.attrs,
		LastOffsetDelta:      int32(o.n - 1),
		FirstTimestamp:       o.ts,
		MaxTimestamp:         maxTS,
		ProducerID:           o.pid,
		ProducerEpoch:        o.epoch,
		FirstSequence:        o.seq,
		NumRecords:           int32(o.n),
		Records:              recs,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func varintLen(v int32) int { return len(binary.AppendVarint(nil, int64(v))) }

func (e *env) createTopic(name string, parts int32, cfgs map[string]string) TopicInfo {
	e.t.Helper()
	ti, err := e.p.CreateTopic(name, parts, cfgs)
	if err != nil {
		e.t.Fatal(err)
	}
	return ti
}

func (e *env) produce(topic string, part int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	e.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version = 11
	req.Acks = -1
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := e.p.Produce(e.ctx, req)
	if resp == nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		e.t.Fatalf("bad produce response %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

func fetchReq(version int16, topic string, part int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.MaxBytes = 50 << 20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = part, offset, 10<<20
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func (e *env) fetch(topic string, part int32, offset int64) kmsg.FetchResponseTopicPartition {
	e.t.Helper()
	resp := e.p.Fetch(e.ctx, fetchReq(11, topic, part, offset))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		e.t.Fatalf("bad fetch response %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// decodeBatches splits fetched bytes into batches and checks each CRC.
func decodeBatches(t testing.TB, b []byte) []kmsg.RecordBatch {
	t.Helper()
	var out []kmsg.RecordBatch
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatal(err)
		}
		size := int(rb.Length) + 12
		if crc32.Checksum(b[21:size], crc32.MakeTable(crc32.Castagnoli)) != uint32(rb.CRC) {
			t.Fatalf("batch at %d: bad CRC", rb.FirstOffset)
		}
		out = append(out, rb)
		b = b[size:]
	}
	return out
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
