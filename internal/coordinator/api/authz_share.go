package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/security"
)

// KIP-932 share groups (KafkaApis.handleShareGroupHeartbeat, handleShareGroupDescribe,
// handleShareFetchRequest, handleShareAcknowledgeRequest and the share offset admin APIs): the
// group first (READ for the heartbeat, fetches, acknowledgements and offset changes, DESCRIBE
// for descriptions, DELETE for offset deletion), then the topics (DESCRIBE for subscriptions
// and descriptions, READ for fetched and acknowledged partitions and changed offsets).

// authorizeShareGroupHeartbeat: READ on the group, then DESCRIBE on every subscribed topic name
// (any denied: TOPIC_AUTHORIZATION_FAILED at the top level, the member is not touched).
func (s *Service) authorizeShareGroupHeartbeat(ctx context.Context, r Req, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	if err := r.Check.Group(req.GroupID); err != nil {
		return coordinator.ShareGroupHeartbeatError(req, err)
	}
	if !r.open() && len(req.SubscribedTopicNames) > 0 && !allAllowed(r.topicsAllowed(security.OpDescribe, req.SubscribedTopicNames)) {
		return coordinator.ShareGroupHeartbeatError(req, kerr.TopicAuthorizationFailed)
	}
	return s.ShareGroupHeartbeat(ctx, r.Meta, req)
}

// authorizeShareGroupDescribe: DESCRIBE on each group (denied groups first, as
// GROUP_AUTHORIZATION_FAILED rows), then DESCRIBE on every topic its members are assigned (a
// group naming one the caller may not describe becomes a TOPIC_AUTHORIZATION_FAILED row).
func (s *Service) authorizeShareGroupDescribe(ctx context.Context, r Req, req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	sub := *req
	sub.GroupIDs = nil
	for _, id := range req.GroupIDs {
		if r.Check.Allowed(security.OpDescribe, security.Group, id) {
			sub.GroupIDs = append(sub.GroupIDs, id)
			continue
		}
		g := kmsg.NewShareGroupDescribeResponseGroup()
		g.GroupID, g.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
		resp.Groups = append(resp.Groups, g)
	}
	if len(sub.GroupIDs) == 0 {
		return resp
	}
	described := s.ShareGroupDescribe(ctx, r.Meta, &sub).Groups
	topicsOK := topicDecisions{r: r, op: security.OpDescribe}
	for i := range described {
		d := &described[i]
		if d.ErrorCode != 0 {
			continue
		}
		d.AuthorizedOperations = r.Check.Operations(req.IncludeAuthorizedOperations, security.Group, d.GroupID)
		if r.open() {
			continue
		}
		var topics []string
		for _, m := range d.Members {
			for _, tp := range m.Assignment.TopicPartitions {
				if tp.Topic != "" {
					topics = append(topics, tp.Topic)
				}
			}
		}
		if !topicsOK.all(topics) {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode = d.GroupID, kerr.TopicAuthorizationFailed.Code
			g.ErrorMessage = kmsg.StringPtr("The group has described topic(s) that the client is not authorized to describe.")
			*d = g
		}
	}
	resp.Groups = append(resp.Groups, described...)
	return resp
}

// shareTopicsDenied splits a share request's topics by READ: the ids the caller may not read
// (sharePartitionsDenied) and the topics it may.
func shareTopicsDenied[T any](s *Service, r Req, topics []T, id func(T) [16]byte) (denied map[[16]byte]bool, allowed []T) {
	if r.open() {
		return nil, topics
	}
	ids := make([][16]byte, len(topics))
	for i, t := range topics {
		ids[i] = id(t)
	}
	denied = s.sharePartitionsDenied(r, ids)
	if len(denied) == 0 {
		return denied, topics
	}
	for i, t := range topics {
		if !denied[ids[i]] {
			allowed = append(allowed, t)
		}
	}
	return denied, allowed
}

