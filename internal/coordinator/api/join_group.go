package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// JoinGroup serves JoinGroup v0–v9 (v0–v1 restored by KAFKA-19444 after KIP-896). The answer
// comes when the group's rebalance completes (coordinator.JoinGroup).
func (s *Service) JoinGroup(ctx context.Context, meta coordinator.Meta, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	if err := s.refuseWrite(); err != nil {
		return coordinator.JoinGroupError(req, err)
	}
	resp, err := do(ctx, s, req.Group, meta, coordinator.JoinGroup(req))
	if err != nil {
		return coordinator.JoinGroupError(req, err)
	}
	return resp
}
