package txn

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// InitResult is InitProducerId's outcome. NeedProducerID asks the caller to allocate a producer
// id (the data plane's allocator; the core does no I/O) and run the operation again with it.
type InitResult struct {
	Resp           *kmsg.InitProducerIDResponse
	NeedProducerID bool
}

// isEpochExhausted is Kafka's TransactionMetadata.isEpochExhausted: an epoch of Short.MAX-1 or
// more is never handed out again, so the coordinator can always fence.
func isEpochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// InitProducerID handles InitProducerId v0–v5 for a transactional id (Kafka's
// TransactionCoordinator.handleInitProducerId and prepareInitProducerIdTransit); freshPID is a
// newly allocated producer id, or -1 when the caller has none yet (the result then may ask for
// one). The adapter answers a null transactional id itself.
//
//   - "" → INVALID_REQUEST; a timeout outside (0, transaction.max.timeout.ms] →
//     INVALID_TRANSACTION_TIMEOUT; exactly one of ProducerId/ProducerEpoch set (v3+) →
//     INVALID_REQUEST.
//   - A new id gets a producer id at epoch 0.
//   - KIP-360 (v3+ with a producer id and epoch): the producer id must be the current one, or
//     the previous one with an exhausted epoch, else PRODUCER_FENCED; the expected epoch must be
//     the current one (bump) or the last one (a retry: the current epoch is returned), else
//     PRODUCER_FENCED.
//   - PrepareCommit / PrepareAbort → CONCURRENT_TRANSACTIONS (retriable).
//   - Empty / CompleteCommit / CompleteAbort → epoch + 1 (an exhausted epoch rotates to a new
//     producer id at epoch 0).
//   - Ongoing → the producer is fenced: the epoch is bumped (PrepareEpochFence) and the open
//     transaction aborted at that epoch (PrepareAbort); the answer is CONCURRENT_TRANSACTIONS, so
//     the client retries and the retry bumps the epoch again (epoch + 2 in all).
//
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v4.
func InitProducerID(req *kmsg.InitProducerIDRequest, freshPID int64) func(st *ShardState, c *coordinator.Call[InitResult]) {
	return func(st *ShardState, c *coordinator.Call[InitResult]) {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID, resp.ProducerEpoch = NoProducerID, NoProducerEpoch
		fail := func(err *kerr.Error) {
			if err == kerr.ProducerFenced && req.Version < 4 {
				err = kerr.InvalidProducerEpoch
			}
			resp.ErrorCode = err.Code
			c.Reply(st, InitResult{Resp: resp})
		}
		id := *req.TransactionalID
		expectPID, expectEpoch := NoProducerID, NoProducerEpoch
		if req.Version >= 3 {
			expectPID, expectEpoch = req.ProducerID, req.ProducerEpoch
		}
		switch {
		case id == "":
			fail(kerr.InvalidRequest)
			return
		case req.TransactionTimeoutMillis <= 0 || int64(req.TransactionTimeoutMillis) > st.Cfg.MaxTimeout.Milliseconds():
			fail(kerr.InvalidTransactionTimeout)
			return
		case (expectPID == NoProducerID) != (expectEpoch == NoProducerEpoch):
			fail(kerr.InvalidRequest)
			return
		}
		expected := expectPID != NoProducerID
		m := st.Txns[id]
		if m == nil {
			if freshPID < 0 {
				c.Reply(st, InitResult{NeedProducerID: true})
				return
			}
			m = &Metadata{ID: id, ProducerID: freshPID, PreviousProducerID: NoProducerID, NextProducerID: NoProducerID,
				ProducerEpoch: NoProducerEpoch, LastProducerEpoch: NoProducerEpoch, TimeoutMs: req.TransactionTimeoutMillis,
				State: Empty, StartMs: -1, LastUpdateMs: st.Now.UnixMilli()}
		} else {
			m = m.clone()
		}
		if expected && !(m.ProducerEpoch == NoProducerEpoch || expectPID == m.ProducerID ||
			(expectPID == m.PreviousProducerID && isEpochExhausted(expectEpoch))) {
			fail(kerr.ProducerFenced)
			return
		}
		switch m.State {
		case PrepareCommit, PrepareAbort:
			fail(kerr.ConcurrentTransactions)
			return
		case Ongoing:
			// Fence the producer and abort its transaction at the bumped epoch; the client
			// retries and gets the epoch after the abort completes.
			m.ProducerEpoch++
			m.LastProducerEpoch = NoProducerEpoch
			m.State = PrepareAbort
			m.LastUpdateMs = st.Now.UnixMilli()
			st.transit(m)
			st.Metrics.Fenced++
			st.Log.Info("fencing the producer of an ongoing transaction", "transactional_id", id,
				"producer_id", m.ProducerID, "epoch", m.ProducerEpoch)
			fail(kerr.ConcurrentTransactions)
			return
		}
		// Empty, CompleteCommit, CompleteAbort.
		if isEpochExhausted(m.ProducerEpoch) && (!expected || expectEpoch == m.ProducerEpoch) {
			if freshPID < 0 {
				c.Reply(st, InitResult{NeedProducerID: true})
				return
			}
			last := NoProducerEpoch
			if expected {
				last = m.ProducerEpoch
			}
			m.PreviousProducerID, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch = m.ProducerID, freshPID, 0, last
		} else {
			switch {
			case !expected:
				m.ProducerEpoch, m.LastProducerEpoch = m.ProducerEpoch+1, NoProducerEpoch
			case m.ProducerEpoch == NoProducerEpoch || expectEpoch == m.ProducerEpoch:
				m.ProducerEpoch, m.LastProducerEpoch = m.ProducerEpoch+1, m.ProducerEpoch
			case expectEpoch == m.LastProducerEpoch:
				// A retry of a bump whose answer was lost: the current epoch, unchanged.
			default:
				fail(kerr.ProducerFenced)
				return
			}
		}
		m.NextProducerID = NoProducerID
		m.TimeoutMs, m.State, m.Partitions, m.StartMs = req.TransactionTimeoutMillis, Empty, nil, -1
		m.LastUpdateMs = st.Now.UnixMilli()
		st.transit(m)
		resp.ProducerID, resp.ProducerEpoch = m.ProducerID, m.ProducerEpoch
		c.Reply(st, InitResult{Resp: resp})
	}
}
