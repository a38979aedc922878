package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// CreatePartitions authorizes CreatePartitions: TOPIC ALTER per topic, before existence
// (denied: TOPIC_AUTHORIZATION_FAILED). Names given twice go to the plane (INVALID_REQUEST).
func (a Adapters) CreatePartitions(ctx context.Context, r Req, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	if r.open() {
		return a.P.CreatePartitions(ctx, req)
	}
	count := map[string]int{}
	for _, rt := range req.Topics {
		count[rt.Topic]++
	}
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		if allowed[i] = count[rt.Topic] > 1 || r.Check.Allowed(security.OpAlter, security.Topic, rt.Topic); allowed[i] {
			sub.Topics = append(sub.Topics, rt)
		}
	}
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	var got []kmsg.CreatePartitionsResponseTopic
	if !none(allowed) {
		got = a.P.CreatePartitions(ctx, &sub).Topics
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.CreatePartitionsResponseTopic {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = req.Topics[i].Topic
		st.ErrorCode, st.ErrorMessage = kerr.TopicAuthorizationFailed.Code, str(security.DeniedMessage(security.Topic, st.Topic))
		return st
	})
	return resp
}
