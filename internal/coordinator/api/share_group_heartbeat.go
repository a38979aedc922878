package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ShareGroupHeartbeat serves ShareGroupHeartbeat v1 (KIP-932, coordinator.ShareGroupHeartbeat).
func (s *Service) ShareGroupHeartbeat(ctx context.Context, meta coordinator.Meta, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	resp, err := do(ctx, s, req.GroupID, meta, coordinator.ShareGroupHeartbeat(req))
	if err != nil {
		return coordinator.ShareGroupHeartbeatError(req, err)
	}
	return resp
}
