package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/security"
)

// Committed offsets: OffsetCommit needs READ on the group and on each topic, OffsetFetch
// DESCRIBE on the group and on each topic, OffsetDelete DELETE on the group and READ on each
// topic (KafkaApis.handleOffsetCommitRequest, handleOffsetFetchRequest,
// handleOffsetDeleteRequest). A denied topic answers TOPIC_AUTHORIZATION_FAILED on its
// partitions and never reaches the shard; a fetch of all topics leaves undescribable topics
// out without a word.

// authorizeOffsetCommit: READ on the group (denied: GROUP_AUTHORIZATION_FAILED on every
// partition, no topic is checked), then READ on each topic. Only the authorized topics are
// committed; the unknown-topic check comes after authorization (OffsetCommit). When no topic
// is authorized the shard is not called.
func (s *Service) authorizeOffsetCommit(ctx context.Context, r Req, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	if req.Version < 2 {
		return s.OffsetCommit(ctx, r.Meta, req) // UNSUPPORTED_VERSION (KIP-896), before any ACL
	}
	if err := r.Check.Group(req.Group); err != nil {
		return coordinator.OffsetCommitResponse(req, err)
	}
	if r.open() {
		return s.OffsetCommit(ctx, r.Meta, req)
	}
	im, byID := s.image(), req.Version >= 10
	names := make([]string, len(req.Topics))
	known := make([]bool, len(req.Topics))
	var check []string
	for i, t := range req.Topics {
		if names[i], known[i] = topicName(im, t.Topic, t.TopicID, byID); known[i] {
			check = append(check, names[i])
		}
	}
	allowed := r.topicsAllowed(security.OpRead, check)
	if allAllowed(allowed) {
		return s.OffsetCommit(ctx, r.Meta, req)
	}
	denied := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, t := range req.Topics {
		if denied[i] = known[i] && !allowed[names[i]]; !denied[i] {
			sub.Topics = append(sub.Topics, t)
		}
	}
	var got []kmsg.OffsetCommitResponseTopic
	if len(sub.Topics) > 0 {
		got = s.OffsetCommit(ctx, r.Meta, &sub).Topics
	}
	out := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	j := 0
	for i, t := range req.Topics {
		if !denied[i] && j < len(got) {
			out.Topics = append(out.Topics, got[j])
			j++
			continue
		}
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		code := deniedOr(denied[i])
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

// authorizeOffsetDelete: DELETE on the group (denied: GROUP_AUTHORIZATION_FAILED at the top
// level, no topics), then READ on each topic (denied: TOPIC_AUTHORIZATION_FAILED on its
// partitions). The shard is called even when no topic is authorized, as Kafka does, so group
// errors still answer.
func (s *Service) authorizeOffsetDelete(ctx context.Context, r Req, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	if err := r.Check.Group(req.Group); err != nil {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	if r.open() {
		return s.OffsetDelete(ctx, r.Meta, req)
	}
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	allowed := r.topicsAllowed(security.OpRead, names)
	if allAllowed(allowed) {
		return s.OffsetDelete(ctx, r.Meta, req)
	}
	sub := *req
	sub.Topics = []kmsg.OffsetDeleteRequestTopic{}
	for _, t := range req.Topics {
		if allowed[t.Topic] {
			sub.Topics = append(sub.Topics, t)
		}
	}
	got := s.OffsetDelete(ctx, r.Meta, &sub)
	if got.ErrorCode != 0 {
		return got
	}
	out := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	j := 0
	for _, t := range req.Topics {
		if allowed[t.Topic] && j < len(got.Topics) {
			out.Topics = append(out.Topics, got.Topics[j])
			j++
			continue
		}
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		code := deniedOr(!allowed[t.Topic])
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

// deniedOr is TOPIC_AUTHORIZATION_FAILED for a denied topic, and UNKNOWN_SERVER_ERROR for an
// authorized one the API method left unanswered (it answers every topic it is given).
func deniedOr(denied bool) int16 {
	if denied {
		return kerr.TopicAuthorizationFailed.Code
	}
	return kerr.UnknownServerError.Code
}
