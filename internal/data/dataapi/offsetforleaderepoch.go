package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// OffsetForLeaderEpoch authorizes OffsetForLeaderEpoch: CLUSTER CLUSTER_ACTION allows every
// topic, else TOPIC DESCRIBE per topic (denied: TOPIC_AUTHORIZATION_FAILED per partition).
func (a Adapters) OffsetForLeaderEpoch(ctx context.Context, r Req, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	if r.open() || r.Check.Visible(security.OpClusterAction, security.Cluster, security.ClusterName) {
		return a.P.OffsetForLeaderEpoch(ctx, req)
	}
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		if allowed[i] = r.Check.Allowed(security.OpDescribe, security.Topic, rt.Topic); allowed[i] {
			sub.Topics = append(sub.Topics, rt)
		}
	}
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	var got []kmsg.OffsetForLeaderEpochResponseTopic
	if !none(allowed) {
		got = a.P.OffsetForLeaderEpoch(ctx, &sub).Topics
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.OffsetForLeaderEpochResponseTopic {
		rt := req.Topics[i]
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		return st
	})
	return resp
}
