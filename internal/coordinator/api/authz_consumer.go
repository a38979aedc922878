package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/security"
)

// KIP-848 consumer groups (KafkaApis.handleConsumerGroupHeartbeat and
// handleConsumerGroupDescribe, with the topic checks of Kafka 4.0, KAFKA-18813): the heartbeat
// needs READ on the group and DESCRIBE on every subscribed topic name, a regex subscription
// resolves only to topics the member may DESCRIBE; a description needs DESCRIBE on the group and
// on every topic its members are assigned.

// cgDescribeTopicsDenied is Kafka's message for a consumer group whose assignments name a topic
// the caller may not DESCRIBE.
const cgDescribeTopicsDenied = "The group has described topic(s) that the client is not authorized to describe."

// authorizeConsumerGroupHeartbeat: the protocol gate first (UNSUPPORTED_VERSION when the
// consumer protocol is disabled), then READ on the group, then DESCRIBE on every
// SubscribedTopicNames entry (any denied: TOPIC_AUTHORIZATION_FAILED at the top level, the member
// is not touched). A regex subscription is not checked here: the shard resolves it with this
// member's DESCRIBE rights (Meta.DescribableTopic) whenever this heartbeat refreshes it.
func (s *Service) authorizeConsumerGroupHeartbeat(ctx context.Context, r Req, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	if !s.Cfg.Consumer.Enabled {
		return coordinator.ConsumerGroupHeartbeatError(req, kerr.UnsupportedVersion)
	}
	if err := r.Check.Group(req.Group); err != nil {
		return coordinator.ConsumerGroupHeartbeatError(req, err)
	}
	if !r.open() && len(req.SubscribedTopicNames) > 0 {
		if !allAllowed(r.topicsAllowed(security.OpDescribe, req.SubscribedTopicNames)) {
			resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			return resp
		}
	}
	return s.ConsumerGroupHeartbeat(ctx, r.withTopicFilter(), req)
}

// authorizeConsumerGroupDescribe: the protocol gate first (UNSUPPORTED_VERSION for every group),
// then DESCRIBE on each group: denied groups come first as GROUP_AUTHORIZATION_FAILED rows,
// the described ones follow in request order with their KIP-430 bitfield when requested. A
// described group whose members' current or target assignments name a topic the caller may not
// DESCRIBE becomes a TOPIC_AUTHORIZATION_FAILED row without members, checked per group.
func (s *Service) authorizeConsumerGroupDescribe(ctx context.Context, r Req, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	if !s.Cfg.Consumer.Enabled {
		for _, id := range req.Groups {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = id, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	sub := *req
	sub.Groups = nil
	for _, id := range req.Groups {
		if r.Check.Allowed(security.OpDescribe, security.Group, id) {
			sub.Groups = append(sub.Groups, id)
			continue
		}
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group, g.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
		resp.Groups = append(resp.Groups, g)
	}
	if len(sub.Groups) == 0 {
		return resp
	}
	described := s.ConsumerGroupDescribe(ctx, r.Meta, &sub).Groups
	topicsOK := topicDecisions{r: r, op: security.OpDescribe}
	for i := range described {
		d := &described[i]
		if d.ErrorCode != 0 {
			continue
		}
		d.AuthorizedOperations = r.Check.Operations(req.IncludeAuthorizedOperations, security.Group, d.Group)
		if r.open() {
			continue
		}
		var topics []string
		for _, m := range d.Members {
			for _, a := range []kmsg.Assignment{m.Assignment, m.TargetAssignment} {
				for _, tp := range a.TopicPartitions {
					if tp.Topic != "" {
						topics = append(topics, tp.Topic)
					}
				}
			}
		}
		if !topicsOK.all(topics) {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode, g.ErrorMessage = d.Group, kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr(cgDescribeTopicsDenied)
			g.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{}
			*d = g
		}
	}
	resp.Groups = append(resp.Groups, described...)
	return resp
}
