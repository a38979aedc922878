package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinStorm is a KIP-848 join storm: conns members join one fresh group at once (one connection
// each) and heartbeat back to back, reporting what they own, until the group has converged:
// every member has a member epoch, all at the same epoch, and the members' assignments cover
// the topic's partitions exactly once. Seconds is the time to converge; requests are the
// heartbeats it took; units are members.
func joinStorm(ctx context.Context, o *Options, t Target, group, topic string, partitions int32, conns int) Result {
	res := Result{Workload: WJoinStorm, Target: t.Name, Conns: conns, UnitName: "members"}
	cs, err := dialAll(t.Addr, o.Client, conns)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer closeAll(cs)
	type member struct {
		id    string
		epoch int32
		owned []kmsg.ConsumerGroupHeartbeatRequestTopic
		count int
	}
	var (
		mu        sync.Mutex
		members   = make([]member, conns)
		converged time.Duration
	)
	for i := range members {
		members[i].id = "storm-" + strconv.Itoa(i) + "-" + group
	}
	bound := o.Duration + o.WarmTimeout
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	done := func() bool { // under mu
		total := 0
		for i := range members {
			m := &members[i]
			if m.epoch <= 0 || m.epoch != members[0].epoch {
				return false
			}
			total += m.count
		}
		return total == int(partitions)
	}
	fn := func(ctx context.Context, w int, _ int64) (int64, error) {
		mu.Lock()
		m := members[w]
		mu.Unlock()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, m.id, m.epoch
		req.RebalanceTimeoutMillis = 60000
		req.Topics = m.owned
		if req.Topics == nil {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		if m.epoch == 0 {
			req.SubscribedTopicNames = []string{topic}
		}
		r, err := cs[w].do(ctx, req)
		if err != nil {
			return 0, err
		}
		resp := r.(*kmsg.ConsumerGroupHeartbeatResponse)
		mu.Lock()
		defer mu.Unlock()
		mm := &members[w]
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			mm.epoch, mm.owned, mm.count = 0, nil, 0
			return 0, err
		}
		if resp.MemberID != nil && *resp.MemberID != "" {
			mm.id = *resp.MemberID
		}
		mm.epoch = resp.MemberEpoch
		if a := resp.Assignment; a != nil {
			mm.owned, mm.count = nil, 0
			for _, tp := range a.Topics {
				rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
				rt.TopicID, rt.Partitions = tp.TopicID, append([]int32(nil), tp.Partitions...)
				mm.owned = append(mm.owned, rt)
				mm.count += len(tp.Partitions)
			}
		}
		if converged == 0 && done() {
			converged = time.Since(start)
			stop()
		}
		return 1, nil
	}
	r := closedLoop(sctx, conns, bound, o.MaxRequests, fn)
	r.Workload, r.Target, r.UnitName = WJoinStorm, t.Name, "members"
	mu.Lock()
	defer mu.Unlock()
	if converged == 0 {
		r.Skipped = true
		r.Note = fmt.Sprintf("did not converge within %v (%d heartbeats, %d errors); %s", bound, r.Requests, r.Errors, r.Note)
		return r
	}
	r.Seconds = converged.Seconds()
	r.Units = int64(conns)
	fillRatesKeep(&r)
	r.Note = fmt.Sprintf("converged in %.1f ms (%d members, %d partitions, %d heartbeats)", ms(converged), conns, partitions, r.Requests)
	return r
}

// fillRatesKeep recomputes the rates of r after Seconds changed, keeping its latencies.
func fillRatesKeep(r *Result) {
	if r.Seconds > 0 {
		r.ReqPerSec = float64(r.Requests) / r.Seconds
		r.UnitsPerSec = float64(r.Units) / r.Seconds
	}
}
