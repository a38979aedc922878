package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// FindCoordinator serves FindCoordinator v0–v6 for group keys (key type 0): on a single node
// every shard is this broker's; a shard still loading answers COORDINATOR_LOAD_IN_PROGRESS.
// Transaction keys (type 1) get COORDINATOR_NOT_AVAILABLE (no transaction coordinator yet).
// Share keys (type 2) are defined from v6 and need a share coordinator, and any other type is
// not defined at all: INVALID_REQUEST, as Kafka's KafkaApis.getCoordinator answers. v4+ batches
// keys (CoordinatorKeys), older versions carry one key in top-level fields. An error carries no
// node (Kafka's Node.noNode: id -1, no host, port -1). In cluster mode a group whose shard is
// served by another node is answered with that node (from the Directory), and one whose shard
// no node holds now COORDINATOR_NOT_AVAILABLE, so the client retries.
func (s *Service) FindCoordinator(_ context.Context, _ coordinator.Meta, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(key string) (Endpoint, int16, *string) {
		code, msg := s.findCode(req)
		if code != 0 {
			return Endpoint{NodeID: -1, Port: -1}, code, msg
		}
		shard := coordinator.ShardFor(key, s.RT.Shards())
		if s.Directory != nil && !s.RT.Owned(shard) {
			if e, ok := s.Directory.Coordinator(shard); ok {
				return e, 0, nil
			}
			msg := "no node holds the lease of the group's coordinator shard now"
			return Endpoint{NodeID: -1, Port: -1}, kerr.CoordinatorNotAvailable.Code, &msg
		}
		if !s.RT.Ready() && !s.RT.Active(shard) {
			return Endpoint{NodeID: -1, Port: -1}, kerr.CoordinatorLoadInProgress.Code, nil
		}
		return s.Self, 0, nil
	}
	if req.Version >= 4 {
		for _, k := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key = k
			var e Endpoint
			e, c.ErrorCode, c.ErrorMessage = answer(k)
			c.NodeID, c.Host, c.Port = e.NodeID, e.Host, e.Port
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	var e Endpoint
	e, resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorKey)
	resp.NodeID, resp.Host, resp.Port = e.NodeID, e.Host, e.Port
	return resp
}

// findCode is the error of a key type muster does not coordinate.
func (s *Service) findCode(req *kmsg.FindCoordinatorRequest) (int16, *string) {
	switch req.CoordinatorType {
	case 0:
	case 1:
		msg := "muster has no transaction coordinator yet"
		return kerr.CoordinatorNotAvailable.Code, &msg
	case 2:
		msg := "muster has no share coordinator"
		if req.Version < 6 {
			msg = "share coordinator keys need FindCoordinator v6"
		}
		return kerr.InvalidRequest.Code, &msg
	default:
		msg := "unknown coordinator type in FindCoordinator request"
		return kerr.InvalidRequest.Code, &msg
	}
	return 0, nil
}
