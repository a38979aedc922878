package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/metadata"
	"github.com/muster-io/muster/internal/security"
)

// authorizeOffsetFetch: DESCRIBE on each group (denied: GROUP_AUTHORIZATION_FAILED for the
// group), then DESCRIBE on each named topic (denied: TOPIC_AUTHORIZATION_FAILED on each of its
// partitions with offset -1, after the coordinator's topics, as Kafka orders them); a fetch of
// all topics drops the undescribable ones silently.
func (s *Service) authorizeOffsetFetch(ctx context.Context, r Req, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	if r.open() || req.Version < 1 {
		return s.OffsetFetch(ctx, r.Meta, req) // v0: UNSUPPORTED_VERSION (KIP-896), before any ACL
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
