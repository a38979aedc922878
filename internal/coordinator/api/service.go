// Package api is the group coordinator's adapter layer (Kafka's GroupCoordinatorService and the
// coordinator half of KafkaApis): it turns each Kafka request into operations on the shards that
// own its groups (fanning multi-group requests out and assembling the answers in request
// order), calls the KIP-1331 plugin outside the shard loops, and maps shard failures to Kafka's
// error codes. Handlers lists every API it serves, one file per API.
package api

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/lograte"
	"github.com/muster-io/muster/internal/metadata"
)

// Runtime is the engine running group coordinator shards.
type Runtime = engine.Runtime[*coordinator.State]

// Topics is the data plane as the coordinator's adapters use it.
type Topics interface {
	// MetadataImage is the newest immutable topic snapshot.
	MetadataImage() *metadata.Image
	// CreateTopic creates a topic (streams internal topics); an existing topic is not an error.
	CreateTopic(name string, partitions int32, configs map[string]string) error
}

// Endpoint is where clients reach the coordinator (FindCoordinator's answer).
type Endpoint struct {
	NodeID int32
	Host   string
	Port   int32
}

// Directory tells where the shards this node does not serve are served (cluster mode).
type Directory interface {
	// Coordinator returns the node serving shard (its endpoint on its first listener; the
	// broker names the endpoint of the request's listener), false when no node holds it now.
	Coordinator(shard int32) (Endpoint, bool)
}

// Service is the group coordinator as the wire sees it.
type Service struct {
	RT     *Runtime
	Cfg    *coordinator.Config
	Log    *slog.Logger
	Topics Topics // nil: no topic checks (tests)
	Self   Endpoint
	// Directory is set in cluster mode: FindCoordinator names the owner of a shard served
	// elsewhere.
	Directory Directory
	// TxnDirectory is Directory for the transaction coordinator's shards (cluster mode).
	TxnDirectory Directory
	// TopologyDescriptions is the KIP-1331 side; nil when no plugin is configured.
	TopologyDescriptions *TopologyDescriptions
	// Txn verifies TxnOffsetCommit with the transaction coordinator; nil: not verified.
	Txn TxnVerifier
	// Transactions answers FindCoordinator for transactional ids (key type 1); nil: they get
	// COORDINATOR_NOT_AVAILABLE.
	Transactions TxnLocator
	// ShareLog is the data plane as share fetches read it (nil: share fetches answer
	// UNKNOWN_TOPIC_ID for every partition).
	ShareLog ShareLog

	shareOnce sync.Once
	shareSess *shareSessions

	// Writes tells whether the store takes writes now (the runtime's Options.Writes; nil:
	// always). See writes.go.
	Writes engine.WriteGate
	// Offsets are the shards' published committed offsets (the runtime's Options.Snapshot);
	// nil: OffsetFetch reads on the shards.
	Offsets *OffsetViews

	frozenMu sync.Mutex
	frozen   map[string]struct{} // groups whose writes a shard refused (writes.go)
	frozenN  atomic.Int32
	logOnce  sync.Once
	limited  *lograte.Limiter // repeated warnings (limitedLog)
}

// limitedLog is the Service's log with repeats of a line summarised once per 30 s.
func (s *Service) limitedLog() *lograte.Limiter {
	s.logOnce.Do(func() {
		log := s.Log
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		s.limited = lograte.New(log, 30*time.Second)
	})
	return s.limited
}

// TxnLocator is the transaction coordinator as FindCoordinator asks it: 0 when the shard of a
// transactional id serves, else an error code (COORDINATOR_LOAD_IN_PROGRESS).
type TxnLocator interface {
	Locate(txnID string) int16
}

// TxnShards is a TxnLocator that tells, in cluster mode, a transactional id's shard and whether
// this node serves it (otherwise TxnDirectory names the node that does).
type TxnShards interface {
	TxnShard(txnID string) (shard int32, here bool)
}

// Handler serves one API key.
type Handler struct {
	Key   int16
	Serve func(ctx context.Context, r Req, req kmsg.Request) kmsg.Response
}

