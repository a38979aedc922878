package bench

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeatOp drives KIP-848 ConsumerGroupHeartbeat: members consumers spread over groups
// groups (member i in group prefix-(i mod groups)), multiplexed over the connections (member i
// on connection i mod len(cs); each connection heartbeats its members in turn). A member's
// first call joins (member epoch 0), later calls heartbeat with the epoch the coordinator gave
// it. A response error makes the member rejoin on its next call (counted as a failure).
// members < len(cs) is raised to len(cs); groups is clamped to [1, members].
func heartbeatOp(cs []*conn, prefix, topic string, members, groups int) op {
	type member struct {
		group string
		id    string
		epoch int32
	}
	conns := len(cs)
	members = max(members, conns)
	groups = min(max(groups, 1), members)
	ms := make([]member, members)
	for i := range ms {
		ms[i].group = prefix + "-" + strconv.Itoa(i%groups)
		ms[i].id = "bench-member-" + strconv.Itoa(i) + "-" + prefix
	}
	cursor := make([]int, conns) // each entry is touched by its connection's goroutine only
	return func(ctx context.Context, w int, _ int64) (int64, error) {
		i := w + cursor[w]*conns
		if cursor[w]++; w+cursor[w]*conns >= members {
			cursor[w] = 0
		}
		m := &ms[i]
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
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
