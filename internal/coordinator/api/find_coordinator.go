package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// FindCoordinator serves FindCoordinator v0–v6 for group keys (key type 0) and transactional
// ids (key type 1, answered by the transaction coordinator's Locate): on a single node every
// shard is this broker's; a shard still loading answers COORDINATOR_LOAD_IN_PROGRESS. Share
// keys get COORDINATOR_NOT_AVAILABLE. v4+ batches keys
// (CoordinatorKeys), older versions carry one key in top-level fields.
func (s *Service) FindCoordinator(_ context.Context, _ coordinator.Meta, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(key string) (int16, *string) {
		if req.CoordinatorType == 1 && s.Transactions != nil {
			if key == "" {
				return kerr.InvalidRequest.Code, nil
			}
			return s.Transactions.Locate(key), nil
		}
		if req.CoordinatorType != 0 {
			msg := "muster coordinates groups (key type 0) and transactions (key type 1)"
			return kerr.CoordinatorNotAvailable.Code, &msg
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
			c.NodeID, c.Host, c.Port = s.Self.NodeID, s.Self.Host, s.Self.Port
			c.ErrorCode, c.ErrorMessage = answer(k)
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	resp.NodeID, resp.Host, resp.Port = s.Self.NodeID, s.Self.Host, s.Self.Port
	resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorKey)
	return resp
}
