package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// OffsetCommit serves OffsetCommit v2–v9 (v0–v1 answer UNSUPPORTED_VERSION, KIP-896).
// Partitions of unknown topics answer UNKNOWN_TOPIC_OR_PARTITION without reaching the
// coordinator (KafkaApis); the rest is coordinator.OffsetCommit. Partitions answer in request
// order.
func (s *Service) OffsetCommit(ctx context.Context, meta coordinator.Meta, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	if req.Version < 2 {
		return coordinator.OffsetCommitResponse(req, kerr.UnsupportedVersion)
	}
	if err := s.refuseWrite(); err != nil {
		return coordinator.OffsetCommitResponse(req, err)
	}
	known, unknown := splitUnknownPartitions(s.image(), req.Topics,
		func(t kmsg.OffsetCommitRequestTopic) (string, []kmsg.OffsetCommitRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.OffsetCommitRequestTopic, ps []kmsg.OffsetCommitRequestTopicPartition) kmsg.OffsetCommitRequestTopic {
			t.Partitions = ps
			return t
		})
	if len(unknown) == 0 {
		resp, err := do(ctx, s, req.Group, meta, coordinator.OffsetCommit(req))
		if err != nil {
			return coordinator.OffsetCommitResponse(req, err)
		}
		return resp
	}
	sub := *req
	sub.Topics = known
	resp, err := do(ctx, s, req.Group, meta, coordinator.OffsetCommit(&sub))
	codes := map[topicPartition]int16{}
	if err != nil {
		for _, t := range known {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = coordinator.ErrorCode(err)
			}
		}
	} else {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
			}
		}
	}
	for tp := range unknown {
		codes[tp] = kerr.UnknownTopicOrPartition.Code
	}
	out := coordinator.OffsetCommitResponse(req, nil)
	for i := range out.Topics {
		for j := range out.Topics[i].Partitions {
			rp := &out.Topics[i].Partitions[j]
			rp.ErrorCode = codes[topicPartition{out.Topics[i].Topic, rp.Partition}]
		}
	}
	return out
}
