package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// SyncGroup serves SyncGroup v0–v5: a follower's answer waits for the leader's assignment to be
// durable (coordinator.SyncGroup).
func (s *Service) SyncGroup(ctx context.Context, meta coordinator.Meta, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	err := s.refuseFrozen(req.Group)
	var resp *kmsg.SyncGroupResponse
	if err == nil {
		resp, err = do(ctx, s, req.Group, meta, coordinator.SyncGroup(req))
		s.noteRefused(req.Group, err)
	}
	if err != nil {
		return coordinator.SyncGroupError(req, err)
	}
	return resp
}
