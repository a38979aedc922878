// Package txn is the transaction coordinator's pure core (Kafka's TransactionCoordinator and
// TransactionStateManager, KIP-98): one shard's transactional ids and their state machine,
// driven by the same generic engine as the group coordinator (engine.Runtime[*State]). Data in,
// {records, response} out: the state changes only by replaying records (TxnMetadataKey /
// TxnMetadataValue, Kafka's __transaction_state layout), time arrives with SetNow, timers are
// data, and nothing here does I/O. Writing the transaction markers to data partitions and to
// group coordinator shards is the adapters' job (internal/coordinator/txnapi): the core says
// which transactions await markers (Prepared) and records their completion (CompleteTxn).
package txn

import (
	"log/slog"
	"sort"
	"time"

	"github.com/muster-io/muster/internal/coordinator"
)

// State is one of Kafka's transaction states (TransactionState).
type State int8

// The transaction states with Kafka's ids (the TransactionStatus of the log value).
// PrepareEpochFence is transient: the InitProducerId or timeout that fences a producer moves
// straight on to PrepareAbort within one operation, so it is never stored.
const (
	Empty             State = 0
	Ongoing           State = 1
	PrepareCommit     State = 2
	PrepareAbort      State = 3
	CompleteCommit    State = 4
	CompleteAbort     State = 5
	Dead              State = 6
	PrepareEpochFence State = 7
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// ParseState reads a state name ("Ongoing"); ok is false for an unknown name.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}

// NoProducerID and NoProducerEpoch are Kafka's RecordBatch.NO_PRODUCER_ID / NO_PRODUCER_EPOCH.
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// TopicPartition is one partition of a transaction (a data partition, or
// __consumer_offsets-N for the group coordinator shard N of AddOffsetsToTxn).
type TopicPartition struct {
	Topic     string
	Partition int32
}

// OffsetsTopic is the partition name AddOffsetsToTxn adds for a group: its group coordinator
// shard, as Kafka adds __consumer_offsets-partitionFor(group).
const OffsetsTopic = "__consumer_offsets"

// Metadata is one transactional id's state (Kafka's TransactionMetadata). Every field is
// durable: it is what the id's record says.
type Metadata struct {
	ID                 string
	ProducerID         int64
	PreviousProducerID int64
	NextProducerID     int64
	ProducerEpoch      int16
	// LastProducerEpoch lets a KIP-360 InitProducerId retry find the epoch it already bumped;
	// -1 after a fence, so a fenced producer cannot recover. Kafka does not store it (it is -1
	// after a coordinator move); muster keeps it in a tagged field of the value.
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        []TopicPartition // sorted
	StartMs           int64            // when the first partition was added; -1: none
	LastUpdateMs      int64
	// ClientTransactionVersion is the transaction version the client used (0 or 1 here: TV2 is
	// not served).
	ClientTransactionVersion int16
}

// HasPartition reports whether tp is in the transaction.
func (m *Metadata) HasPartition(tp TopicPartition) bool {
	i := sort.Search(len(m.Partitions), func(i int) bool { return !lessTP(m.Partitions[i], tp) })
	return i < len(m.Partitions) && m.Partitions[i] == tp
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

func (m *Metadata) clone() *Metadata {
	c := *m
	c.Partitions = append([]TopicPartition(nil), m.Partitions...)
	return &c
}

// Config is the transaction coordinator's typed configuration.
type Config struct {
	Shards                  int32         // transaction.state.log.num.partitions
	GroupShards             int32         // offsets.topic.num.partitions (AddOffsetsToTxn's partition)
	MaxTimeout              time.Duration // transaction.max.timeout.ms
	IDExpiration            time.Duration // transactional.id.expiration.ms
	AbortTimedOutInterval   time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	RemoveExpiredIDInterval time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms
}

// ConfigFrom reads the broker keys.
func ConfigFrom(v coordinator.ConfigValues) *Config {
	return &Config{
		Shards:                  int32(v.Int("transaction.state.log.num.partitions")),
		GroupShards:             int32(v.Int("offsets.topic.num.partitions")),
		MaxTimeout:              v.Ms("transaction.max.timeout.ms"),
		IDExpiration:            v.Ms("transactional.id.expiration.ms"),
		AbortTimedOutInterval:   v.Ms("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
		RemoveExpiredIDInterval: v.Ms("transaction.remove.expired.transaction.cleanup.interval.ms"),
	}
}

// Metrics are a shard's transaction counters (soft state), summed by the metrics collector.
type Metrics struct {
	Started   int64 // transactions that began (first partition added)
	Committed int64 // transactions completed with COMMIT markers
	Aborted   int64 // transactions completed with ABORT markers (timed-out ones included)
	TimedOut  int64 // transactions aborted by transaction.timeout.ms
	Fenced    int64 // ongoing transactions aborted by a new producer's InitProducerId
	Expired   int64 // transactional ids removed after transactional.id.expiration.ms
}

// ShardState is one transaction coordinator shard's deterministic state machine (Kafka's
// TransactionStateManager for one __transaction_state partition). It is owned by one goroutine
// (the engine's shard loop or a test driver).
type ShardState struct {
	Shard   int32
	Cfg     *Config
	Now     time.Time
	Log     *slog.Logger
	Txns    map[string]*Metadata
	Metrics *Metrics
	Loading bool
	// MarkersDue is the driver's signal that transactions of this shard await their markers:
	// the core adds it to the replies of every batch that writes a Prepare* record (and of the
	// first timer after a load that found some), so the driver's marker writer runs once that
	// record is durable.
	MarkersDue coordinator.Pending

	timers timers
	out    coordinator.Effects
}

// NewShardState builds an empty shard.
func NewShardState(shard int32, cfg *Config, log *slog.Logger, markersDue coordinator.Pending) *ShardState {
	if log == nil {
		log = slog.Default()
	}
	return &ShardState{Shard: shard, Cfg: cfg, Log: log.With("txn_shard", shard), Txns: map[string]*Metadata{},
		Metrics: &Metrics{}, MarkersDue: markersDue, timers: timers{}}
}

// SetNow implements engine.Shard.
func (st *ShardState) SetNow(now time.Time) { st.Now = now }

// AddReply implements coordinator.Replies.
func (st *ShardState) AddReply(p coordinator.Pending) { st.out.Replies = append(st.out.Replies, p) }

// TakeEffects implements engine.Shard.
func (st *ShardState) TakeEffects() coordinator.Effects {
	e := st.out
	st.out = coordinator.Effects{}
	return e
}

// NextDeadline implements engine.Shard.
func (st *ShardState) NextDeadline() (time.Time, bool) { return st.timers.next() }

// FireTimers implements engine.Shard: every timer due at now runs, earliest first.
func (st *ShardState) FireTimers(now time.Time) {
	st.Now = now
	for {
		fn := st.timers.popDue(now)
		if fn == nil {
			return
		}
		fn(st)
	}
}

// Replay implements engine.Shard.
func (st *ShardState) Replay(r coordinator.Record) error {
	st.Loading = true
	return st.replay(r)
}

// ReplayBorrowed implements engine.Shard: the decoder copies what it keeps.
func (st *ShardState) ReplayBorrowed(r coordinator.Record) error { return st.Replay(r) }

// OnLoaded implements engine.Shard: the periodic timeout and expiration sweeps are armed, and
// transactions found in Prepare* get their markers (Kafka's loadTransactionsForTxnTopicPartition
// hands them to the marker channel), at once.
func (st *ShardState) OnLoaded(now time.Time) {
	st.Now = now
	st.Loading = false
	st.scheduleTimeoutSweep()
	st.scheduleExpirySweep()
	for _, m := range st.Txns {
		if m.State == PrepareCommit || m.State == PrepareAbort {
			st.timers.schedule("recover-prepared", now, func(st *ShardState) { st.markersDue() })
			break
		}
	}
}

// write replays rec at once and queues it in the Effects.
func (st *ShardState) write(rec coordinator.Record) {
	if err := st.replay(rec); err != nil {
		st.Log.Error("txn: handler produced a record that does not replay", "err", err)
		return
	}
	st.out.Records = append(st.out.Records, rec)
}

// transit writes m's new state (Kafka's appendTransactionToLog + completeTransitionTo).
func (st *ShardState) transit(m *Metadata) {
	st.write(coordinator.Record{Key: txnKey(m.ID), Value: txnValue(m)})
	if m.State == PrepareCommit || m.State == PrepareAbort {
		st.markersDue()
	}
}

// markersDue asks the driver to write the markers of this shard's prepared transactions once
// the batch is durable.
func (st *ShardState) markersDue() {
	if st.MarkersDue != nil {
		st.out.Replies = append(st.out.Replies, st.MarkersDue)
	}
}

// sortedIDs lists the shard's transactional ids, sorted.
func (st *ShardState) sortedIDs() []string {
	ids := make([]string, 0, len(st.Txns))
	for id := range st.Txns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ShardFor is Kafka's transactional id → __transaction_state partition rule
// (TransactionStateManager.partitionFor): abs(Java String.hashCode) mod N.
func ShardFor(txnID string, shards int32) int32 { return coordinator.ShardFor(txnID, shards) }
