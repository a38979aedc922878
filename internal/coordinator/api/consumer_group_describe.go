package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ConsumerGroupDescribe serves ConsumerGroupDescribe v0–v1 (KIP-848): each shard describes its
// groups (coordinator.ConsumerGroupDescribe); answers come in request order.
func (s *Service) ConsumerGroupDescribe(ctx context.Context, meta coordinator.Meta, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	resp.Groups = perShard(ctx, s, meta, req.Groups,
		func(ids []string) func(*coordinator.State, *coordinator.Call[[]kmsg.ConsumerGroupDescribeResponseGroup]) {
			return coordinator.ConsumerGroupDescribe(ids, req.Version)
		},
		func(id string, err error) kmsg.ConsumerGroupDescribeResponseGroup {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode, g.ErrorMessage = id, coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
			return g
		})
	return resp
}
