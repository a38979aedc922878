// Package store is the coordinator's durable store: the latest value per record key, per shard
// (Kafka's __consumer_offsets partitions). Pebble is the embedded default; the interfaces are
// shaped so a shared engine (etcd, PostgreSQL-compatible) can replace it: shard leases with a
// fencing epoch, one Append in flight per shard, loads in key order.
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
