package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ConsumerGroupHeartbeat serves ConsumerGroupHeartbeat v0–v1 (KIP-848,
// coordinator.ConsumerGroupHeartbeat).
func (s *Service) ConsumerGroupHeartbeat(ctx context.Context, meta coordinator.Meta, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	var err error
	if req.MemberEpoch <= 0 { // joins and leaves always write
		err = s.refuseWrite()
	} else {
		err = s.refuseFrozen(req.Group)
	}
	var resp *kmsg.ConsumerGroupHeartbeatResponse
	if err == nil {
		resp, err = do(ctx, s, req.Group, meta, coordinator.ConsumerGroupHeartbeat(req))
		s.noteRefused(req.Group, err)
	}
	if err != nil {
		return coordinator.ConsumerGroupHeartbeatError(req, err)
	}
	return resp
}
