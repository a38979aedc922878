package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// Metadata authorizes Metadata and answers with the listener's endpoint. Named topics need
// TOPIC DESCRIBE (denied: TOPIC_AUTHORIZATION_FAILED with no partitions and a zero topic ID,
// whether or not the topic exists); a missing topic that would be auto-created also needs
// CREATE on the cluster or the topic (denied: TOPIC_AUTHORIZATION_FAILED, nothing created). A
// topic named by ID without DESCRIBE gets TOPIC_AUTHORIZATION_FAILED with the ID and a null name.
// An all-topics request leaves undescribable topics out silently; an empty list needs no ACL.
// Authorized-operations bitfields (v8+) are filled when asked for.
func (a Adapters) Metadata(ctx context.Context, r Req, req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	var resp *kmsg.MetadataResponse
	switch {
	case r.open() || allTopics:
		resp = a.P.Metadata(ctx, req)
		if !r.open() {
			kept := resp.Topics[:0]
			for _, t := range resp.Topics {
				if t.Topic != nil && r.Check.Visible(security.OpDescribe, security.Topic, *t.Topic) {
					kept = append(kept, t)
				}
			}
			resp.Topics = kept
		}
	default:
		resp = a.namedMetadata(ctx, r, req)
	}
	a.endpoint(r, resp)
	if req.Version >= 8 {
		if req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
			resp.AuthorizedOperations = 0
			if r.Check.Visible(security.OpDescribe, security.Cluster, security.ClusterName) {
				resp.AuthorizedOperations = r.Check.A.AuthorizedOperations(r.Check.S, security.Cluster, security.ClusterName)
			}
		}
		if req.IncludeTopicAuthorizedOperations {
			for i := range resp.Topics {
				t := &resp.Topics[i]
				if t.ErrorCode == 0 && t.Topic != nil {
					t.AuthorizedOperations = r.Check.A.AuthorizedOperations(r.Check.S, security.Topic, *t.Topic)
				}
			}
		}
	}
	return resp
}

func (a Adapters) namedMetadata(ctx context.Context, r Req, req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	allowCreate := (req.Version < 4 || req.AllowAutoTopicCreation) && a.P.AutoCreateTopics()
	allowed := make([]bool, len(req.Topics))
	denied := make([]kmsg.MetadataResponseTopic, len(req.Topics))
	sub := *req
	sub.Topics = []kmsg.MetadataRequestTopic{}
	for i, rt := range req.Topics {
		st := kmsg.NewMetadataResponseTopic()
		st.ErrorCode = kerr.TopicAuthorizationFailed.Code
		name := ""
		if rt.Topic != nil {
			name = *rt.Topic
			st.Topic = str(name)
		} else {
			ti, ok := a.P.TopicByID(rt.TopicID)
			if !ok { // UNKNOWN_TOPIC_ID from the plane: IDs are not secret
				allowed[i] = true
				sub.Topics = append(sub.Topics, rt)
				continue
			}
			name = ti.Name
			st.TopicID = rt.TopicID
		}
		denied[i] = st
		if !r.Check.Allowed(security.OpDescribe, security.Topic, name) {
			continue
		}
		if rt.Topic != nil && allowCreate {
			if _, exists := a.P.Topic(name); !exists && !r.Check.ClusterOrEach(security.OpCreate, security.Topic, name) {
				continue
			}
		}
		allowed[i] = true
		sub.Topics = append(sub.Topics, rt)
	}
	if sub.Version == 0 && len(sub.Topics) == 0 {
		sub.Version = 1 // v0's empty list means every topic; v1's means none
	}
	resp := a.P.Metadata(ctx, &sub)
	resp.Version = req.Version
	resp.Topics = merge(allowed, resp.Topics, func(i int) kmsg.MetadataResponseTopic { return denied[i] })
	return resp
}

// endpoint makes the broker list name the listener the request came in on.
func (a Adapters) endpoint(r Req, resp *kmsg.MetadataResponse) {
	if r.Host == "" {
		return
	}
	for i := range resp.Brokers {
		resp.Brokers[i].Host, resp.Brokers[i].Port = r.Host, r.Port
	}
}
