package txnapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// EndTxn serves EndTxn v0–v4 (transaction version 1; Kafka's handleEndTxnRequest): the shard
// answers by txn.EndTxn's table (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2); a
// transaction it prepared gets its markers written before the answer, so what the client
// committed is readable (read_committed) and its offsets fetchable when EndTxn returns. Should
// the markers fail (storage), the answer is still NONE — the Prepare record is durable and the
// background writer completes the transaction — as Kafka answers once PrepareCommit is written.
func (s *Service) EndTxn(ctx context.Context, meta coordinator.Meta, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	r, err := do(ctx, s, req.TransactionalID, meta, txn.EndTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit))
	if err == nil && r.Err != nil {
		err = r.Err
	}
	if err != nil {
		resp.ErrorCode = codeOf(fenced(err, req.Version, 2))
		return resp
	}
	if r.Prepared {
		if err := s.completeID(ctx, req.TransactionalID); err != nil {
			s.Log.Warn("transaction markers failed; the background writer retries", "transactional_id", req.TransactionalID, "err", err)
			s.flag(s.shardFor(req.TransactionalID))
		}
	}
	resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch
	return resp
}
