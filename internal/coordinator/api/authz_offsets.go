package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/metadata"
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

// authorizeOffsetFetch: DESCRIBE on each group (denied: GROUP_AUTHORIZATION_FAILED for the
// group), then DESCRIBE on each named topic (denied: TOPIC_AUTHORIZATION_FAILED on each of its
// partitions with offset -1, after the coordinator's topics, as Kafka orders them); a fetch of
// all topics drops the undescribable ones silently.
func (s *Service) authorizeOffsetFetch(ctx context.Context, r Req, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	if r.open() || req.Version < 1 {
		return s.OffsetFetch(ctx, r.Meta, req)
	}
	if req.Version >= 8 {
		return s.authorizeOffsetFetchGroups(ctx, r, req)
	}
	if !r.Check.Allowed(security.OpDescribe, security.Group, req.Group) {
		return offsetFetchGroupDenied(req)
	}
	if req.Topics == nil {
		resp := s.OffsetFetch(ctx, r.Meta, req)
		if resp.ErrorCode == 0 {
			visible := resp.Topics[:0]
			for _, t := range resp.Topics {
				if r.Check.Visible(security.OpDescribe, security.Topic, t.Topic) {
					visible = append(visible, t)
				}
			}
			resp.Topics = visible
		}
		return resp
	}
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	allowed := r.topicsAllowed(security.OpDescribe, names)
	if allAllowed(allowed) {
		return s.OffsetFetch(ctx, r.Meta, req)
	}
	sub := *req
	sub.Topics = []kmsg.OffsetFetchRequestTopic{}
	var denied []kmsg.OffsetFetchResponseTopic
	for _, t := range req.Topics {
		if allowed[t.Topic] {
			sub.Topics = append(sub.Topics, t)
			continue
		}
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.TopicAuthorizationFailed.Code
			rp.Metadata = kmsg.StringPtr("")
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := s.OffsetFetch(ctx, r.Meta, &sub)
	if resp.ErrorCode == 0 {
		resp.Topics = append(resp.Topics, denied...)
	}
	return resp
}

// authorizeOffsetFetchGroups is authorizeOffsetFetch for v8+ (many groups): only the
// authorized groups, each with its authorized topics, go to OffsetFetch; groups answer in
// request order.
func (s *Service) authorizeOffsetFetchGroups(ctx context.Context, r Req, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	type plan struct {
		denied bool                                 // no DESCRIBE on the group
		all    bool                                 // all topics: filter the answer
		topics []kmsg.OffsetFetchResponseGroupTopic // denied named topics
	}
	im, byID := s.image(), req.Version >= 10
	plans := make([]plan, len(req.Groups))
	sub := *req
	sub.Groups = nil
	for i, g := range req.Groups {
		if !r.Check.Allowed(security.OpDescribe, security.Group, g.Group) {
			plans[i].denied = true
			continue
		}
		if g.Topics == nil {
			plans[i].all = true
			sub.Groups = append(sub.Groups, g)
			continue
		}
		names := make([]string, len(g.Topics))
		known := make([]bool, len(g.Topics))
		var check []string
		for k, t := range g.Topics {
			if names[k], known[k] = topicName(im, t.Topic, t.TopicID, byID); known[k] {
				check = append(check, names[k])
			}
		}
		allowed := r.topicsAllowed(security.OpDescribe, check)
		sg := g
		sg.Topics = make([]kmsg.OffsetFetchRequestGroupTopic, 0, len(g.Topics))
		for k, t := range g.Topics {
			if !known[k] || allowed[names[k]] {
				sg.Topics = append(sg.Topics, t)
				continue
			}
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.TopicAuthorizationFailed.Code
				rp.Metadata = kmsg.StringPtr("")
				rt.Partitions = append(rt.Partitions, rp)
			}
			plans[i].topics = append(plans[i].topics, rt)
		}
		sub.Groups = append(sub.Groups, sg)
	}
	var got []kmsg.OffsetFetchResponseGroup
	if len(sub.Groups) > 0 {
		got = s.OffsetFetch(ctx, r.Meta, &sub).Groups
	}
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	j := 0
	for i, g := range req.Groups {
		if plans[i].denied || j >= len(got) {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
			if !plans[i].denied {
				rg.ErrorCode = kerr.UnknownServerError.Code
			}
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg := got[j]
		j++
		if rg.ErrorCode == 0 {
			if plans[i].all {
				rg.Topics = describableFetchedTopics(r, im, rg.Topics)
			} else {
				rg.Topics = append(rg.Topics, plans[i].topics...)
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// describableFetchedTopics keeps the topics of an all-topics fetch that the caller may
// DESCRIBE, silently (v10 answers may name a topic by id only).
func describableFetchedTopics(r Req, im *metadata.Image, ts []kmsg.OffsetFetchResponseGroupTopic) []kmsg.OffsetFetchResponseGroupTopic {
	out := ts[:0]
	for _, t := range ts {
		name := t.Topic
		if name == "" && im != nil {
			name, _ = im.TopicName(t.TopicID)
		}
		if r.Check.Visible(security.OpDescribe, security.Topic, name) {
			out = append(out, t)
		}
	}
	return out
}

// offsetFetchGroupDenied is the v1–v7 answer for a group the caller may not DESCRIBE:
// GROUP_AUTHORIZATION_FAILED at the top level, and on every requested partition for v1, which
// has no top-level error (OffsetFetchRequest.getErrorResponse).
func offsetFetchGroupDenied(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	if req.Version >= 2 {
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.ErrorCode = p, -1, resp.ErrorCode
			rp.Metadata = kmsg.StringPtr("")
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
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