// Handlers lists every API the group coordinator serves, read top to bottom. Each key is bound
// to its authorizing adapter (authz_*.go): it checks what KafkaApis checks, in Kafka's order
// and before any existence check, and passes only the authorized subset of the request on to
// the API's method (OffsetCommit, JoinGroup, ...).
func (s *Service) Handlers() []Handler {
	return []Handler{
		handler(kmsg.OffsetCommit.Int16(), s.authorizeOffsetCommit),
		handler(kmsg.OffsetFetch.Int16(), s.authorizeOffsetFetch),
		handler(kmsg.TxnOffsetCommit.Int16(), s.authorizeTxnOffsetCommit),
		handler(kmsg.FindCoordinator.Int16(), s.authorizeFindCoordinator),
		handler(kmsg.JoinGroup.Int16(), s.authorizeJoinGroup),
		handler(kmsg.Heartbeat.Int16(), s.authorizeHeartbeat),
		handler(kmsg.LeaveGroup.Int16(), s.authorizeLeaveGroup),
		handler(kmsg.SyncGroup.Int16(), s.authorizeSyncGroup),
		handler(kmsg.DescribeGroups.Int16(), s.authorizeDescribeGroups),
		handler(kmsg.ListGroups.Int16(), s.authorizeListGroups),
		handler(kmsg.DeleteGroups.Int16(), s.authorizeDeleteGroups),
		handler(kmsg.OffsetDelete.Int16(), s.authorizeOffsetDelete),
		handler(kmsg.ConsumerGroupHeartbeat.Int16(), s.authorizeConsumerGroupHeartbeat),
		handler(kmsg.ConsumerGroupDescribe.Int16(), s.authorizeConsumerGroupDescribe),
		handler(kmsg.StreamsGroupHeartbeat.Int16(), s.authorizeStreamsGroupHeartbeat),
		handler(kmsg.StreamsGroupDescribe.Int16(), s.authorizeStreamsGroupDescribe),
		handler(kmsg.StreamsGroupTopologyDescriptionUpdate.Int16(), s.authorizeStreamsGroupTopologyDescriptionUpdate),
		handler(kmsg.ShareGroupHeartbeat.Int16(), s.authorizeShareGroupHeartbeat),
		handler(kmsg.ShareGroupDescribe.Int16(), s.authorizeShareGroupDescribe),
		handler(kmsg.ShareFetch.Int16(), s.authorizeShareFetch),
		handler(kmsg.ShareAcknowledge.Int16(), s.authorizeShareAcknowledge),
		handler(kmsg.DescribeShareGroupOffsets.Int16(), s.authorizeDescribeShareGroupOffsets),
		handler(kmsg.AlterShareGroupOffsets.Int16(), s.authorizeAlterShareGroupOffsets),
		handler(kmsg.DeleteShareGroupOffsets.Int16(), s.authorizeDeleteShareGroupOffsets),
	}
}

// handler binds a typed API method to its key; the server decoded the body for that key, so the
// assertion holds by construction. A request without an authorizer or session is allowed
// everything as ANONYMOUS.
func handler[Q kmsg.Request, P kmsg.Response](key int16, fn func(context.Context, Req, Q) P) Handler {
	return Handler{Key: key, Serve: func(ctx context.Context, r Req, req kmsg.Request) kmsg.Response {
		return fn(ctx, r.normalized(key), req.(Q))
	}}
}

// do runs op on the shard that owns group.
func do[T any](ctx context.Context, s *Service, group string, meta coordinator.Meta, op func(*coordinator.State, *coordinator.Call[T])) (T, error) {
	return doShard(ctx, s, coordinator.ShardFor(group, s.RT.Shards()), meta, op)
}

// doShard runs op on shard; a failed call's error is normalized as Kafka's
// CoordinatorOperationExceptionHelper does.
func doShard[T any](ctx context.Context, s *Service, shard int32, meta coordinator.Meta, op func(*coordinator.State, *coordinator.Call[T])) (T, error) {
	resp, err := engine.Do(ctx, s.RT, shard, meta, op)
	return resp, normalizeErr(err)
}

// fanOut runs op on every shard in parallel and returns the answers in shard order; a failed
// shard has its error in its slot.
func fanOut[T any](ctx context.Context, s *Service, meta coordinator.Meta, op func(*coordinator.State, *coordinator.Call[T])) ([]T, []error) {
	n := s.RT.Shards()
	out := make([]T, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := int32(0); i < n; i++ {
		wg.Add(1)
		go func(i int32) {
			defer wg.Done()
			out[i], errs[i] = doShard(ctx, s, i, meta, op)
		}(i)
	}
	wg.Wait()
	return out, errs
}

// normalizeErr maps errors to what a coordinator client expects (Kafka's
// CoordinatorOperationExceptionHelper): a cancelled request timed out; storage and leadership
// errors become NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE; anything that is not a Kafka error
// is UNKNOWN_SERVER_ERROR.
func normalizeErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return kerr.RequestTimedOut
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.RequestTimedOut:
			return kerr.CoordinatorNotAvailable
		case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
			return kerr.NotCoordinator
		case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
			return kerr.UnknownServerError
		}
		return err
	}
	return kerr.UnknownServerError
}

// byShard groups ids by shard, keeping the first-seen order of shards.
func (s *Service) byShard(ids []string) (order []int32, m map[int32][]string) {
	m = map[int32][]string{}
	for _, id := range ids {
		sh := coordinator.ShardFor(id, s.RT.Shards())
		if _, ok := m[sh]; !ok {
			order = append(order, sh)
		}
		m[sh] = append(m[sh], id)
	}
	return order, m
}

// image is the newest topic snapshot (nil without a data plane: every topic is known).
func (s *Service) image() *metadata.Image {
	if s.Topics == nil {
		return nil
	}
	return s.Topics.MetadataImage()
}
