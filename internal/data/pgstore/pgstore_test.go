package pgstore_test

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/data/pgstore"
	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// fakeLeaders is the cluster's view of leadership as these tests drive it: nobody else leads,
// and fenced leases are recorded.
type fakeLeaders struct {
	mu     sync.Mutex
	fenced []int32
}

func (l *fakeLeaders) Leader([16]byte, int32) (int32, int32, bool) { return -1, -1, false }
func (l *fakeLeaders) Fenced(_ [16]byte, index, epoch int32) {
	l.mu.Lock()
	l.fenced = append(l.fenced, epoch)
	l.mu.Unlock()
}

type node struct {
	t       *testing.T
	db      *postgres.DB
	st      *pgstore.Store
	p       *data.Plane
	me      postgres.Me
	leaders *fakeLeaders
	lost    map[int32]chan struct{}
}

func newNode(t *testing.T, url string, id int32) *node {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	me := postgres.Me{ID: id, Incarnation: int64(id) * 100}
	if err := db.Register(ctx, postgres.Node{ID: id, Incarnation: me.Incarnation}, 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, db: db, me: me, leaders: &fakeLeaders{}, lost: map[int32]chan struct{}{}}
	n.st = pgstore.Open(db, pgstore.Options{TailBytes: 4 << 10})
	n.p, err = data.OpenStore(n.st, data.Config{NodeID: id, AdvertisedHost: "127.0.0.1", AdvertisedPort: 9092,
		ClusterID: "c", AutoCreateTopics: true, Leaders: n.leaders}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.p.Close()
		n.st.Close()
		db.Close()
	})
	return n
}

// lead acquires the lease of partition index of topic and waits until the plane leads it.
func (n *node) lead(topic [16]byte, index int32) int32 {
	n.t.Helper()
	epoch, err := n.db.AcquireLease(context.Background(), n.me, postgres.PartitionLeaseKind(topic), index)
	if err != nil {
		n.t.Fatalf("node %d: acquire partition %d: %v", n.me.ID, index, err)
	}
	lost := make(chan struct{})
	n.lost[index] = lost
	n.p.LeadPartition(topic, index, int32(epoch), lost)
	for deadline := time.Now().Add(10 * time.Second); !n.p.Leading(topic, index); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			n.t.Fatalf("node %d does not lead partition %d", n.me.ID, index)
		}
	}
	return int32(epoch)
}

// batch is an idempotent producer's batch of n records (pid < 0: not idempotent).
func batch(pid int64, epoch int16, seq int32, n int, attrs int16) []byte {
	var recs []byte
	for i := 0; i < n; i++ {
		r := kmsg.NewRecord()
		r.OffsetDelta = int32(i)
		r.Key = []byte{byte(i)}
		r.Value = []byte("value")
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - len(binary.AppendVarint(nil, int64(r.Length))))
		recs = r.AppendTo(recs)
	}
	if pid < 0 {
		epoch, seq = -1, -1
	}
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(n - 1),
		FirstTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_000_000, ProducerID: pid, ProducerEpoch: epoch,
		FirstSequence: seq, NumRecords: int32(n), Records: recs}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func (n *node) produce(topic string, part int32, b []byte) kmsg.ProduceResponseTopicPartition {
	n.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 11, -1
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, b
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return n.p.Produce(context.Background(), req).Topics[0].Partitions[0]
}

// fetch returns the partition's answer and the offsets of its records.
func (n *node) fetch(topic string, part int32, offset int64, epoch int32) (kmsg.FetchResponseTopicPartition, []int64) {
	n.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxBytes, req.SessionEpoch = 12, 50<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = part, offset, 10<<20, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	sp := n.p.Fetch(context.Background(), req).Topics[0].Partitions[0]
	var offs []int64
	for b := sp.RecordBatches; len(b) > 0; {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			n.t.Fatal(err)
		}
		for i := int32(0); i < rb.NumRecords; i++ {
			offs = append(offs, rb.FirstOffset+int64(i))
		}
		b = b[int(rb.Length)+12:]
	}
	return sp, offs
}

