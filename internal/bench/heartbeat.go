package bench

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeatOp drives KIP-848 ConsumerGroupHeartbeat: connection w is one member of group; its
// first call joins (member epoch 0), later calls heartbeat with the epoch the coordinator gave
// it. A response error makes the member rejoin on its next call (counted as a failure).
func heartbeatOp(cs []*conn, group, topic string) op {
	type member struct {
		id    string
		epoch int32
	}
	members := make([]member, len(cs))
	for i := range members {
		members[i].id = "bench-member-" + strconv.Itoa(i) + "-" + group
	}
	return func(ctx context.Context, w int, _ int64) (int64, error) {
		m := &members[w]
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, m.id, m.epoch
		req.RebalanceTimeoutMillis = 60000
		if m.epoch == 0 {
			req.SubscribedTopicNames = []string{topic}
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		r, err := cs[w].do(ctx, req)
		if err != nil {
			return 0, err
		}
		resp := r.(*kmsg.ConsumerGroupHeartbeatResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			m.epoch = 0
			return 0, err
		}
		if resp.MemberID != nil && *resp.MemberID != "" {
			m.id = *resp.MemberID
		}
		m.epoch = resp.MemberEpoch
		return 1, nil
	}
}
