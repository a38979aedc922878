package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DeleteTopics authorizes DeleteTopics: CLUSTER DELETE allows every topic (KRaft's shortcut);
// otherwise a topic needs DESCRIBE (denied: TOPIC_AUTHORIZATION_FAILED whether or not it exists;
// by ID with a null name) and then DELETE (denied: TOPIC_AUTHORIZATION_FAILED). A describable
// topic that does not exist gets UNKNOWN_TOPIC_OR_PARTITION from the plane.
func (a Adapters) DeleteTopics(ctx context.Context, r Req, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	if r.open() || r.Check.Visible(security.OpDelete, security.Cluster, security.ClusterName) {
		return a.P.DeleteTopics(ctx, req)
	}
	entries := req.Topics
	if req.Version < 6 {
		entries = nil
		for _, n := range req.TopicNames {
			entries = append(entries, kmsg.DeleteTopicsRequestTopic{Topic: str(n)})
		}
	}
	allowed := make([]bool, len(entries))
	denied := make([]kmsg.DeleteTopicsResponseTopic, len(entries))
	sub := *req
	sub.Topics, sub.TopicNames = nil, nil
	for i, rt := range entries {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.ErrorCode = kerr.TopicAuthorizationFailed.Code
		st.ErrorMessage = str(kerr.TopicAuthorizationFailed.Description)
		var name string
		switch {
		case rt.Topic != nil && rt.TopicID != [16]byte{}, rt.Topic == nil && rt.TopicID == [16]byte{}:
			allowed[i] = true // INVALID_REQUEST from the plane
		case rt.Topic != nil:
			name = *rt.Topic
			st.Topic = rt.Topic
		default:
			ti, ok := a.P.TopicByID(rt.TopicID)
			if !ok {
				allowed[i] = true // UNKNOWN_TOPIC_ID from the plane
				break
			}
			name = ti.Name
			st.TopicID = rt.TopicID
		}
		if !allowed[i] && r.Check.Allowed(security.OpDescribe, security.Topic, name) {
			// Describable: a missing topic is UNKNOWN_TOPIC_OR_PARTITION (from the plane), an
			// existing one needs DELETE.
			_, exists := a.P.Topic(name)
			allowed[i] = !exists || r.Check.Allowed(security.OpDelete, security.Topic, name)
		}
		denied[i] = st
		if allowed[i] {
			if req.Version < 6 {
				sub.TopicNames = append(sub.TopicNames, *rt.Topic)
			} else {
				sub.Topics = append(sub.Topics, rt)
			}
		}
	}
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	var got []kmsg.DeleteTopicsResponseTopic
	if !none(allowed) {
		got = a.P.DeleteTopics(ctx, &sub).Topics
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.DeleteTopicsResponseTopic { return denied[i] })
	return resp
}
