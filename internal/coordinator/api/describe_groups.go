package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// DescribeGroups serves DescribeGroups v0–v6: each shard describes its groups
// (coordinator.DescribeGroups); answers come in request order.
func (s *Service) DescribeGroups(ctx context.Context, meta coordinator.Meta, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	resp.Groups = perShard(ctx, s, meta, req.Groups,
		func(ids []string) func(*coordinator.State, *coordinator.Call[[]kmsg.DescribeGroupsResponseGroup]) {
			return coordinator.DescribeGroups(ids, req.Version)
		},
		func(id string, err error) kmsg.DescribeGroupsResponseGroup {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ErrorCode = id, coordinator.ErrorCode(err)
			return g
		})
	return resp
}