// sharePartitionsDenied decides READ on the topics (named by id) of a share request: the ids
// the caller may not read. An id the image does not know passes (UNKNOWN_TOPIC_ID comes first).
func (s *Service) sharePartitionsDenied(r Req, ids [][16]byte) map[[16]byte]bool {
	denied := map[[16]byte]bool{}
	if r.open() {
		return denied
	}
	im := s.image()
	decided := map[[16]byte]bool{}
	for _, id := range ids {
		if decided[id] {
			continue
		}
		decided[id] = true
		name, ok := topicName(im, "", id, true)
		if ok && !r.Check.Allowed(security.OpRead, security.Topic, name) {
			denied[id] = true
		}
	}
	return denied
}

// authorizeShareFetch: READ on the group (denied: GROUP_AUTHORIZATION_FAILED at the top level),
// then READ on each topic: the partitions of a denied topic are neither fetched nor acknowledged
// and answer TOPIC_AUTHORIZATION_FAILED.
func (s *Service) authorizeShareFetch(ctx context.Context, r Req, req *kmsg.ShareFetchRequest) *kmsg.ShareFetchResponse {
	if err := r.Check.Group(strOf(req.GroupID)); err != nil {
		resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	denied, allowed := shareTopicsDenied(s, r, req.Topics, func(t kmsg.ShareFetchRequestTopic) [16]byte { return t.TopicID })
	if len(denied) == 0 {
		return s.ShareFetch(ctx, r.Meta, req)
	}
	sub := *req
	sub.Topics = allowed
	resp := s.ShareFetch(ctx, r.Meta, &sub)
	if resp.ErrorCode != 0 {
		return resp
	}
	out := newShareFetchResponse(resp) // indexed by what the response holds already
	for ti, t := range resp.Topics {
		for pi, p := range t.Partitions {
			out.index[coordinator.SharePartitionID{TopicID: t.TopicID, Partition: p.Partition}] = [2]int{ti, pi}
		}
	}
	for _, t := range req.Topics {
		if !denied[t.TopicID] {
			continue
		}
		for _, p := range t.Partitions {
			rp := out.partition(coordinator.SharePartitionID{TopicID: t.TopicID, Partition: p.Partition})
			rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			if len(p.AcknowledgementBatches) > 0 {
				rp.AcknowledgeErrorCode = kerr.TopicAuthorizationFailed.Code
			}
		}
	}
	return resp
}

// authorizeShareAcknowledge: READ on the group, then READ on each topic (a denied topic's
// partitions answer TOPIC_AUTHORIZATION_FAILED; their acknowledgements are not applied).
func (s *Service) authorizeShareAcknowledge(ctx context.Context, r Req, req *kmsg.ShareAcknowledgeRequest) *kmsg.ShareAcknowledgeResponse {
	if err := r.Check.Group(strOf(req.GroupID)); err != nil {
		resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	denied, allowed := shareTopicsDenied(s, r, req.Topics, func(t kmsg.ShareAcknowledgeRequestTopic) [16]byte { return t.TopicID })
	if len(denied) == 0 {
		return s.ShareAcknowledge(ctx, r.Meta, req)
	}
	sub := *req
	sub.Topics = allowed
	resp := s.ShareAcknowledge(ctx, r.Meta, &sub)
	if resp.ErrorCode != 0 {
		return resp
	}
	for _, t := range req.Topics {
		if !denied[t.TopicID] {
			continue
		}
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// authorizeDescribeShareGroupOffsets: DESCRIBE on each group (denied: GROUP_AUTHORIZATION_FAILED
// for that group), then DESCRIBE on the topics: named topics the caller may not describe answer
// TOPIC_AUTHORIZATION_FAILED per partition; with all topics asked for, they are left out.
func (s *Service) authorizeDescribeShareGroupOffsets(ctx context.Context, r Req, req *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse {
	if r.open() {
		return s.DescribeShareGroupOffsets(ctx, r.Meta, req)
	}
	allowedGroup := map[string]bool{}
	sub := *req
	sub.Groups = nil
	topicsOK := topicDecisions{r: r, op: security.OpDescribe}
	for _, g := range req.Groups {
		ok := r.Check.Allowed(security.OpDescribe, security.Group, g.GroupID)
		allowedGroup[g.GroupID] = ok
		if ok {
			sub.Groups = append(sub.Groups, g)
		}
	}
	got := s.DescribeShareGroupOffsets(ctx, r.Meta, &sub)
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	j := 0
	for _, g := range req.Groups {
		if !allowedGroup[g.GroupID] {
			rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			rg.GroupID, rg.ErrorCode = g.GroupID, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg := got.Groups[j]
		j++
		kept := rg.Topics[:0]
		for _, t := range rg.Topics {
			if topicsOK.all([]string{t.Topic}) {
				kept = append(kept, t)
				continue
			}
			if g.Topics == nil {
				continue // all topics: left out silently
			}
			for i := range t.Partitions {
				t.Partitions[i].ErrorCode, t.Partitions[i].StartOffset, t.Partitions[i].Lag = kerr.TopicAuthorizationFailed.Code, -1, -1
			}
			kept = append(kept, t)
		}
		rg.Topics = kept
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// authorizeAlterShareGroupOffsets: READ on the group, then READ on each topic (a denied topic
// answers TOPIC_AUTHORIZATION_FAILED per partition and is not changed).
func (s *Service) authorizeAlterShareGroupOffsets(ctx context.Context, r Req, req *kmsg.AlterShareGroupOffsetsRequest) *kmsg.AlterShareGroupOffsetsResponse {
	if err := r.Check.Group(req.GroupID); err != nil {
		resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	if r.open() {
		return s.AlterShareGroupOffsets(ctx, r.Meta, req)
	}
	sub := *req
	var denied []kmsg.AlterShareGroupOffsetsRequestTopic
	sub.Topics, denied = splitByTopicRead(r, req.Topics, func(t kmsg.AlterShareGroupOffsetsRequestTopic) string { return t.Topic })
	resp := s.AlterShareGroupOffsets(ctx, r.Meta, &sub)
	if resp.ErrorCode != 0 {
		return resp
	}
	for _, t := range denied {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// authorizeDeleteShareGroupOffsets: DELETE on the group, then READ on each topic (a denied
// topic answers TOPIC_AUTHORIZATION_FAILED and keeps its state).
func (s *Service) authorizeDeleteShareGroupOffsets(ctx context.Context, r Req, req *kmsg.DeleteShareGroupOffsetsRequest) *kmsg.DeleteShareGroupOffsetsResponse {
	if err := r.Check.Group(req.GroupID); err != nil {
		resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	if r.open() {
		return s.DeleteShareGroupOffsets(ctx, r.Meta, req)
	}
	sub := *req
	var denied []kmsg.DeleteShareGroupOffsetsRequestTopic
	sub.Topics, denied = splitByTopicRead(r, req.Topics, func(t kmsg.DeleteShareGroupOffsetsRequestTopic) string { return t.Topic })
	resp := s.DeleteShareGroupOffsets(ctx, r.Meta, &sub)
	if resp.ErrorCode != 0 {
		return resp
	}
	for _, t := range denied {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, kerr.TopicAuthorizationFailed.Code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// splitByTopicRead splits a request's topics into those the principal may READ and those it
// may not (each topic decided once).
func splitByTopicRead[T any](r Req, topics []T, name func(T) string) (allowed, denied []T) {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = name(t)
	}
	ok := r.topicsAllowed(security.OpRead, names)
	for i, t := range topics {
		if ok[names[i]] {
			allowed = append(allowed, t)
		} else {
			denied = append(denied, t)
		}
	}
	return allowed, denied
}
