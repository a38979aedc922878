package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// DeleteShareGroupOffsets serves DeleteShareGroupOffsets v0 (KIP-932,
// coordinator.DeleteShareGroupOffsets): the group must be empty; the share state of each topic
// is deleted.
func (s *Service) DeleteShareGroupOffsets(ctx context.Context, meta coordinator.Meta, req *kmsg.DeleteShareGroupOffsetsRequest) *kmsg.DeleteShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	topics := make([]string, 0, len(req.Topics))
	for _, t := range req.Topics {
		topics = append(topics, t.Topic)
	}
	out, err := do(ctx, s, req.GroupID, meta, coordinator.DeleteShareGroupOffsets(req.GroupID, topics))
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
		return resp
	}
	for _, t := range out {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		rt.ErrorCode, rt.ErrorMessage = coordinator.ErrorCode(t.Err), coordinator.ErrorMessage(t.Err)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
