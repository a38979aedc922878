package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// Heartbeat serves the classic Heartbeat v0–v4 (coordinator.Heartbeat).
func (s *Service) Heartbeat(ctx context.Context, meta coordinator.Meta, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	err := s.refuseFrozen(req.Group)
	var resp *kmsg.HeartbeatResponse
	if err == nil {
		resp, err = do(ctx, s, req.Group, meta, coordinator.Heartbeat(req))
		s.noteRefused(req.Group, err)
	}
	if err != nil {
		out := req.ResponseKind().(*kmsg.HeartbeatResponse)
		out.ErrorCode = coordinator.ErrorCode(err)
		return out
	}
	return resp
}
