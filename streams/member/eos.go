package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Processing guarantees (Kafka Streams' processing.guarantee).
const (
	// AtLeastOnce commits offsets with CommitTaskOffsets (the default).
	AtLeastOnce = "at_least_once"
	// ExactlyOnceV2 is Kafka Streams' exactly_once_v2 (KIP-447): each stream thread owns one
	// transactional producer (NewTransactionalProducer) and commits its tasks' offsets inside
	// its transactions (TxnOffsetCommit with the member's id and epoch, so a fenced member's
	// zombie transaction can never commit offsets of tasks it lost).
	ExactlyOnceV2 = "exactly_once_v2"
)

// ErrNotExactlyOnce is returned by NewTransactionalProducer unless the member's
// ProcessingGuarantee is ExactlyOnceV2.
var ErrNotExactlyOnce = errors.New("member: transactional producers need ProcessingGuarantee exactly_once_v2")

// TxnProducer is one stream thread's transactional producer (exactly_once_v2): records the thread
// produces and the offsets of the input it consumed commit atomically, or not at all. Its
// transactional id is Kafka Streams' "<application.id>-<process id>-<thread index>", so a thread
// that restarts with the same process id and index fences its previous incarnation.
//
// Use it from one goroutine: Begin, Produce, then CommitTransaction (with the offsets) or
// AbortTransaction. After an error, abort and reprocess from the committed offsets.
type TxnProducer struct {
	m     *Member
	cl    *kgo.Client
	txnID string
	// offsetsAdded is set when this transaction's offsets reached the group coordinator:
	// a transaction of offsets only is ended here (franz-go ends only transactions it produced
	// in).
	offsetsAdded bool
	produced     bool
}

// NewTransactionalProducer starts the transactional producer of stream thread threadIdx
// (InitProducerId: it fences an earlier producer with the same transactional id and aborts its
// open transaction). opts are extra franz-go options (the member's ClientOpts come first).
func (m *Member) NewTransactionalProducer(ctx context.Context, threadIdx int, opts ...kgo.Opt) (*TxnProducer, error) {
	if m.cfg.ProcessingGuarantee != ExactlyOnceV2 {
		return nil, ErrNotExactlyOnce
	}
	txnID := m.cfg.GroupID + "-" + m.cfg.ProcessID + "-" + strconv.Itoa(threadIdx)
	all := append([]kgo.Opt{kgo.SeedBrokers(m.cfg.Brokers...)}, m.cfg.ClientOpts...)
	all = append(all, kgo.TransactionalID(txnID), kgo.TransactionTimeout(m.cfg.TransactionTimeout))
	all = append(all, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, err
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("member: init transactional producer %s: %w", txnID, err)
	}
	return &TxnProducer{m: m, cl: cl, txnID: txnID}, nil
}

// TransactionalID is the producer's transactional id.
func (p *TxnProducer) TransactionalID() string { return p.txnID }

// Client is the producer's franz-go client (for its metrics or raw requests).
func (p *TxnProducer) Client() *kgo.Client { return p.cl }

// Begin starts a transaction.
func (p *TxnProducer) Begin() error {
	p.offsetsAdded, p.produced = false, false
	return p.cl.BeginTransaction()
}

// Produce writes records in the transaction and waits for them.
func (p *TxnProducer) Produce(ctx context.Context, rs ...*kgo.Record) error {
	if len(rs) == 0 {
		return nil
	}
	p.produced = true
	return p.cl.ProduceSync(ctx, rs...).FirstErr()
}

// CommitTransaction commits the transaction with the offsets of the input its records came from
// (the next offset to process of each partition): AddOffsetsToTxn, TxnOffsetCommit carrying the
// member's id, epoch and instance id (KIP-447: a member fenced meanwhile gets
// ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID and the transaction must be aborted), then EndTxn.
func (p *TxnProducer) CommitTransaction(ctx context.Context, offsets []Offset) error {
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("member: flush: %w", err)
	}
	if len(offsets) > 0 {
		if err := p.sendOffsets(ctx, offsets); err != nil {
			return err
		}
	}
	return p.end(ctx, true)
}

// AbortTransaction aborts the transaction: nothing it produced is read_committed and none of its
// offsets commit.
func (p *TxnProducer) AbortTransaction(ctx context.Context) error {
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return err
	}
	return p.end(ctx, false)
}

// end ends the transaction, also when franz-go would not (offsets only).
func (p *TxnProducer) end(ctx context.Context, commit bool) error {
	try := kgo.TryAbort
	if commit {
		try = kgo.TryCommit
	}
	if err := p.cl.EndTransaction(ctx, try); err != nil {
		return fmt.Errorf("member: end transaction: %w", err)
	}
	if !p.offsetsAdded || p.produced {
		return nil
	}
	pid, epoch, err := p.cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.txnID, pid, epoch, commit
	resp, err := req.RequestWith(ctx, p.cl)
	if err != nil {
		return fmt.Errorf("member: end transaction: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("member: end transaction: %w", err)
	}
	return nil
}

// sendOffsets adds the group's offsets to the transaction with the member's group metadata.
func (p *TxnProducer) sendOffsets(ctx context.Context, offsets []Offset) error {
	pid, epoch, err := p.cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = p.txnID, pid, epoch, p.m.cfg.GroupID
	aresp, err := ao.RequestWith(ctx, p.cl)
	if err != nil {
		return fmt.Errorf("member: add offsets to transaction: %w", err)
	}
	if err := kerr.ErrorForCode(aresp.ErrorCode); err != nil {
		return fmt.Errorf("member: add offsets to transaction: %w", err)
	}
	p.offsetsAdded = true
	p.m.mu.Lock()
	memberID, memberEpoch := p.m.snap.memberID, p.m.snap.epoch
	p.m.mu.Unlock()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = p.txnID, p.m.cfg.GroupID, pid, epoch
	req.MemberID, req.Generation = memberID, memberEpoch
	if p.m.cfg.InstanceID != "" {
		s := p.m.cfg.InstanceID
		req.InstanceID = &s
	}
	sorted := slices.Clone(offsets)
	slices.SortStableFunc(sorted, func(a, b Offset) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
	for _, o := range sorted {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != o.Topic {
			t := kmsg.NewTxnOffsetCommitRequestTopic()
			t.Topic = o.Topic
			req.Topics = append(req.Topics, t)
		}
		t := &req.Topics[len(req.Topics)-1]
		pp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		pp.Partition, pp.Offset, pp.LeaderEpoch = o.Partition, o.Offset, o.LeaderEpoch
		md := o.Metadata
		pp.Metadata = &md
		t.Partitions = append(t.Partitions, pp)
	}
	resp, err := req.RequestWith(ctx, p.cl)
	if err != nil {
		return fmt.Errorf("member: commit offsets in transaction: %w", err)
	}
	var errs []error
	for _, t := range resp.Topics {
		for _, pp := range t.Partitions {
			if e := kerr.ErrorForCode(pp.ErrorCode); e != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", t.Topic, pp.Partition, e))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("member: commit offsets in transaction: %w", err)
	}
	return nil
}

// Close closes the producer's client (an open transaction is aborted by its timeout or by the
// next producer of the same thread).
func (p *TxnProducer) Close() { p.cl.Close() }
