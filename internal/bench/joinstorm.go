package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinStorm is a KIP-848 join storm: members join one fresh group at once, multiplexed over
// conns connections (member i on connection i mod conns; each connection heartbeats its
// members in turn, back to back, reporting what they own), until the group has settled
// (settle.go): every member at one epoch owning a balanced share, every partition once, and
// ConsumerGroupDescribe (on a connection of its own) showing the group Stable at that epoch,
// which is also its target assignment epoch. Seconds is the time from the first join until the
// describe confirmed it; requests are the heartbeats it took; units are members. The case is
// bounded by o.Duration+o.WarmTimeout (not by o.MaxRequests); afterwards the members leave
// (epoch -1, untimed).
func joinStorm(ctx context.Context, o *Options, t Target, group, topic string, partitions int32, members, conns int) Result {
	res := Result{Workload: WJoinStorm, Target: t.Name, Conns: conns, Members: members, Partitions: partitions, UnitName: "members"}
	cs, err := dialAll(t.Addr, o.Client, conns)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer closeAll(cs)
	dc, err := dial(t.Addr, o.Client)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer dc.close()
	type member struct {
		id    string
		epoch int32
		owned []kmsg.ConsumerGroupHeartbeatRequestTopic
	}
	var (
		mem    = make([]member, members)
		cursor = make([]int, conns) // next member of each connection (owned by its goroutine)
	)
	for i := range mem {
		mem[i].id = "storm-" + strconv.Itoa(i) + "-" + group
	}
	bound := o.Duration + o.WarmTimeout
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	st := newSettler(newTracker(members, partitions), start, stop, func(ctx context.Context, epoch int32) (bool, string, error) {
		return consumerGroupSettled(ctx, dc, group, epoch, members, partitions)
	})
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		st.run(sctx)
	}()
	fn := func(ctx context.Context, w int, _ int64) (int64, error) {
		i := w + cursor[w]*conns
		if cursor[w]++; w+cursor[w]*conns >= members {
			cursor[w] = 0
		}
		m := &mem[i] // only connection w touches member i
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
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			m.epoch, m.owned = 0, nil
			st.update(func(tr *tracker) {
				tr.setEpoch(i, 0)
				tr.setParts(i, nil)
			})
			return 0, err
		}
		if resp.MemberID != nil && *resp.MemberID != "" {
			m.id = *resp.MemberID
		}
		m.epoch = resp.MemberEpoch
		var parts []int32
		if a := resp.Assignment; a != nil {
			m.owned = nil
			for _, tp := range a.Topics {
				rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
				rt.TopicID, rt.Partitions = tp.TopicID, append([]int32(nil), tp.Partitions...)
				m.owned = append(m.owned, rt)
				parts = append(parts, tp.Partitions...)
			}
			if parts == nil {
				parts = []int32{}
			}
		}
		st.update(func(tr *tracker) {
			tr.setEpoch(i, m.epoch)
			if parts != nil {
				tr.setParts(i, parts)
			}
		})
		return 1, nil
	}
	// Bounded by time only: a request bound could end the storm before the group settles
	// (Kafka's assignment interval alone defers the balanced target by a second).
	r := closedLoop(sctx, conns, bound, 0, fn)
	stop()
	<-checked
	r.Workload, r.Target, r.UnitName, r.Members, r.Partitions = WJoinStorm, t.Name, "members", members, partitions
	// Leave (untimed) so the members do not load the broker until their sessions expire.
	lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
	defer lcancel()
	var wg sync.WaitGroup
	for w := range cs {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < members && lctx.Err() == nil; i += conns {
				req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
				req.Group, req.MemberID, req.MemberEpoch = group, mem[i].id, -1
				_, _ = cs[w].do(lctx, req)
			}
		}(w)
	}
	wg.Wait()
	settled, why, checks := st.result()
	stormOutcome(&r, settled, bound, why, fmt.Sprintf("%d members over %d connections, %d partitions, %d heartbeats, %d ConsumerGroupDescribe", members, conns, partitions, r.Requests, checks))
	return r
}

// fillRatesKeep recomputes the rates of r after Seconds changed, keeping its latencies.
func fillRatesKeep(r *Result) {
	if r.Seconds > 0 {
		r.ReqPerSec = float64(r.Requests) / r.Seconds
		r.UnitsPerSec = float64(r.Units) / r.Seconds
	}
}

// stormOutcome completes a join storm's result: skipped with the reason when the group did not
// settle (settled == 0) within bound (why: what the broker's view lacked at the last check),
// else the settle time as Seconds and one unit per member (r.Members). what describes the case
// for the note.
func stormOutcome(r *Result, settled, bound time.Duration, why, what string) {
	if settled == 0 {
		r.Skipped = true
		if why != "" {
			why = "; last describe: " + why
		}
		r.Note = strings.TrimSuffix(fmt.Sprintf("did not settle within %v (%s, %d errors%s); %s", bound, what, r.Errors, why, r.Note), "; ")
		return
	}
	r.Seconds = settled.Seconds()
	r.Units = int64(r.Members)
	fillRatesKeep(r)
	r.Note = fmt.Sprintf("settled in %.1f ms (%s)", ms(settled), what)
}
