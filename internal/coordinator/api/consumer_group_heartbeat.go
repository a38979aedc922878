package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ConsumerGroupHeartbeat serves ConsumerGroupHeartbeat v0–v1 (KIP-848,
// coordinator.ConsumerGroupHeartbeat).
func (s *Service) ConsumerGroupHeartbeat(ctx context.Context, meta coordinator.Meta, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp, err := do(ctx, s, req.Group, meta, coordinator.ConsumerGroupHeartbeat(req))
	if err != nil {
		return coordinator.ConsumerGroupHeartbeatError(req, err)
	}
	return resp
}
