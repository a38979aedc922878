package coordinator

import (
	"context"
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Service is the coordinator as the wire sees it: it routes each group request to the shard that
// owns the group (splitting multi-group requests), and turns shard errors into Kafka responses.
type Service struct {
	RT  *Runtime
	Cfg *Config
	Log *slog.Logger
	// Extra holds optional collaborators of other group types (e.g. the KIP-1331 plugin).
	Extra map[string]any
}

// HandlerFunc serves one API key.
type HandlerFunc func(s *Service, ctx context.Context, meta Meta, req kmsg.Request) kmsg.Response

var handlers = map[int16]HandlerFunc{}

// RegisterHandler installs the coordinator handler of an API key (from an init function in the
// file that implements it).
func RegisterHandler(key int16, fn HandlerFunc) {
	if _, dup := handlers[key]; dup {
		panic("coordinator: handler registered twice for key " + kmsg.NameForKey(key))
	}
	handlers[key] = fn
}

// Handles reports whether the coordinator serves key.
func Handles(key int16) bool { _, ok := handlers[key]; return ok }

// Handle serves a coordinator request. It never returns nil for a handled key.
func (s *Service) Handle(ctx context.Context, meta Meta, req kmsg.Request) kmsg.Response {
	fn, ok := handlers[req.Key()]
	if !ok {
		return nil
	}
	return fn(s, ctx, meta, req)
}

// do runs op on group's shard; it returns the reply, or the error of a failed shard call
// (normalized as Kafka's CoordinatorOperationExceptionHelper does).
func (s *Service) do(ctx context.Context, group string, meta Meta, op func(st *State, c *Call)) (any, error) {
	resp, err := s.RT.Do(ctx, group, meta, op)
	return resp, normalizeErr(err)
}

// Do is the exported form of do for handlers in other packages.
func (s *Service) Do(ctx context.Context, group string, meta Meta, op func(st *State, c *Call)) (any, error) {
	return s.do(ctx, group, meta, op)
}

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

// byShard groups ids by shard, keeping first-seen order of shards.
func (s *Service) byShard(ids []string) (order []int32, m map[int32][]string) {
	m = map[int32][]string{}
	for _, id := range ids {
		sh := ShardFor(id, s.RT.Shards())
		if _, ok := m[sh]; !ok {
			order = append(order, sh)
		}
		m[sh] = append(m[sh], id)
	}
	return order, m
}

func init() {
	RegisterHandler(11, func(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.JoinGroupRequest)
		resp, err := s.do(ctx, req.Group, meta, JoinGroup(req))
		if err != nil {
			return joinError(&Call{Meta: meta}, req, err, req.MemberID)
		}
		return resp.(kmsg.Response)
	})
	RegisterHandler(14, func(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.SyncGroupRequest)
		resp, err := s.do(ctx, req.Group, meta, SyncGroup(req))
		if err != nil {
			return syncError(&Call{Meta: meta}, err)
		}
		return resp.(kmsg.Response)
	})
	RegisterHandler(12, func(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.HeartbeatRequest)
		resp, err := s.do(ctx, req.Group, meta, Heartbeat(req))
		if err != nil {
			out := req.ResponseKind().(*kmsg.HeartbeatResponse)
			out.ErrorCode = ErrorCode(err)
			return out
		}
		return resp.(kmsg.Response)
	})
	RegisterHandler(13, func(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.LeaveGroupRequest)
		resp, err := s.do(ctx, req.Group, meta, LeaveGroup(req))
		if err != nil {
			out := req.ResponseKind().(*kmsg.LeaveGroupResponse)
			out.ErrorCode = ErrorCode(err)
			return out
		}
		return resp.(kmsg.Response)
	})
	RegisterHandler(10, findCoordinator)
}

// findCoordinator answers FindCoordinator v0–v6 for group keys (key type 0); single node: every
// shard is this broker's. Transaction and share keys get COORDINATOR_NOT_AVAILABLE.
func findCoordinator(s *Service, _ context.Context, _ Meta, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	host, port := s.Cfg.AdvertisedHost, s.Cfg.AdvertisedPort
	answer := func(key string) (int16, *string) {
		if req.CoordinatorType != 0 {
			msg := "muster coordinates only groups (key type 0)"
			return kerr.CoordinatorNotAvailable.Code, &msg
		}
		if !s.RT.Ready() && s.RT.ShardStatus()[ShardFor(key, s.RT.Shards())] != "active" {
			return kerr.CoordinatorLoadInProgress.Code, nil
		}
		return 0, nil
	}
	if req.Version >= 4 {
		for _, k := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key = k
			c.NodeID, c.Host, c.Port = s.Cfg.NodeID, host, port
			c.ErrorCode, c.ErrorMessage = answer(k)
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	resp.NodeID, resp.Host, resp.Port = s.Cfg.NodeID, host, port
	resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorKey)
	return resp
}
