package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// TxnVerifier is the transaction coordinator as the group coordinator uses it: whether the
// group's __consumer_offsets partition (its shard) is in a producer's ongoing transaction
// (KIP-890 part 1: Kafka's TxnOffsetCommit verification through AddPartitionsToTxnManager). nil
// when it is, else INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS,
// TRANSACTION_ABORTABLE (not added) or a coordinator error.
type TxnVerifier interface {
	VerifyOffsetsPartition(ctx context.Context, txnID string, pid int64, epoch int16, shard int32) *kerr.Error
}

// TxnOffsetCommit serves TxnOffsetCommit v0–v4 (Kafka's handleTxnOffsetCommitRequest and
// commitTransactionalOffsets). Partitions of unknown topics (or past a topic's partition count)
// answer UNKNOWN_TOPIC_OR_PARTITION first, as KafkaApis.handleTxnOffsetCommitRequest does before
// it calls the group coordinator: no other error overwrites them, and a request with only such
// partitions is not verified at all. The rest go to commitKnown. Partitions answer in request
// order.
func (s *Service) TxnOffsetCommit(ctx context.Context, meta coordinator.Meta, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	known, unknown := splitUnknownPartitions(s.image(), req.Topics,
		func(t kmsg.TxnOffsetCommitRequestTopic) (string, []kmsg.TxnOffsetCommitRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.TxnOffsetCommitRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.TxnOffsetCommitRequestTopic, ps []kmsg.TxnOffsetCommitRequestTopicPartition) kmsg.TxnOffsetCommitRequestTopic {
			t.Partitions = ps
			return t
		})
	if len(unknown) == 0 {
		return s.commitKnown(ctx, meta, req)
	}
	codes := map[topicPartition]int16{}
	if len(known) > 0 {
		sub := *req
		sub.Topics = known
		for _, t := range s.commitKnown(ctx, meta, &sub).Topics {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
			}
		}
	}
	for tp := range unknown {
		codes[tp] = kerr.UnknownTopicOrPartition.Code
	}
	out := coordinator.TxnOffsetCommitResponse(req, nil)
	for i := range out.Topics {
		for j := range out.Topics[i].Partitions {
			rp := &out.Topics[i].Partitions[j]
			rp.ErrorCode = codes[topicPartition{out.Topics[i].Topic, rp.Partition}]
		}
	}
	return out
}

// commitKnown commits partitions of known topics (Kafka's
// GroupCoordinatorService.commitTransactionalOffsets): an empty group id is INVALID_GROUP_ID;
// the group's partition must be in the producer's transaction (AddOffsetsToTxn) —
// PRODUCER_FENCED answers INVALID_PRODUCER_EPOCH, a partition not added INVALID_TXN_STATE up to
// v3 and TRANSACTION_ABORTABLE from v4; the rest is coordinator.TxnOffsetCommit.
// COORDINATOR_LOAD_IN_PROGRESS is COORDINATOR_NOT_AVAILABLE below v2.
func (s *Service) commitKnown(ctx context.Context, meta coordinator.Meta, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	fail := func(err error) *kmsg.TxnOffsetCommitResponse {
		if req.Version < 2 && err == kerr.CoordinatorLoadInProgress {
			err = kerr.CoordinatorNotAvailable
		}
		return coordinator.TxnOffsetCommitResponse(req, err)
	}
	if req.Group == "" {
		return fail(kerr.InvalidGroupID)
	}
	shard := coordinator.ShardFor(req.Group, s.RT.Shards())
	if s.Txn != nil {
		if verr := s.Txn.VerifyOffsetsPartition(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, shard); verr != nil {
			switch {
			case verr == kerr.ProducerFenced:
				verr = kerr.InvalidProducerEpoch
			case verr == kerr.TransactionAbortable && req.Version < 4:
				verr = kerr.InvalidTxnState
			}
			return fail(verr)
		}
	}
	resp, err := doShard(ctx, s, shard, meta, coordinator.TxnOffsetCommit(req))
	if err != nil {
		return fail(err)
	}
	return resp
}

// CompleteTransaction applies a transaction marker to a group coordinator shard (the
// transaction coordinator's marker for the __consumer_offsets partition AddOffsetsToTxn added;
// Kafka's GroupCoordinatorService.completeTransaction): the producer's pending offsets are
// committed or dropped, durably, before it returns.
func (s *Service) CompleteTransaction(ctx context.Context, shard int32, pid int64, epoch int16, commit bool) error {
	_, err := doShard(ctx, s, shard, coordinator.Meta{}, coordinator.CompleteTransaction(pid, epoch, commit))
	return err
}

// Shards is the group coordinator's shard count (offsets.topic.num.partitions).
func (s *Service) Shards() int32 { return s.RT.Shards() }
