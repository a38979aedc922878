package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ShareGroupDescribe serves ShareGroupDescribe v1 (KIP-932): each shard describes its groups
// (coordinator.ShareGroupDescribe); answers come in request order.
func (s *Service) ShareGroupDescribe(ctx context.Context, meta coordinator.Meta, req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	resp.Groups = perShard(ctx, s, meta, req.GroupIDs,
		func(ids []string) func(*coordinator.State, *coordinator.Call[[]kmsg.ShareGroupDescribeResponseGroup]) {
			return coordinator.ShareGroupDescribe(ids)
		},
		func(id string, err error) kmsg.ShareGroupDescribeResponseGroup {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode, g.ErrorMessage = id, coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
			return g
		})
	return resp
}
