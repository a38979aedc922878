package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DeleteRecords authorizes DeleteRecords: TOPIC DELETE per topic, before existence (denied:
// TOPIC_AUTHORIZATION_FAILED per partition, low watermark −1).
func (a Adapters) DeleteRecords(ctx context.Context, r Req, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
	if r.open() {
		return a.P.DeleteRecords(ctx, req)
	}
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		if allowed[i] = r.Check.Allowed(security.OpDelete, security.Topic, rt.Topic); allowed[i] {
			sub.Topics = append(sub.Topics, rt)
		}
	}
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	var got []kmsg.DeleteRecordsResponseTopic
	if !none(allowed) {
		got = a.P.DeleteRecords(ctx, &sub).Topics
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.DeleteRecordsResponseTopic {
		rt := req.Topics[i]
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.LowWatermark = rp.Partition, kerr.TopicAuthorizationFailed.Code, -1
			st.Partitions = append(st.Partitions, sp)
		}
		return st
	})
	return resp
}
