package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// CreateTopics authorizes CreateTopics: CLUSTER CREATE, else TOPIC CREATE per name (denied:
// TOPIC_AUTHORIZATION_FAILED "Authorization failed.", also for a topic that exists). Names given
// twice go to the plane, which answers INVALID_REQUEST. A topic created without TOPIC
// DESCRIBE_CONFIGS answers TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED with no configs and
// partitions and replication factor −1 (ReplicationControlManager).
func (a Adapters) CreateTopics(ctx context.Context, r Req, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	if r.open() {
		return a.P.CreateTopics(ctx, req)
	}
	count := map[string]int{}
	for _, rt := range req.Topics {
		count[rt.Topic]++
	}
	clusterCreate := r.Check.Visible(security.OpCreate, security.Cluster, security.ClusterName)
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		allowed[i] = count[rt.Topic] > 1 || clusterCreate || r.Check.Allowed(security.OpCreate, security.Topic, rt.Topic)
		if allowed[i] {
			sub.Topics = append(sub.Topics, rt)
		}
	}
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	var got []kmsg.CreateTopicsResponseTopic
	if !none(allowed) {
		sr := a.P.CreateTopics(ctx, &sub)
		got = sr.Topics
		resp.ThrottleMillis = sr.ThrottleMillis
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.CreateTopicsResponseTopic {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = req.Topics[i].Topic
		st.ErrorCode, st.ErrorMessage = kerr.TopicAuthorizationFailed.Code, str("Authorization failed.")
		st.NumPartitions, st.ReplicationFactor = -1, -1
		return st
	})
	if req.Version >= 5 {
		for i := range resp.Topics {
			t := &resp.Topics[i]
			if t.ErrorCode == 0 && !r.Check.Visible(security.OpDescribeConfigs, security.Topic, t.Topic) {
				t.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
				t.Configs = nil
				t.NumPartitions, t.ReplicationFactor = -1, -1
			}
		}
	}
	return resp
}
