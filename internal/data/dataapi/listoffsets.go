package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// ListOffsets authorizes ListOffsets: TOPIC DESCRIBE per topic, before existence (denied:
// TOPIC_AUTHORIZATION_FAILED per partition, timestamp and offset −1).
func (a Adapters) ListOffsets(ctx context.Context, r Req, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	if r.open() {
		return a.P.ListOffsets(ctx, req)
	}
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		if allowed[i] = r.Check.Allowed(security.OpDescribe, security.Topic, rt.Topic); allowed[i] {
			sub.Topics = append(sub.Topics, rt)
		}
	}
	if all(allowed) {
		return a.P.ListOffsets(ctx, req)
	}
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	var got []kmsg.ListOffsetsResponseTopic
	if !none(allowed) {
		got = a.P.ListOffsets(ctx, &sub).Topics
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.ListOffsetsResponseTopic {
		rt := req.Topics[i]
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			sp.Timestamp, sp.Offset = -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		return st
	})
	return resp
}
