package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// OffsetDelete serves OffsetDelete v0 (KIP-496): partitions of topics that do not exist answer
// UNKNOWN_TOPIC_OR_PARTITION (KafkaApis), the rest is coordinator.OffsetDelete; a group-level
// error answers alone. Partitions answer in request order.
func (s *Service) OffsetDelete(ctx context.Context, meta coordinator.Meta, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	known, unknown := splitUnknownPartitions(s.image(), req.Topics,
		func(t kmsg.OffsetDeleteRequestTopic) (string, []kmsg.OffsetDeleteRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.OffsetDeleteRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.OffsetDeleteRequestTopic, ps []kmsg.OffsetDeleteRequestTopicPartition) kmsg.OffsetDeleteRequestTopic {
			t.Partitions = ps
			return t
		})
	sub := *req
	sub.Topics = known
	got, err := do(ctx, s, req.Group, meta, coordinator.OffsetDelete(&sub))
	out := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if err != nil {
		out.ErrorCode = coordinator.ErrorCode(err)
		return out
	}
	out.ErrorCode = got.ErrorCode
	if got.ErrorCode != 0 {
		return out
	}
	codes := map[topicPartition]int16{}
	for _, t := range got.Topics {
		for _, p := range t.Partitions {
			codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
		}
	}
	for tp := range unknown {
		codes[tp] = kerr.UnknownTopicOrPartition.Code
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = codes[topicPartition{t.Topic, p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}
