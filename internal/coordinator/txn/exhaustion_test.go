package txn

import (
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

type res[T any] struct{ v T }

func (r *res[T]) Set(v T, _ error) { r.v = v }
func (r *res[T]) Release()         {}
func (r *res[T]) Fail(error)       {}

func run[T any](st *ShardState, op func(*ShardState, *coordinator.Call[T])) T {
	r := &res[T]{}
	op(st, coordinator.NewCall(coordinator.Meta{}, coordinator.Waiter[T](r)))
	st.TakeEffects()
	return r.v
}

// An exhausted epoch (Short.MAX-1) is never handed out again: the next InitProducerId rotates to
// a new producer id at epoch 0 (Kafka's prepareProducerIdRotation), and a KIP-360 retry with the
// old id and exhausted epoch finds the rotation.
func TestEpochExhaustionRotatesProducerID(t *testing.T) {
	st := NewShardState(0, ConfigFrom(config.Defaults()), slog.New(slog.DiscardHandler), nil)
	st.SetNow(time.UnixMilli(1000))
	m := &Metadata{ID: "tx", ProducerID: 5, PreviousProducerID: -1, NextProducerID: -1, ProducerEpoch: 32765,
		LastProducerEpoch: -1, TimeoutMs: 1000, State: CompleteCommit, StartMs: 1, LastUpdateMs: 1}
	if err := st.Replay(coordinator.Record{Key: txnKey("tx"), Value: txnValue(m)}); err != nil {
		t.Fatal(err)
	}
	id := "tx"
	init := func(pid int64, epoch int16, fresh int64) InitResult {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, &id, 1000
		req.ProducerID, req.ProducerEpoch = pid, epoch
		return run(st, InitProducerID(req, fresh))
	}
	if r := init(5, 32765, -1); r.Resp == nil || r.Resp.ProducerEpoch != 32766 || r.Resp.ProducerID != 5 {
		t.Fatalf("bump to the last epoch: %+v", r)
	}
	if r := init(5, 32766, -1); !r.NeedProducerID {
		t.Fatalf("the exhausted epoch must ask for a new producer id: %+v", r)
	}
	if r := init(5, 32766, 9); r.Resp.ProducerID != 9 || r.Resp.ProducerEpoch != 0 || r.Resp.ErrorCode != 0 {
		t.Fatalf("rotation: %+v", r.Resp)
	}
	if r := init(5, 32766, -1); r.Resp.ProducerID != 9 || r.Resp.ProducerEpoch != 0 || r.Resp.ErrorCode != 0 {
		t.Fatalf("retry of the rotation with the old id and epoch: %+v", r.Resp)
	}
	if st.Txns["tx"].PreviousProducerID != 5 {
		t.Fatalf("previous producer id %d", st.Txns["tx"].PreviousProducerID)
	}
}

// The record round-trips every field, Empty's partitions are null, and a corrupt record is an
// error, never a panic.
func TestTxnRecordRoundTrip(t *testing.T) {
	st := NewShardState(0, ConfigFrom(config.Defaults()), nil, nil)
	for _, m := range []*Metadata{
		{ID: "a", ProducerID: 1, PreviousProducerID: 2, NextProducerID: 3, ProducerEpoch: 4, LastProducerEpoch: 3, TimeoutMs: 5,
			State: Ongoing, Partitions: []TopicPartition{{"t", 0}, {"t", 2}, {"u", 1}}, StartMs: 6, LastUpdateMs: 7, ClientTransactionVersion: 1},
		{ID: "b", ProducerID: 1, PreviousProducerID: -1, NextProducerID: -1, ProducerEpoch: 0, LastProducerEpoch: -1, TimeoutMs: 5,
			State: Empty, StartMs: -1, LastUpdateMs: 7},
	} {
		if err := st.Replay(coordinator.Record{Key: txnKey(m.ID), Value: txnValue(m)}); err != nil {
			t.Fatal(err)
		}
		got := st.Txns[m.ID]
		if got.ID != m.ID || got.ProducerID != m.ProducerID || got.PreviousProducerID != m.PreviousProducerID ||
			got.NextProducerID != m.NextProducerID || got.ProducerEpoch != m.ProducerEpoch || got.LastProducerEpoch != m.LastProducerEpoch ||
			got.TimeoutMs != m.TimeoutMs || got.State != m.State || len(got.Partitions) != len(m.Partitions) ||
			got.StartMs != m.StartMs || got.LastUpdateMs != m.LastUpdateMs || got.ClientTransactionVersion != m.ClientTransactionVersion {
			t.Fatalf("round trip %+v → %+v", m, got)
		}
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(txnValue(st.Txns["b"])); err != nil || v.Topics != nil {
		t.Fatalf("Empty's partitions: %v %v", v.Topics, err)
	}
	for _, r := range []coordinator.Record{
		{Key: []byte{0}},
		{Key: []byte{0, 1, 0, 1, 'x'}, Value: []byte{0, 0}},
		{Key: txnKey("x"), Value: []byte{0, 1, 2}},
		{Key: txnKey("x"), Value: []byte{0, 9, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		if err := st.Replay(r); err == nil {
			t.Errorf("replay(%x, %x) = nil, want error", r.Key, r.Value)
		}
	}
}
