package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ShareGroupHeartbeat serves ShareGroupHeartbeat v1 (KIP-932, coordinator.ShareGroupHeartbeat).
// While the store refuses writes, joins and leaves are refused before the shard (writes.go).
func (s *Service) ShareGroupHeartbeat(ctx context.Context, meta coordinator.Meta, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	var err error
	if req.MemberEpoch <= 0 { // joins and leaves always write
		err = s.refuseWrite()
	} else {
		err = s.refuseFrozen(req.GroupID)
	}
	var resp *kmsg.ShareGroupHeartbeatResponse
	if err == nil {
		resp, err = do(ctx, s, req.GroupID, meta, coordinator.ShareGroupHeartbeat(req))
		s.noteRefused(req.GroupID, err)
	}
	if err != nil {
		return coordinator.ShareGroupHeartbeatError(req, err)
	}
	return resp
}
