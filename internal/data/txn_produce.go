package data

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// TxnVerifier answers whether partitions are in a producer's ongoing transaction (KIP-890
// part 1: AddPartitionsToTxn v4 with VerifyOnly, Kafka's
// TransactionCoordinator.handleVerifyPartitionsInTransaction). The transaction coordinator
// implements it. The answer has one error per partition, in order: nil when the partition is
// in the transaction, else INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
// CONCURRENT_TRANSACTIONS, TRANSACTION_ABORTABLE (not added) or a coordinator error.
type TxnVerifier interface {
	VerifyTxnPartitions(ctx context.Context, txnID string, pid int64, epoch int16, parts []TopicPartition) []*kerr.Error
}

// SetTxnVerifier installs the transaction coordinator's verification (called once, before the
// plane serves transactional produces). Without one, partitions are not verified, as with
// Kafka's transaction.partition.verification.enable=false.
func (p *Plane) SetTxnVerifier(v TxnVerifier) { p.verifier = v }

// txnAppend is the verification of one transactional batch: the producer it was verified
// for, the error to answer instead of appending (nil: in the transaction), and the guard
// (Kafka's VerificationGuard): the producer's marker count in the partition before the
// verification; a marker appended since means the transaction ended meanwhile.
type txnAppend struct {
	pid   int64
	epoch int16
	err   *kerr.Error
	guard uint64
}

// txnVerification holds the verified transactional batches of one Produce.
type txnVerification map[*topic]map[int32]*txnAppend

func (v txnVerification) lookup(t *topic, partition int32) *txnAppend {
	if v == nil || t == nil {
		return nil
	}
	return v[t][partition]
}

// verifyTransactional checks the transactional batches of a Produce before anything is
// appended (Kafka's KafkaApis.handleProduceRequest and ReplicaManager's verification):
// transactional batches without a transactional id fail the whole request with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (reqErr), and so do those of more than one producer
// (id and epoch) with INVALID_PRODUCER_ID_MAPPING when verification is on; otherwise each partition with a
// transactional batch is verified with the transaction coordinator, one call per producer.
// Verification errors map as Kafka's AddPartitionsToTxnManager and ReplicaManager map them for
// Produce (produceVerifyError).
func (p *Plane) verifyTransactional(ctx context.Context, req *kmsg.ProduceRequest) (txnVerification, *kerr.Error) {
	type item struct {
		t    *topic
		part *partition
		ta   *txnAppend
	}
	type producer struct {
		pid   int64
		epoch int16
	}
	var items map[producer][]item
	for _, rt := range req.Topics {
		var t *topic
		var parts []*partition
		if req.Version >= 13 {
			t, parts = p.lookupID(rt.TopicID)
		} else {
			t, parts = p.lookup(rt.Topic)
		}
		for _, rp := range rt.Partitions {
			h, ok := readBatchHeader(rp.Records)
			if !ok || h.Attributes&attrTransactional == 0 || h.Attributes&attrControl != 0 {
				continue
			}
			if req.TransactionID == nil {
				return nil, kerr.TransactionalIDAuthorizationFailed
			}
			if t == nil || rp.Partition < 0 || int(rp.Partition) >= len(parts) || h.ProducerID < 0 {
				continue // answered by the append path
			}
			if items == nil {
				items = map[producer][]item{}
			}
			part := parts[rp.Partition]
			pr := producer{h.ProducerID, h.ProducerEpoch}
			items[pr] = append(items[pr], item{t: t, part: part,
				ta: &txnAppend{pid: h.ProducerID, epoch: h.ProducerEpoch, guard: part.txnGuard(h.ProducerID)}})
		}
	}
	if items == nil {
		return nil, nil
	}
	if p.verifier != nil && len(items) > 1 {
		// Kafka's ReplicaManager.appendRecordsWithTransactionVerification: the transactional
		// batches of one request belong to one producer id and epoch.
		return nil, kerr.InvalidProducerIDMapping
	}
	out := txnVerification{}
	for pr, its := range items {
		if p.verifier != nil {
			tps := make([]TopicPartition, len(its))
			for i, it := range its {
				tps[i] = TopicPartition{it.t.name, it.part.index}
			}
			errs := p.verifier.VerifyTxnPartitions(ctx, *req.TransactionID, pr.pid, pr.epoch, tps)
			for i, it := range its {
				if i < len(errs) {
					it.ta.err = produceVerifyError(errs[i], req.Version)
				}
			}
		}
		for _, it := range its {
			if out[it.t] == nil {
				out[it.t] = map[int32]*txnAppend{}
			}
			out[it.t][it.part.index] = it.ta
		}
	}
	return out, nil
}

// produceVerifyError maps a verification error to what Produce at version answers. A
// verification the coordinator cannot answer yet (CONCURRENT_TRANSACTIONS under transaction
// version 1, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR) is
// NOT_ENOUGH_REPLICAS, which every producer retries without a metadata refresh (Kafka's
// ReplicaManager, after AddPartitionsToTxnManager).
func produceVerifyError(err *kerr.Error, version int16) *kerr.Error {
	switch {
	case err == nil:
		return nil
	case err == kerr.ConcurrentTransactions, err == kerr.CoordinatorLoadInProgress,
		err == kerr.CoordinatorNotAvailable, err == kerr.NotCoordinator:
		return kerr.NotEnoughReplicas
	case err == kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch
	case err == kerr.TransactionAbortable && version < 11:
		return kerr.InvalidTxnState
	}
	return err
}

// checkTxnAppend applies the transactional append rules of Kafka's ProducerAppendInfo before
// the sequence checks (part.mu held): a transactional batch must be the one verified, and no
// marker may have ended the producer's transaction since (the verification guard); a
// non-transactional batch of a producer with an open transaction is INVALID_TXN_STATE.
func checkTxnAppend(part *partition, ps *producerState, h batchHeader, transactional bool, ta *txnAppend) *kerr.Error {
	if !transactional {
		if ot := part.openTxns[h.ProducerID]; ot != nil && !ot.closing {
			return kerr.InvalidTxnState
		}
		return nil
	}
	if h.ProducerID != ta.pid || h.ProducerEpoch != ta.epoch {
		return kerr.InvalidTxnState
	}
	if ps != nil && ps.markers != ta.guard {
		if ps.epoch > h.ProducerEpoch {
			return kerr.InvalidProducerEpoch
		}
		return kerr.InvalidTxnState
	}
	return nil
}

// beginTxn opens pid's transaction at base unless one is open (part.mu held); true when it
// opened one (the append then stores it).
func (p *partition) beginTxn(pid int64, epoch int16, base int64) bool {
	if ot := p.openTxns[pid]; ot != nil && !ot.closing {
		return false
	}
	p.openTxns[pid] = &openTxn{first: base, epoch: epoch}
	if p.firstUnstable < 0 || base < p.firstUnstable {
		p.firstUnstable = base
	}
	return true
}

// abandonTxn forgets a transaction opened by an append whose commit failed.
func (p *partition) abandonTxn(pid, base int64) {
	p.mu.Lock()
	if ot := p.openTxns[pid]; ot != nil && ot.first == base {
		delete(p.openTxns, pid)
		p.recomputeUnstable()
	}
	p.mu.Unlock()
}
