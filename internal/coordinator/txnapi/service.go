// Package txnapi is the transaction coordinator's adapter layer (Kafka's TransactionCoordinator
// front end in KafkaApis and its TransactionMarkerChannelManager): it turns InitProducerId,
// AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers, DescribeTransactions and
// ListTransactions into operations on the shards of the transaction coordinator's engine, and
// writes transaction markers outside the shard loops: into data partitions through the data
// plane, and into group coordinator shards (the __consumer_offsets partitions of
// AddOffsetsToTxn) through the group coordinator. Handlers lists every API it serves, one file
// per API.
package txnapi

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// Runtime is the engine running transaction coordinator shards.
type Runtime = engine.Runtime[*txn.ShardState]

// Data is the data plane as the transaction coordinator uses it.
type Data interface {
	// AppendTxnMarker writes a COMMIT or ABORT marker into a data partition, durably.
	AppendTxnMarker(topic string, partition int32, pid int64, epoch int16, coordEpoch int32, commit bool) *kerr.Error
	// AllocProducerID hands out a new producer id (shared with idempotent producers).
	AllocProducerID() (int64, error)
	// Partitions is a topic's partition count; false for an unknown topic.
	Partitions(topic string) (int32, bool)
}

// Groups is the group coordinator as the transaction coordinator uses it.
type Groups interface {
	// CompleteTransaction applies a transaction marker to a group coordinator shard (the
	// __consumer_offsets partition AddOffsetsToTxn added).
	CompleteTransaction(ctx context.Context, shard int32, pid int64, epoch int16, commit bool) error
	// Shards is the group coordinator's shard count.
	Shards() int32
}

// Hooks observe the marker writer (metrics).
type Hooks struct {
	// OnMarkers is called after a prepared transaction's markers were written (err nil) or
	// failed, with how long they took.
	OnMarkers func(commit bool, partitions int, d time.Duration, err error)
}

// Service is the transaction coordinator as the wire sees it.
type Service struct {
	RT     *Runtime
	Cfg    *txn.Config
	Log    *slog.Logger
	Data   Data
	Groups Groups
	Hooks  Hooks

	mu       sync.Mutex
	inflight map[string]*completion // transactional id → the markers being written
	flagged  map[int32]bool         // shards with transactions awaiting markers
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	started  bool
}

// completion is one prepared transaction's markers being written; err is set before done
// closes.
type completion struct {
	p    txn.Prepared
	done chan struct{}
	err  error
}

// New builds the service; RT is set by the caller once the runtime exists (the runtime's shards
// need the service's MarkersDue signals first).
func New(cfg *txn.Config, log *slog.Logger, data Data, groups Groups) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{Cfg: cfg, Log: log, Data: data, Groups: groups, inflight: map[string]*completion{},
		flagged: map[int32]bool{}, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Handler serves one API key.
type Handler struct {
	Key   int16
	Serve func(ctx context.Context, meta coordinator.Meta, req kmsg.Request) kmsg.Response
}

// Handlers lists every API the transaction coordinator serves, read top to bottom.
// FindCoordinator for transactional ids is answered by the group coordinator's FindCoordinator
// through Locate.
func (s *Service) Handlers() []Handler {
	return []Handler{
		handler(kmsg.InitProducerID.Int16(), s.InitProducerID),
		handler(kmsg.AddPartitionsToTxn.Int16(), s.AddPartitionsToTxn),
		handler(kmsg.AddOffsetsToTxn.Int16(), s.AddOffsetsToTxn),
		handler(kmsg.EndTxn.Int16(), s.EndTxn),
		handler(kmsg.DescribeTransactions.Int16(), s.DescribeTransactions),
		handler(kmsg.ListTransactions.Int16(), s.ListTransactions),
	}
}

func handler[Req kmsg.Request, Resp kmsg.Response](key int16, fn func(context.Context, coordinator.Meta, Req) Resp) Handler {
	return Handler{Key: key, Serve: func(ctx context.Context, meta coordinator.Meta, req kmsg.Request) kmsg.Response {
		return fn(ctx, meta, req.(Req))
	}}
}

// shardFor is the shard owning a transactional id.
func (s *Service) shardFor(id string) int32 { return txn.ShardFor(id, s.RT.Shards()) }

// do runs op on the shard that owns id.
func do[T any](ctx context.Context, s *Service, id string, meta coordinator.Meta, op func(*txn.ShardState, *coordinator.Call[T])) (T, error) {
	return doShard(ctx, s, s.shardFor(id), meta, op)
}

func doShard[T any](ctx context.Context, s *Service, shard int32, meta coordinator.Meta, op func(*txn.ShardState, *coordinator.Call[T])) (T, error) {
	resp, err := engine.Do(ctx, s.RT, shard, meta, op)
	return resp, normalizeErr(err)
}

// normalizeErr maps engine and context errors to what a transactional client retries.
func normalizeErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return kerr.RequestTimedOut
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return kerr.UnknownServerError
}

// codeOf is err's Kafka error code.
func codeOf(err error) int16 { return coordinator.ErrorCode(err) }

// Locate answers FindCoordinator for a transactional id (key type 1): 0 when its shard serves,
// else COORDINATOR_LOAD_IN_PROGRESS while it loads.
func (s *Service) Locate(id string) int16 {
	if !s.RT.Ready() && !s.RT.Active(s.shardFor(id)) {
		return kerr.CoordinatorLoadInProgress.Code
	}
	return 0
}

// Ready reports whether every shard is loaded.
func (s *Service) Ready() bool { return s.RT != nil && s.RT.Ready() }

// fenced maps PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for versions below min (KafkaApis'
// rule for the clients that predate KIP-588).
func fenced(err error, version, min int16) error {
	if errors.Is(err, kerr.ProducerFenced) && version < min {
		return kerr.InvalidProducerEpoch
	}
	return err
}
