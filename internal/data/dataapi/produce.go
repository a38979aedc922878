package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// Produce authorizes Produce: TRANSACTIONAL_ID WRITE first for a transactional batch (denied:
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition), then TOPIC WRITE per topic (denied:
// TOPIC_AUTHORIZATION_FAILED per partition, whether or not the topic exists). A topic that does
// not exist is created by the plane only for a caller with CREATE (on the cluster or the topic);
// others get UNKNOWN_TOPIC_OR_PARTITION. Topics named by an unknown ID (v13+) get
// UNKNOWN_TOPIC_ID: topic IDs are not secret. There is no IDEMPOTENT_WRITE check. acks=0: nil.
func (a Adapters) Produce(ctx context.Context, r Req, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	if r.open() {
		return a.P.Produce(ctx, req)
	}
	denyAll := req.TransactionID != nil && !r.Check.Allowed(security.OpWrite, security.TransactionalID, *req.TransactionID)
	codes := make([]int16, len(req.Topics))
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		name := rt.Topic
		if req.Version >= 13 {
			ti, ok := a.P.TopicByID(rt.TopicID)
			if !ok && !denyAll { // UNKNOWN_TOPIC_ID from the plane: IDs are not secret
				allowed[i] = true
				sub.Topics = append(sub.Topics, rt)
				continue
			}
			name = ti.Name
		}
		switch {
		case denyAll:
			codes[i] = kerr.TransactionalIDAuthorizationFailed.Code
		case !r.Check.Allowed(security.OpWrite, security.Topic, name):
			codes[i] = kerr.TopicAuthorizationFailed.Code
		default:
			if _, exists := a.P.Topic(name); !exists && a.P.AutoCreateTopics() && !r.Check.ClusterOrEach(security.OpCreate, security.Topic, name) {
				codes[i] = kerr.UnknownTopicOrPartition.Code
				break
			}
			allowed[i] = true
			sub.Topics = append(sub.Topics, rt)
		}
	}
	var subResp *kmsg.ProduceResponse
	if !none(allowed) {
		subResp = a.P.Produce(ctx, &sub)
	}
	if req.Acks == 0 {
		return nil
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	var got []kmsg.ProduceResponseTopic
	if subResp != nil {
		got = subResp.Topics
		resp.ThrottleMillis = subResp.ThrottleMillis
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.ProduceResponseTopic {
		rt := req.Topics[i]
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, codes[i]
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		return st
	})
	return resp
}
