package txn

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
)

// AddPartitions adds partitions to a producer's transaction (Kafka's
// TransactionCoordinator.handleAddPartitionsToTransaction, for AddPartitionsToTxn v0–v3 and
// the non-verify transactions of v4+, and AddOffsetsToTxn with the group's
// __consumer_offsets partition): an unknown id or another producer id →
// INVALID_PRODUCER_ID_MAPPING; another epoch → PRODUCER_FENCED; PrepareCommit/PrepareAbort →
// CONCURRENT_TRANSACTIONS; Ongoing with every partition already added → NONE without a write;
// otherwise the transaction is Ongoing with the union of partitions, its start time set on the
// edge from Empty/Complete* (the transaction timeout counts from the first add). The adapter
// maps PRODUCER_FENCED by version.
func AddPartitions(id string, pid int64, epoch int16, parts []TopicPartition) func(st *ShardState, c *coordinator.Call[error]) {
	return func(st *ShardState, c *coordinator.Call[error]) {
		m, err := st.checkProducer(id, pid, epoch)
		if err == nil && (m.State == PrepareCommit || m.State == PrepareAbort) {
			err = kerr.ConcurrentTransactions
		}
		if err != nil {
			c.Reply(st, err)
			return
		}
		if m.State == Ongoing {
			all := true
			for _, tp := range parts {
				all = all && m.HasPartition(tp)
			}
			if all {
				c.Reply(st, nil)
				return
			}
		}
		n := m.clone()
		if m.State != Ongoing {
			n.StartMs = st.Now.UnixMilli()
			n.Partitions = nil
			st.Metrics.Started++
		}
		n.Partitions = unionPartitions(n.Partitions, parts)
		n.State, n.LastUpdateMs = Ongoing, st.Now.UnixMilli()
		st.transit(n)
		c.Reply(st, nil)
	}
}

// checkProducer finds id's metadata for a request of producer pid at epoch: an unknown id or
// another producer → INVALID_PRODUCER_ID_MAPPING, another epoch → PRODUCER_FENCED.
func (st *ShardState) checkProducer(id string, pid int64, epoch int16) (*Metadata, *kerr.Error) {
	if id == "" {
		return nil, kerr.InvalidRequest
	}
	m := st.Txns[id]
	switch {
	case m == nil || m.ProducerID != pid:
		return nil, kerr.InvalidProducerIDMapping
	case m.ProducerEpoch != epoch:
		return nil, kerr.ProducerFenced
	}
	return m, nil
}

func unionPartitions(have, add []TopicPartition) []TopicPartition {
	out := append([]TopicPartition(nil), have...)
	for _, tp := range add {
		i := sort.Search(len(out), func(i int) bool { return !lessTP(out[i], tp) })
		if i < len(out) && out[i] == tp {
			continue
		}
		out = append(out, TopicPartition{})
		copy(out[i+1:], out[i:])
		out[i] = tp
	}
	return out
}

// Verify answers whether partitions are in a producer's ongoing transaction (KIP-890 part 1:
// AddPartitionsToTxn v4+ VerifyOnly, Kafka's handleVerifyPartitionsInTransaction), one error per
// partition: an unknown id or another producer → INVALID_PRODUCER_ID_MAPPING, another epoch →
// PRODUCER_FENCED, PrepareCommit/PrepareAbort → CONCURRENT_TRANSACTIONS, a partition not in the
// transaction → TRANSACTION_ABORTABLE (the data plane maps it by Produce version).
func Verify(id string, pid int64, epoch int16, parts []TopicPartition) func(st *ShardState, c *coordinator.Call[[]*kerr.Error]) {
	return func(st *ShardState, c *coordinator.Call[[]*kerr.Error]) {
		out := make([]*kerr.Error, len(parts))
		m, err := st.checkProducer(id, pid, epoch)
		if err == nil && (m.State == PrepareCommit || m.State == PrepareAbort) {
			err = kerr.ConcurrentTransactions
		}
		for i, tp := range parts {
			switch {
			case err != nil:
				out[i] = err
			case !m.HasPartition(tp):
				out[i] = kerr.TransactionAbortable
			}
		}
		c.Reply(st, out)
	}
}

