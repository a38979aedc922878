package txnapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// InitProducerID serves InitProducerId v0–v5. A null transactional id gets a fresh producer id
// at epoch 0 (an idempotent producer, even when v3+ names its current id and epoch, as Kafka
// does); a transactional id goes to its shard (txn.InitProducerID), which may ask for a new
// producer id: it is allocated outside the shard loop and the operation runs again with it.
func (s *Service) InitProducerID(ctx context.Context, meta coordinator.Meta, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID == nil {
		pid, err := s.Data.AllocProducerID()
		if err != nil {
			s.Log.Error("allocate producer id", "err", err)
			resp.ErrorCode = kerr.KafkaStorageError.Code
			return resp
		}
		resp.ProducerID, resp.ProducerEpoch = pid, 0
		return resp
	}
	fresh := int64(-1)
	for attempt := 0; attempt < 3; attempt++ {
		r, err := do(ctx, s, *req.TransactionalID, meta, txn.InitProducerID(req, fresh))
		if err != nil {
			resp.ErrorCode = codeOf(fenced(err, req.Version, 4))
			return resp
		}
		if !r.NeedProducerID {
			return r.Resp
		}
		if fresh, err = s.Data.AllocProducerID(); err != nil {
			s.Log.Error("allocate producer id", "err", err)
			resp.ErrorCode = kerr.KafkaStorageError.Code
			return resp
		}
	}
	resp.ErrorCode = kerr.ConcurrentTransactions.Code // raced thrice: let the client retry
	return resp
}
