package data

import (
	"encoding/binary"
	"errors"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// Store is where the data plane keeps what must survive it: the catalog (topics, dynamic
// configs, producer ids) and the partition logs (record batches and each partition's state).
// The embedded default is Pebble (NewPebbleStore, the layout in the package doc); cluster mode
// keeps both in PostgreSQL, where every node sees the catalog and each partition's leader writes
// its log under its lease epoch.
type Store interface {
	Catalog
	LogStore
}

// TopicRecord is one topic of the catalog.
type TopicRecord struct {
	ID         [16]byte
	Name       string
	Partitions int32
	Configs    map[string]string // overrides
}

// ErrTopicExists means a topic of the name exists already (created meanwhile, possibly by
// another node).
var ErrTopicExists = errors.New("data: topic exists")

// Catalog is the durable registry of topics and dynamic configs.
type Catalog interface {
	// Topics lists every topic.
	Topics() ([]TopicRecord, error)
	// CreateTopic adds rec; ErrTopicExists when its name is taken.
	CreateTopic(rec TopicRecord) error
	// UpdateTopic replaces rec's partition count and configs (op: CreatePartitions or Configs).
	UpdateTopic(rec TopicRecord, op diskguard.Write) error
	// DeleteTopic removes rec with every batch and state key of its partitions.
	DeleteTopic(rec TopicRecord) error
	// BrokerConfigs returns the dynamic configs of BROKER resource res ("" = the cluster
	// default), nil when it has none.
	BrokerConfigs(res string) (map[string]string, error)
	// SetBrokerConfigs replaces them (empty: removes them).
	SetBrokerConfigs(res string, m map[string]string) error
	// GroupConfigs returns every group's dynamic configs.
	GroupConfigs() (map[string]map[string]string, error)
	// SetGroupConfigs replaces group's (empty: removes them).
	SetGroupConfigs(group string, m map[string]string) error
	// ReserveProducerIDs reserves n consecutive producer ids and returns the first; ids never
	// repeat, across restarts and (cluster mode) nodes.
	ReserveProducerIDs(n int64) (int64, error)
}

// PartitionID names one partition.
type PartitionID struct {
	Topic [16]byte
	Index int32
}

// StoredBatch is one record batch as the store keeps it: its bytes (base offset and partition
// leader epoch set by the leader) and what the store indexes of it.
type StoredBatch struct {
	Base, Last   int64
	MaxTimestamp int64
	Data         []byte
	// Stamp: Data is a batch as its producer sent it, which the store copies with Base and
	// the write's leader epoch written in (both outside the CRC) and, when LogAppendTime is
	// positive, stamped with that LogAppendTime (Data itself is not changed).
	Stamp         bool
	LogAppendTime int64
}

// Stored returns the bytes the store keeps for sb written under epoch: Data itself, or a
// stamped copy when Stamp is set.
func (sb *StoredBatch) Stored(epoch int32) []byte {
	if !sb.Stamp {
		return sb.Data
	}
	out := append([]byte(nil), sb.Data...)
	sb.stamped(out, epoch)
	return out
}

// stamped writes sb's base offset, epoch and LogAppendTime into dst, a copy of sb.Data.
func (sb *StoredBatch) stamped(dst []byte, epoch int32) {
	binary.BigEndian.PutUint64(dst[offBaseOffset:], uint64(sb.Base))
	binary.BigEndian.PutUint32(dst[offLeaderEpoch:], uint32(epoch))
	if sb.LogAppendTime > 0 {
		setLogAppendTime(dst, sb.LogAppendTime)
	}
}

// The kinds of a partition's state keys (values in the package doc): single-valued kinds use
// an empty key.
const (
	stateLogStart = kindLogStart          // log start offset
	stateProducer = kindProducerBatch     // producer id (8) base (8) → an idempotent producer's batch
	stateSegment  = kindSegment           // base (8) → a sealed segment
	stateCleaner  = kindCleanerCheckpoint // the cleaner's checkpoint
	stateOpenTxn  = kindOpenTxn           // producer id (8) → an open transaction
	stateAborted  = kindAbortedTxn        // marker offset (8) producer id (8) → an aborted transaction
	stateMarker   = kindProducerEpoch     // producer id (8) → the producer's last marker
)

// StateOp sets (Value non-nil) or deletes one state key of a partition.
type StateOp struct {
	Kind  byte
	Key   []byte
	Value []byte
}

// LogWrite is one atomic change of one partition's log: an append (a produce, a transaction
// marker), a move of its log start (retention, DeleteRecords) or a step of the log cleaner.
type LogWrite struct {
	Part PartitionID
	// Epoch is the leader epoch the write is made under: a store shared by several nodes
	// refuses it (ErrFenced) once another leader holds the partition.
	Epoch int32
	// Op is what the write is, for the disk guard and the store's refusal policy.
	Op diskguard.Write
	// NoSync: acks=0, durability is not waited for (an embedded store need not fsync).
	NoSync bool
	// Append are new batches past every stored one, in offset order.
	Append []StoredBatch
	// Replace are stored batches rewritten in place (the log cleaner; same base offsets).
	Replace []StoredBatch
	// Drop are the base offsets of stored batches deleted (the log cleaner).
	Drop []int64
	// TruncateBelow, when positive, deletes every batch based below it (the log start moved).
	TruncateBelow int64
	// State are the state keys set or deleted.
	State []StateOp
	// StateBelow deletes, per entry, every state key of Kind below Key.
	StateBelow []StateOp

	appendBuf [1]StoredBatch
	stateBuf  [4]StateOp
}

// addBatch appends b to w.Append (without an allocation for the first).
func (w *LogWrite) addBatch(b StoredBatch) {
	if w.Append == nil {
		w.Append = w.appendBuf[:0]
	}
	w.Append = append(w.Append, b)
}

// set adds a state key write (value nil: delete).
func (w *LogWrite) set(kind byte, key, value []byte) {
	if w.State == nil {
		w.State = w.stateBuf[:0]
	}
	w.State = append(w.State, StateOp{Kind: kind, Key: key, Value: value})
}

// ErrFenced means another node leads the partition now (a newer leader epoch): the write did
// not happen and this node no longer leads the partition.
var ErrFenced = errors.New("data: the partition is led by a newer leader epoch")

// LogStore holds the partition logs. Only a partition's leader writes it.
type LogStore interface {
	// Write makes w durable. It returns once w is ordered after every earlier write of its
	// partition; wait then returns nil once w is durable (at once for NoSync on an embedded
	// store), or why it failed: a refusal of the disk guard, ErrFenced, or an error after which
	// the outcome is unknown (the partition must be reloaded before it takes writes again).
	Write(w *LogWrite) (wait func() error)
	// Read calls fn with every stored batch of part that holds offsets at or after from and is
	// based below to, in offset order, until fn returns false. data is valid during the call.
	Read(part PartitionID, from, to int64, fn func(data []byte) bool) error
	// Bounds returns the base offset of part's first stored batch and one past the last offset
	// of its last; ok is false when it has none.
	Bounds(part PartitionID) (first, end int64, ok bool, err error)
	// Stats returns, of part's batches based in [from, to), their stored bytes, the maximum
	// timestamp of the first (-1: none) and the largest maximum timestamp (-1: none).
	Stats(part PartitionID, from, to int64) (bytes, firstMaxTs, largestMaxTs int64, err error)
	// State calls fn with every state key of kind of part, in key order (the key within the
	// partition and kind, and its value, valid during the call).
	State(part PartitionID, kind byte, fn func(key, value []byte) error) error
	// Lead tells the store that this node leads part from now on, whose log ends at end (a
	// store that keeps the log's tail in memory starts it there); Unlead that it stopped.
	Lead(part PartitionID, end int64)
	Unlead(part PartitionID)
}

// writeDone is the wait of a write that is already durable.
func writeDone() error { return nil }