// EndTxn handles EndTxn v0–v4, transaction version 1 (Kafka's
// TransactionCoordinator.endTransactionWithTV1): another producer → INVALID_PRODUCER_ID_MAPPING,
// another epoch → PRODUCER_FENCED (the adapter maps it by version), then by state:
//
//	state           commit                     abort
//	Ongoing         PrepareCommit              PrepareAbort
//	CompleteCommit  NONE (a retry)             INVALID_TXN_STATE
//	CompleteAbort   INVALID_TXN_STATE          NONE (a retry)
//	PrepareCommit   CONCURRENT_TRANSACTIONS    INVALID_TXN_STATE
//	PrepareAbort    INVALID_TXN_STATE          CONCURRENT_TRANSACTIONS
//	Empty           INVALID_TXN_STATE          INVALID_TXN_STATE
//
// Prepared reports whether this call wrote Prepare* (the adapter then writes the markers).
func EndTxn(id string, pid int64, epoch int16, commit bool) func(st *ShardState, c *coordinator.Call[EndResult]) {
	return func(st *ShardState, c *coordinator.Call[EndResult]) {
		m, perr := st.checkProducer(id, pid, epoch)
		if perr != nil {
			c.Reply(st, EndResult{Err: perr})
			return
		}
		var err *kerr.Error
		switch {
		case m.State == Ongoing:
			n := m.clone()
			n.State, n.LastUpdateMs = PrepareAbort, st.Now.UnixMilli()
			if commit {
				n.State = PrepareCommit
			}
			st.transit(n)
			c.Reply(st, EndResult{Prepared: true})
			return
		case m.State == CompleteCommit && commit, m.State == CompleteAbort && !commit:
		case m.State == PrepareCommit && commit, m.State == PrepareAbort && !commit:
			err = kerr.ConcurrentTransactions
		default:
			err = kerr.InvalidTxnState
		}
		c.Reply(st, EndResult{Err: err})
	}
}

// EndResult is EndTxn's outcome.
type EndResult struct {
	Err      *kerr.Error
	Prepared bool
}

// Prepared is a transaction awaiting its markers (PrepareCommit or PrepareAbort): the driver
// writes a marker of its result into each partition at the producer id and epoch, then calls
// CompleteTxn.
type Prepared struct {
	ID         string
	ProducerID int64
	Epoch      int16
	Commit     bool
	Partitions []TopicPartition
}

// PreparedTxns lists the shard's transactions awaiting markers (one id, or all when id is
// ""), sorted by id.
func PreparedTxns(id string) func(st *ShardState, c *coordinator.Call[[]Prepared]) {
	return func(st *ShardState, c *coordinator.Call[[]Prepared]) {
		var out []Prepared
		add := func(m *Metadata) {
			if m != nil && (m.State == PrepareCommit || m.State == PrepareAbort) {
				out = append(out, Prepared{ID: m.ID, ProducerID: m.ProducerID, Epoch: m.ProducerEpoch,
					Commit: m.State == PrepareCommit, Partitions: append([]TopicPartition(nil), m.Partitions...)})
			}
		}
		if id != "" {
			add(st.Txns[id])
		} else {
			for _, tid := range st.sortedIDs() {
				add(st.Txns[tid])
			}
		}
		c.Reply(st, out)
	}
}

// CompleteTxn records that every marker of a prepared transaction is written (Kafka's
// prepareComplete after the marker channel): PrepareCommit → CompleteCommit, PrepareAbort →
// CompleteAbort, partitions cleared, the last epoch set to the current one. It does nothing
// (false) unless the transaction is still the prepared one (same producer id, epoch and
// result).
func CompleteTxn(p Prepared) func(st *ShardState, c *coordinator.Call[bool]) {
	return func(st *ShardState, c *coordinator.Call[bool]) {
		m := st.Txns[p.ID]
		want := PrepareAbort
		if p.Commit {
			want = PrepareCommit
		}
		if m == nil || m.State != want || m.ProducerID != p.ProducerID || m.ProducerEpoch != p.Epoch {
			c.Reply(st, false)
			return
		}
		n := m.clone()
		n.State = CompleteAbort
		st.Metrics.Aborted++
		if p.Commit {
			n.State = CompleteCommit
			st.Metrics.Aborted--
			st.Metrics.Committed++
		}
		n.Partitions, n.LastProducerEpoch, n.LastUpdateMs = nil, n.ProducerEpoch, st.Now.UnixMilli()
		st.transit(n)
		c.Reply(st, true)
	}
}
