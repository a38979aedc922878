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
// node (Kafka's Node.noNode: id -1, no host, port -1).
func (s *Service) FindCoordinator(_ context.Context, _ coordinator.Meta, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(key string) (int16, *string) {
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
		if !s.RT.Ready() && !s.RT.Active(coordinator.ShardFor(key, s.RT.Shards())) {
			return kerr.CoordinatorLoadInProgress.Code, nil
		}
		return 0, nil
	}
	if req.Version >= 4 {
		for _, k := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key = k
			c.ErrorCode, c.ErrorMessage = answer(k)
			c.NodeID, c.Host, c.Port = s.node(c.ErrorCode)
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorKey)
	resp.NodeID, resp.Host, resp.Port = s.node(resp.ErrorCode)
	return resp
}

// node is the coordinator's endpoint: this broker, or none when the answer is an error.
func (s *Service) node(code int16) (int32, string, int32) {
	if code != 0 {
		return -1, "", -1
	}
	return s.Self.NodeID, s.Self.Host, s.Self.Port
}