// TestPlaneOnPostgres: two data planes share one database. A topic created on one exists on the
// other with the same id. The leader appends and serves fetches from its tail and, for older
// data, the database; a stale leader's write is refused (NOT_LEADER_OR_FOLLOWER, the partition
// unloads); the next leader loads the end state: no acknowledged record lost, no offset reused,
// an idempotent producer's retry of an acknowledged batch deduplicated, the log start kept.
func TestPlaneOnPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := newNode(t, url, 1), newNode(t, url, 2)
	info, err := a.p.CreateTopic("t", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if bi, ok := b.p.Topic("t"); ok {
			if bi.ID != info.ID || bi.Partitions != 2 {
				t.Fatalf("node 2 sees %+v, node 1 created %+v", bi, info)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node 2 never learned the topic")
		}
	}
	if sp := a.produce("t", 0, batch(-1, 0, 0, 3, 0)); sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce before leading: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	e1 := a.lead(info.ID, 0)
	var want []int64
	for i := int32(0); i < 20; i++ {
		sp := a.produce("t", 0, batch(7, 0, i*3, 3, 0))
		if sp.ErrorCode != 0 || sp.BaseOffset != int64(i)*3 {
			t.Fatalf("produce %d: %v base %d", i, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
		}
		want = append(want, int64(i)*3, int64(i)*3+1, int64(i)*3+2)
	}
	// The tail holds the newest 4 KiB; offset 0 comes from the database.
	for _, from := range []int64{0, 57} {
		sp, offs := a.fetch("t", 0, from, e1)
		if sp.ErrorCode != 0 || sp.HighWatermark != 60 || len(offs) == 0 || offs[len(offs)-1] != 59 || offs[0] > from {
			t.Fatalf("fetch from %d: %v hw %d offsets %v", from, kerr.ErrorForCode(sp.ErrorCode), sp.HighWatermark, offs)
		}
	}
	if sp, _ := a.fetch("t", 0, 0, e1+1); sp.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("fetch with a newer epoch: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp, _ := b.fetch("t", 0, 0, -1); sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch at a non-leader: %v", kerr.ErrorForCode(sp.ErrorCode))
	}

	// Node 1's registration ends (as after its death): node 2 takes the lease over; node 1's
	// next write is refused by the database.
	if err := a.db.Deregister(context.Background(), a.me); err != nil {
		t.Fatal(err)
	}
	e2 := b.lead(info.ID, 0)
	if e2 <= e1 {
		t.Fatalf("epoch %d after %d", e2, e1)
	}
	if sp := a.produce("t", 0, batch(7, 0, 60, 3, 0)); sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("stale leader's produce: %v base %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	if a.p.Leading(info.ID, 0) {
		t.Fatal("the fenced leader still leads")
	}
	a.leaders.mu.Lock()
	if len(a.leaders.fenced) != 1 || a.leaders.fenced[0] != e1 {
		t.Fatalf("fenced leases reported: %v", a.leaders.fenced)
	}
	a.leaders.mu.Unlock()
	// The producer's retry of its last acknowledged batch is a duplicate at node 2; its next
	// batch continues the log.
	if sp := b.produce("t", 0, batch(7, 0, 57, 3, 0)); sp.ErrorCode != 0 || sp.BaseOffset != 57 {
		t.Fatalf("retry at the new leader: %v base %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	if sp := b.produce("t", 0, batch(7, 0, 60, 3, 0)); sp.ErrorCode != 0 || sp.BaseOffset != 60 {
		t.Fatalf("next batch at the new leader: %v base %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	want = append(want, 60, 61, 62)
	_, offs := b.fetch("t", 0, 0, e2)
	if len(offs) != len(want) {
		t.Fatalf("node 2 serves offsets %v, want %v", offs, want)
	}
	for i := range want {
		if offs[i] != want[i] {
			t.Fatalf("node 2 serves offsets %v, want %v", offs, want)
		}
	}
	if sp, _ := b.fetch("t", 0, 0, e1); sp.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("fetch with the old epoch: %v", kerr.ErrorForCode(sp.ErrorCode))
	}

	// DeleteRecords at the leader; the log start survives a move back.
	dr := kmsg.NewPtrDeleteRecordsRequest()
	drt := kmsg.NewDeleteRecordsRequestTopic()
	drt.Topic = "t"
	drp := kmsg.NewDeleteRecordsRequestTopicPartition()
	drp.Offset = 30
	drt.Partitions = append(drt.Partitions, drp)
	dr.Topics = append(dr.Topics, drt)
	if r := b.p.DeleteRecords(context.Background(), dr).Topics[0].Partitions[0]; r.ErrorCode != 0 || r.LowWatermark != 30 {
		t.Fatalf("delete records: %v %d", kerr.ErrorForCode(r.ErrorCode), r.LowWatermark)
	}
	if err := b.p.UnleadPartition(context.Background(), info.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.db.ReleaseLease(context.Background(), b.me, postgres.PartitionLeaseKind(info.ID), 0, int64(e2)); err != nil {
		t.Fatal(err)
	}
	if err := a.db.Register(context.Background(), postgres.Node{ID: 1, Incarnation: a.me.Incarnation}, 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	e3 := a.lead(info.ID, 0)
	sp, offs := a.fetch("t", 0, 30, e3)
	if sp.ErrorCode != 0 || sp.LogStartOffset != 30 || sp.HighWatermark != 63 || offs[0] != 30 {
		t.Fatalf("after the move back: %v log start %d hw %d offsets %v", kerr.ErrorForCode(sp.ErrorCode), sp.LogStartOffset, sp.HighWatermark, offs)
	}
	if sp := a.produce("t", 0, batch(7, 0, 63, 3, 0)); sp.ErrorCode != 0 || sp.BaseOffset != 63 {
		t.Fatalf("produce after the move back: %v base %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}

	// A topic deleted on one node goes from the other.
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TopicNames = []string{"t"}
	dt.Version = 5
	if r := b.p.DeleteTopics(context.Background(), dt); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete topic: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := a.p.Topic("t"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node 1 still has the deleted topic")
		}
	}
	if a.p.Leading(info.ID, 0) {
		t.Fatal("node 1 still leads a partition of the deleted topic")
	}
}
