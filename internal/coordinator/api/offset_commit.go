package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/metadata"
)

// OffsetCommit serves OffsetCommit v2–v10 (v0–v1 answer UNSUPPORTED_VERSION, KIP-896).
// v10 names topics by id (KAFKA-14690): each id is resolved to its name in the newest metadata
// image, so a commit by id and a commit by name write the same offset; an id the image does not
// know (or the zero id) answers UNKNOWN_TOPIC_ID for every partition of the topic, and the
// response names topics by id. Partitions of unknown topics, or past the topic's partition
// count, answer UNKNOWN_TOPIC_OR_PARTITION without reaching the coordinator (KafkaApis'
// check); the rest is coordinator.OffsetCommit. Partitions answer in request order.
func (s *Service) OffsetCommit(ctx context.Context, meta coordinator.Meta, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	if req.Version < 2 {
		return coordinator.OffsetCommitResponse(req, kerr.UnsupportedVersion)
	}
	if err := s.refuseWrite(); err != nil {
		return coordinator.OffsetCommitResponse(req, err)
	}
	im := s.image()
	if req.Version < 10 && allPartitionsKnown(im, req.Topics) {
		// Every partition reaches the coordinator: its response is the answer.
		resp, err := do(ctx, s, req.Group, meta, coordinator.OffsetCommit(req))
		if err != nil {
			return coordinator.OffsetCommitResponse(req, err)
		}
		return resp
	}
	named := *req
	named.Topics = append([]kmsg.OffsetCommitRequestTopic(nil), req.Topics...)
	unknownID := make([]bool, len(named.Topics))
	candidates := named.Topics
	if req.Version >= 10 {
		candidates = make([]kmsg.OffsetCommitRequestTopic, 0, len(named.Topics))
		for i := range named.Topics {
			name, ok := im.TopicName(named.Topics[i].TopicID)
			if !ok || named.Topics[i].TopicID == ([16]byte{}) {
				unknownID[i] = true
				continue
			}
			named.Topics[i].Topic = name
			candidates = append(candidates, named.Topics[i])
		}
	}
	known, unknown := splitUnknownPartitions(im, candidates,
		func(t kmsg.OffsetCommitRequestTopic) (string, []kmsg.OffsetCommitRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.OffsetCommitRequestTopic, ps []kmsg.OffsetCommitRequestTopicPartition) kmsg.OffsetCommitRequestTopic {
			t.Partitions = ps
			return t
		})
	codes := map[topicPartition]int16{}
	if len(known) > 0 {
		sub := named
		sub.Topics = known
		resp, err := do(ctx, s, req.Group, meta, coordinator.OffsetCommit(&sub))
		for _, t := range known {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = coordinator.ErrorCode(err)
			}
		}
		if err == nil {
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
				}
			}
		}
	}
	for tp := range unknown {
		codes[tp] = kerr.UnknownTopicOrPartition.Code
	}
	out := coordinator.OffsetCommitResponse(&named, nil)
	for i := range out.Topics {
		rt := &out.Topics[i]
		rt.TopicID = req.Topics[i].TopicID
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			if unknownID[i] {
				rp.ErrorCode = kerr.UnknownTopicID.Code
				continue
			}
			rp.ErrorCode = codes[topicPartition{rt.Topic, rp.Partition}]
		}
	}
	return out
}

// allPartitionsKnown reports whether every partition of topics exists in im (no image: every
// topic is known), the common case, in which nothing is answered before the coordinator.
func allPartitionsKnown(im *metadata.Image, topics []kmsg.OffsetCommitRequestTopic) bool {
	if im == nil {
		return true
	}
	for _, t := range topics {
		_, n, ok := im.TopicID(t.Topic)
		if !ok {
			return false
		}
		for _, p := range t.Partitions {
			if p.Partition < 0 || p.Partition >= n {
				return false
			}
		}
	}
	return true
}
