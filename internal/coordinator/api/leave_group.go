package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// LeaveGroup serves LeaveGroup v0–v5 (coordinator.LeaveGroup).
func (s *Service) LeaveGroup(ctx context.Context, meta coordinator.Meta, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	err := s.refuseWrite()
	var resp *kmsg.LeaveGroupResponse
	if err == nil {
		resp, err = do(ctx, s, req.Group, meta, coordinator.LeaveGroup(req))
	}
	if err != nil {
		out := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		out.ErrorCode = coordinator.ErrorCode(err)
		return out
	}
	return resp
}
