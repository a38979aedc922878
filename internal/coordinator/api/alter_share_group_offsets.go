package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// AlterShareGroupOffsets serves AlterShareGroupOffsets v0 (KIP-932,
// coordinator.AlterShareGroupOffsets): the group must be empty; each partition's SPSO is set.
func (s *Service) AlterShareGroupOffsets(ctx context.Context, meta coordinator.Meta, req *kmsg.AlterShareGroupOffsetsRequest) *kmsg.AlterShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	var topics []coordinator.ShareOffsetsTopicChange
	for _, t := range req.Topics {
		tc := coordinator.ShareOffsetsTopicChange{Topic: t.Topic}
		for _, p := range t.Partitions {
			tc.Partitions = append(tc.Partitions, coordinator.ShareOffsetsChange{Partition: p.Partition, StartOffset: p.StartOffset})
		}
		topics = append(topics, tc)
	}
	out, err := do(ctx, s, req.GroupID, meta, coordinator.AlterShareGroupOffsets(req.GroupID, topics))
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
		return resp
	}
	for _, t := range out {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode, rp.ErrorMessage = coordinator.ErrorCode(p.Err), coordinator.ErrorMessage(p.Err)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
