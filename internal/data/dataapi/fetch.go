package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// Fetch authorizes Fetch: a follower fetch (replica id ≥ 0) needs CLUSTER CLUSTER_ACTION (else
// TOPIC_AUTHORIZATION_FAILED on every partition); a consumer needs TOPIC READ per topic (denied:
// TOPIC_AUTHORIZATION_FAILED per partition with watermarks −1 and no records). Topics named by
// an unknown ID (v13+) get UNKNOWN_TOPIC_ID before any check. Only authorized partitions wait
// for data; with none, the answer is immediate.
func (a Adapters) Fetch(ctx context.Context, r Req, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	if r.open() {
		return a.P.Fetch(ctx, req)
	}
	replica := req.ReplicaID
	if req.Version >= 15 {
		replica = req.ReplicaState.ID
	}
	follower := replica >= 0 && r.Check.Cluster(security.OpClusterAction)
	denyAll := replica >= 0 && !follower
	allowed := make([]bool, len(req.Topics))
	sub := *req
	sub.Topics = nil
	for i, rt := range req.Topics {
		name := rt.Topic
		if req.Version >= 13 {
			ti, ok := a.P.TopicByID(rt.TopicID)
			if !ok {
				allowed[i] = !denyAll
				if allowed[i] {
					sub.Topics = append(sub.Topics, rt)
				}
				continue
			}
			name = ti.Name
		}
		allowed[i] = follower || (!denyAll && r.Check.Allowed(security.OpRead, security.Topic, name))
		if allowed[i] {
			sub.Topics = append(sub.Topics, rt)
		}
	}
	if all(allowed) {
		return a.P.Fetch(ctx, req)
	}
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	var got []kmsg.FetchResponseTopic
	if !none(allowed) {
		sr := a.P.Fetch(ctx, &sub)
		if sr.ErrorCode != 0 {
			return sr
		}
		got = sr.Topics
		resp.ThrottleMillis, resp.SessionID = sr.ThrottleMillis, sr.SessionID
	}
	resp.Topics = merge(allowed, got, func(i int) kmsg.FetchResponseTopic {
		rt := req.Topics[i]
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		return st
	})
	return resp
}
