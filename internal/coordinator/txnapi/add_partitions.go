package txnapi

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
	"github.com/muster-io/muster/internal/metadata"
)

// AddPartitionsToTxn serves AddPartitionsToTxn v0–v5 (Kafka's
// handleAddPartitionsToTxnRequest). v0–v3 (clients): partitions of internal or unknown topics
// fail (checkPartitions) and every other partition answers OPERATION_NOT_ATTEMPTED; otherwise the
// shard's answer (txn.AddPartitions) goes to every partition, PRODUCER_FENCED being
// INVALID_PRODUCER_EPOCH below v2. v4+ (brokers; authorized with CLUSTER_ACTION by the caller)
// batches transactions, each checked the same way (internal topics allowed) and then added or,
// with VerifyOnly, verified (KIP-890 part 1).
func (s *Service) AddPartitionsToTxn(ctx context.Context, meta coordinator.Meta, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version >= 4 {
		for _, t := range req.Transactions {
			resp.Transactions = append(resp.Transactions, s.addOrVerify(ctx, meta, t))
		}
		return resp
	}
	codes := s.addPartitions(ctx, meta, req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch,
		topicsOf(req.Topics, func(t kmsg.AddPartitionsToTxnRequestTopic) (string, []int32) { return t.Topic, t.Partitions }))
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[txn.TopicPartition{Topic: t.Topic, Partition: p}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// checkPartitions applies KafkaApis.handleAddPartitionsToTxnRequest's checks before the
// coordinator: from a client (v0–v3) an internal topic is never writable
// (TOPIC_AUTHORIZATION_FAILED, whatever the authorizer says: Kafka authorizes only the
// non-internal topics), an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION (every
// version, VerifyOnly too); if any partition fails, every other one answers
// OPERATION_NOT_ATTEMPTED. It returns nil when all pass.
func (s *Service) checkPartitions(version int16, parts []txn.TopicPartition) map[txn.TopicPartition]int16 {
	var codes map[txn.TopicPartition]int16
	for _, tp := range parts {
		code := int16(0)
		if version < 4 && metadata.IsInternalTopic(tp.Topic) {
			code = kerr.TopicAuthorizationFailed.Code
		} else if !s.partitionExists(tp) {
			code = kerr.UnknownTopicOrPartition.Code
		}
		if code != 0 {
			if codes == nil {
				codes = make(map[txn.TopicPartition]int16, len(parts))
			}
			codes[tp] = code
		}
	}
	for _, tp := range parts {
		if codes != nil && codes[tp] == 0 {
			codes[tp] = kerr.OperationNotAttempted.Code
		}
	}
	return codes
}

// partitionExists reports whether tp exists: __consumer_offsets has a partition per group
// coordinator shard (what AddOffsetsToTxn adds and TxnOffsetCommit verifies), whether or not
// the data plane serves it on this node; every other topic is the data plane's.
func (s *Service) partitionExists(tp txn.TopicPartition) bool {
	if tp.Topic == txn.OffsetsTopic {
		return tp.Partition >= 0 && tp.Partition < s.Groups.Shards()
	}
	n, ok := s.Data.Partitions(tp.Topic)
	return ok && tp.Partition >= 0 && tp.Partition < n
}

// addPartitions adds partitions and returns each one's error code.
func (s *Service) addPartitions(ctx context.Context, meta coordinator.Meta, version int16, id string, pid int64, epoch int16, parts []txn.TopicPartition) map[txn.TopicPartition]int16 {
	if codes := s.checkPartitions(version, parts); codes != nil {
		return codes
	}
	codes := make(map[txn.TopicPartition]int16, len(parts))
	res, err := do(ctx, s, id, meta, txn.AddPartitions(id, pid, epoch, parts))
	if err == nil {
		err = res
	}
	code := codeOf(fenced(err, version, 2))
	for _, tp := range parts {
		codes[tp] = code
	}
	return codes
}

// addOrVerify serves one transaction of AddPartitionsToTxn v4+.
func (s *Service) addOrVerify(ctx context.Context, meta coordinator.Meta, t kmsg.AddPartitionsToTxnRequestTransaction) kmsg.AddPartitionsToTxnResponseTransaction {
	rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
	rt.TransactionalID = t.TransactionalID
	parts := topicsOf(t.Topics, func(x kmsg.AddPartitionsToTxnRequestTransactionTopic) (string, []int32) { return x.Topic, x.Partitions })
	codes := s.checkPartitions(4, parts)
	switch {
	case codes != nil: // a partition failed the checks: nothing added or verified
	case t.VerifyOnly:
		errs := s.VerifyPartitions(ctx, t.TransactionalID, t.ProducerID, t.ProducerEpoch, parts)
		codes = map[txn.TopicPartition]int16{}
		for i, tp := range parts {
			codes[tp] = codeOf(errOrNil(errs[i]))
		}
	default:
		codes = s.addPartitions(ctx, meta, 4, t.TransactionalID, t.ProducerID, t.ProducerEpoch, parts)
	}
	for _, x := range t.Topics {
		top := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		top.Topic = x.Topic
		for _, p := range x.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[txn.TopicPartition{Topic: x.Topic, Partition: p}]
			top.Partitions = append(top.Partitions, rp)
		}
		rt.Topics = append(rt.Topics, top)
	}
	return rt
}

// errOrNil turns a nil *kerr.Error into a nil error.
func errOrNil(e *kerr.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func topicsOf[T any](ts []T, f func(T) (string, []int32)) []txn.TopicPartition {
	var out []txn.TopicPartition
	for _, t := range ts {
		name, ps := f(t)
		for _, p := range ps {
			out = append(out, txn.TopicPartition{Topic: name, Partition: p})
		}
	}
	return out
}

// VerifyPartitions answers whether partitions are in a producer's ongoing transaction (the data
// plane's verification of a transactional Produce, and TxnOffsetCommit's): one error per
// partition, nil when it is in the transaction. A shard that cannot answer makes every
// partition COORDINATOR_NOT_AVAILABLE or its loading error (retriable).
func (s *Service) VerifyPartitions(ctx context.Context, id string, pid int64, epoch int16, parts []txn.TopicPartition) []*kerr.Error {
	errs, err := do(ctx, s, id, coordinator.Meta{}, txn.Verify(id, pid, epoch, parts))
	if errors.Is(err, kerr.NotCoordinator) && s.Remote != nil {
		if ok, rerrs := s.Remote.VerifyPartitions(ctx, s.shardFor(id), id, pid, epoch, parts); ok {
			return rerrs
		}
	}
	if err != nil {
		ke := kerr.CoordinatorNotAvailable
		if err == kerr.CoordinatorLoadInProgress {
			ke = kerr.CoordinatorLoadInProgress
		}
		errs = make([]*kerr.Error, len(parts))
		for i := range errs {
			errs[i] = ke
		}
	}
	return errs
}

// VerifyOffsetsPartition implements the group coordinator's TxnOffsetCommit verification: is
// __consumer_offsets-shard in the producer's ongoing transaction.
func (s *Service) VerifyOffsetsPartition(ctx context.Context, id string, pid int64, epoch int16, shard int32) *kerr.Error {
	return s.VerifyPartitions(ctx, id, pid, epoch, []txn.TopicPartition{{Topic: txn.OffsetsTopic, Partition: shard}})[0]
}
