package txnapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// AddOffsetsToTxn serves AddOffsetsToTxn v0–v4 (Kafka's handleAddOffsetsToTxnRequest): the
// group's __consumer_offsets partition (its group coordinator shard) joins the transaction, so
// its COMMIT or ABORT marker reaches the offsets TxnOffsetCommit stages. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH below v2.
func (s *Service) AddOffsetsToTxn(ctx context.Context, meta coordinator.Meta, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	tp := txn.TopicPartition{Topic: txn.OffsetsTopic, Partition: coordinator.ShardFor(req.Group, s.Groups.Shards())}
	res, err := do(ctx, s, req.TransactionalID, meta, txn.AddPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, []txn.TopicPartition{tp}))
	if err == nil {
		err = res
	}
	resp.ErrorCode = codeOf(fenced(err, req.Version, 2))
	return resp
}
