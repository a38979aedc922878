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
// members in turn, back to back, reporting what they own), until the group has converged:
// every member has a member epoch, all at the same epoch, and the members' assignments cover
// the topic's partitions exactly once. Seconds is the time from the first join to convergence;
// requests are the heartbeats it took; units are members. The case is bounded by
// o.Duration+o.WarmTimeout; afterwards the members leave (epoch -1, untimed).
func joinStorm(ctx context.Context, o *Options, t Target, group, topic string, partitions int32, members, conns int) Result {
	res := Result{Workload: WJoinStorm, Target: t.Name, Conns: conns, Members: members, Partitions: partitions, UnitName: "members"}
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
	}
	var (
		mu        sync.Mutex
		tr        = newTracker(members, partitions)
		mem       = make([]member, members)
		cursor    = make([]int, conns) // next member of each connection (owned by its goroutine)
		converged time.Duration
	)
	for i := range mem {
		mem[i].id = "storm-" + strconv.Itoa(i) + "-" + group
	}
	bound := o.Duration + o.WarmTimeout
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
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
			mu.Lock()
			tr.setEpoch(i, 0)
			tr.setParts(i, nil)
			mu.Unlock()
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
		mu.Lock()
		defer mu.Unlock()
		tr.setEpoch(i, m.epoch)
		if parts != nil {
			tr.setParts(i, parts)
		}
		if converged == 0 && tr.converged() {
			converged = time.Since(start)
			stop()
		}
		return 1, nil
	}
	r := closedLoop(sctx, conns, bound, o.MaxRequests, fn)
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
	mu.Lock()
	defer mu.Unlock()
	stormOutcome(&r, converged, bound, fmt.Sprintf("%d members over %d connections, %d partitions, %d heartbeats", members, conns, partitions, r.Requests))
	return r
}

// fillRatesKeep recomputes the rates of r after Seconds changed, keeping its latencies.
func fillRatesKeep(r *Result) {
	if r.Seconds > 0 {
		r.ReqPerSec = float64(r.Requests) / r.Seconds
		r.UnitsPerSec = float64(r.Units) / r.Seconds
	}
}

// stormOutcome completes a join storm's result: skipped with the reason when it did not converge
// (converged == 0) within bound, else the convergence time as Seconds and one unit per member
// (r.Members). what describes the case for the note.
func stormOutcome(r *Result, converged, bound time.Duration, what string) {
	if converged == 0 {
		r.Skipped = true
		r.Note = strings.TrimSuffix(fmt.Sprintf("did not converge within %v (%s, %d errors); %s", bound, what, r.Errors, r.Note), "; ")
		return
	}
	r.Seconds = converged.Seconds()
	r.Units = int64(r.Members)
	fillRatesKeep(r)
	r.Note = fmt.Sprintf("converged in %.1f ms (%s)", ms(converged), what)
}
