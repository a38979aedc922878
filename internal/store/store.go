// Package store is the coordinator's durable store: the latest value per record key, per shard
// (Kafka's __consumer_offsets partitions). Pebble is the embedded default; the interfaces are
// shaped so a shared engine (etcd, PostgreSQL-compatible) can replace it: shard leases with a
// fencing epoch, one Append in flight per shard unless the shard keeps batches in order
// (OrderedAppender), loads in key order.
package store

import (
	"context"
	"errors"
)

// Record is one coordinator record: a key and a value, both in muster's record encoding
// (internal/coordinator/records). A nil Value is a tombstone.
type Record struct{ Key, Value []byte }

// ErrFenced means the shard is owned by a newer lease epoch: unload it and answer
// NOT_COORDINATOR.
var ErrFenced = errors.New("store: shard owned by a newer epoch")

// ClusterConfig is fixed when the store is created.
type ClusterConfig struct {
	// Shards is offsets.topic.num.partitions at creation; a different configured value refuses to
	// start.
	Shards int32
}

// BatchLimits bound one Append.
type BatchLimits struct {
	Records int
	Bytes   int
}

// Store is this node's view of the coordinator store.
type Store interface {
	Config() ClusterConfig
	// Acquire returns the lease on shard; single node: at once, with epoch = previous + 1.
	Acquire(ctx context.Context, shard int32) (Shard, error)
	Close() error
}

// Shard is one owned shard. One goroutine uses it; one Append at a time.
type Shard interface {
	ID() int32
	Epoch() int64
	// Lost is closed when the lease is lost.
	Lost() <-chan struct{}
	// Load streams the live records in key order (not write order).
	Load(ctx context.Context, fn func(Record) error) error
	// Append commits recs atomically and durably iff the lease epoch is still current. Keys must
	// be distinct. ErrFenced: unload. Other errors: the batch did not happen (or it is unknown
	// whether it did; records are idempotent upserts, so a retry is safe).
	Append(ctx context.Context, recs []Record) error
	Limits() BatchLimits
	Release(ctx context.Context) error
}

// BorrowingLoader is implemented by shards that can stream their records without copying them.
// LoadBorrowed is Load, except that a record's Key and Value are valid only until fn returns
// (the engine reuses them): fn copies whatever it keeps.
type BorrowingLoader interface {
	LoadBorrowed(ctx context.Context, fn func(Record) error) error
}

// OrderedAppender is the capability of a shard to have several Appends in flight: a batch begun
// later is never durable before a batch begun earlier. Pebble has it: one write-ahead log per
// DB, batches take their place in it (their sequence numbers) in the order they are begun, and
// a WAL sync makes durable everything written before it, so a later batch's sync covers the
// earlier ones. A store without the guarantee (PostgreSQL in cluster mode: separate
// transactions commit in any order) does not implement it and has one Append in flight per
// shard. The engine begins the batches of a shard in order on one goroutine, waits for them in
// the same order on another, and releases each batch's replies only after every batch before
// it is durable.
type OrderedAppender interface {
	// BeginAppend is Append in two steps. It places recs after every batch begun before it on
	// this shard and returns; wait blocks until they are durable (or failed) and returns what
	// Append would have. Every BeginAppend's wait must be called, in the order of the
	// BeginAppends. After a failed wait the engine treats every later batch as failed too, and
	// reloads the shard.
	BeginAppend(ctx context.Context, recs []Record) (wait func() error)
}
