package txn

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// Describe describes transactional ids of this shard for DescribeTransactions v0 (Kafka's
// handleDescribeTransactions), in the order asked: TRANSACTIONAL_ID_NOT_FOUND for an unknown id,
// INVALID_REQUEST for "".
func Describe(ids []string) func(st *ShardState, c *coordinator.Call[[]kmsg.DescribeTransactionsResponseTransactionState]) {
	return func(st *ShardState, c *coordinator.Call[[]kmsg.DescribeTransactionsResponseTransactionState]) {
		out := make([]kmsg.DescribeTransactionsResponseTransactionState, len(ids))
		for i, id := range ids {
			d := kmsg.NewDescribeTransactionsResponseTransactionState()
			d.TransactionalID = id
			m := st.Txns[id]
			switch {
			case id == "":
				d.ErrorCode = kerr.InvalidRequest.Code
			case m == nil:
				d.ErrorCode = kerr.TransactionalIDNotFound.Code
			default:
				d.State, d.TimeoutMillis, d.StartTimestamp = m.State.String(), m.TimeoutMs, m.StartMs
				d.ProducerID, d.ProducerEpoch = m.ProducerID, m.ProducerEpoch
				for _, tp := range m.Partitions {
					if n := len(d.Topics); n > 0 && d.Topics[n-1].Topic == tp.Topic {
						d.Topics[n-1].Partitions = append(d.Topics[n-1].Partitions, tp.Partition)
						continue
					}
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
					d.Topics = append(d.Topics, t)
				}
			}
			out[i] = d
		}
		c.Reply(st, out)
	}
}

// ListFilter is ListTransactions' filters (v0–v2): states by name (already known to be valid),
// producer ids, a minimum running time (v1, -1 = none) and a transactional id pattern (v2,
// nil = none).
type ListFilter struct {
	States      map[State]bool
	ProducerIDs map[int64]bool
	MinDuration int64 // ms; -1 = none
	Pattern     *regexp.Regexp
}

// List lists this shard's transactions matching f, sorted by id (Kafka's
// listTransactionStates).
func List(f ListFilter) func(st *ShardState, c *coordinator.Call[[]kmsg.ListTransactionsResponseTransactionState]) {
	return func(st *ShardState, c *coordinator.Call[[]kmsg.ListTransactionsResponseTransactionState]) {
		var out []kmsg.ListTransactionsResponseTransactionState
		now := st.Now.UnixMilli()
		for _, id := range st.sortedIDs() {
			m := st.Txns[id]
			switch {
			case len(f.States) > 0 && !f.States[m.State]:
				continue
			case len(f.ProducerIDs) > 0 && !f.ProducerIDs[m.ProducerID]:
				continue
			case f.MinDuration >= 0 && now-m.StartMs <= f.MinDuration:
				continue
			case f.Pattern != nil && !f.Pattern.MatchString(id):
				continue
			}
			s := kmsg.NewListTransactionsResponseTransactionState()
			s.TransactionalID, s.ProducerID, s.TransactionState = id, m.ProducerID, m.State.String()
			out = append(out, s)
		}
		c.Reply(st, out)
	}
}

// Stats reads the shard's counters and its transactions by state (metrics).
type Stats struct {
	Metrics Metrics
	States  map[State]int
}

// ReadStats reads the shard's Stats.
func ReadStats() func(st *ShardState, c *coordinator.Call[Stats]) {
	return func(st *ShardState, c *coordinator.Call[Stats]) {
		s := Stats{Metrics: *st.Metrics, States: map[State]int{}}
		for _, m := range st.Txns {
			s.States[m.State]++
		}
		c.Reply(st, s)
	}
}
