package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// classicStorm is a classic-protocol join storm: members join one fresh consumer group at once,
// each on its own connection (a broker handles one request per connection at a time and a
// JoinGroup waits for the rebalance, so members cannot share connections). Each member sends
// JoinGroup (v9: the first answer is MEMBER_ID_REQUIRED with its member id, then it rejoins
// with that id), the leader computes a round-robin assignment of the topic's partitions over
// the members it was given, and every member sends SyncGroup. A member that has its
// assignment heartbeats every o.ClassicHeartbeat and rejoins when a rebalance started.
// The storm ends when the group has settled (settle.go): every member has its SyncGroup
// response at one generation, owning a balanced share, every partition once, and DescribeGroups
// (on a connection of its own) shows the group Stable with every member and that split. Seconds
// is the time from the first JoinGroup until the describe confirmed it; requests are the
// JoinGroup, SyncGroup and Heartbeat requests it took. Bounded by o.Duration+o.WarmTimeout;
// afterwards the members leave (one LeaveGroup, untimed).
func classicStorm(ctx context.Context, o *Options, t Target, group, topic string, partitions int32, members int) Result {
	res := Result{Workload: WClassicStorm, Target: t.Name, Conns: members, Members: members, Partitions: partitions, UnitName: "members"}
	cs, err := dialAll(t.Addr, o.Client, members)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer closeAll(cs)
	dc, err := dial(t.Addr, ClientRaw)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer dc.close()
	var (
		ids      = make([]string, members)
		reqs     atomic.Int64
		fails    atomic.Int64
		firstErr atomic.Value
		start0   time.Time
	)
	meta := (&kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{topic}}).AppendTo(nil)
	bound := o.Duration + o.WarmTimeout
	sctx, stop := context.WithTimeout(ctx, bound)
	defer stop()
	var st *settler
	report := func(i int, gen int32, parts []int32) {
		st.update(func(tr *tracker) {
			tr.setEpoch(i, gen)
			tr.setParts(i, parts)
		})
	}
	fail := func(err error) {
		fails.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	var wg sync.WaitGroup
	start0 = time.Now()
	st = newSettler(newTracker(members, partitions), start0, stop, func(ctx context.Context, _ int32) (bool, string, error) {
		return classicGroupSettled(ctx, dc, group, members, partitions)
	})
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		st.run(sctx)
	}()
	for i := 0; i < members; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := cs[i]
			memberID := ""
			for sctx.Err() == nil {
				report(i, 0, nil)
				join := kmsg.NewPtrJoinGroupRequest()
				join.Group, join.MemberID, join.ProtocolType = group, memberID, "consumer"
				join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 45000, 60000
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "roundrobin", meta
				join.Protocols = append(join.Protocols, p)
				r, err := c.do(sctx, join)
				reqs.Add(1)
				if err != nil {
					if sctx.Err() == nil {
						fail(err)
					}
					continue
				}
				jr := r.(*kmsg.JoinGroupResponse)
				switch err := kerr.ErrorForCode(jr.ErrorCode); {
				case errors.Is(err, kerr.MemberIDRequired):
					memberID = jr.MemberID
					continue
				case errors.Is(err, kerr.UnknownMemberID):
					memberID = ""
					fail(err)
					continue
				case errors.Is(err, kerr.RebalanceInProgress):
					continue
				case err != nil:
					fail(err)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				memberID = jr.MemberID
				ids[i] = memberID
				sync := kmsg.NewPtrSyncGroupRequest()
				sync.Group, sync.Generation, sync.MemberID = group, jr.Generation, memberID
				sync.ProtocolType, sync.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("roundrobin")
				if jr.LeaderID == memberID {
					sync.GroupAssignment = roundRobin(jr.Members, topic, partitions)
				}
				r, err = c.do(sctx, sync)
				reqs.Add(1)
				if err != nil {
					if sctx.Err() == nil {
						fail(err)
					}
					continue
				}
				sr := r.(*kmsg.SyncGroupResponse)
				if err := kerr.ErrorForCode(sr.ErrorCode); err != nil {
					if errors.Is(err, kerr.UnknownMemberID) {
						memberID = ""
					}
					if !errors.Is(err, kerr.RebalanceInProgress) {
						fail(err)
					}
					continue
				}
				var a kmsg.ConsumerMemberAssignment
				if err := a.ReadFrom(sr.MemberAssignment); err != nil && len(sr.MemberAssignment) > 0 {
					fail(fmt.Errorf("member assignment: %w", err))
					continue
				}
				parts := []int32{}
				for _, at := range a.Topics {
					parts = append(parts, at.Partitions...)
				}
				report(i, jr.Generation, parts)
				// Stable: heartbeat until a rebalance starts (or the storm is over).
				for sctx.Err() == nil {
					select {
					case <-sctx.Done():
					case <-time.After(o.ClassicHeartbeat):
					}
					if sctx.Err() != nil {
						break
					}
					hb := kmsg.NewPtrHeartbeatRequest()
					hb.Group, hb.Generation, hb.MemberID = group, jr.Generation, memberID
					r, err := c.do(sctx, hb)
					reqs.Add(1)
					if err != nil {
						if sctx.Err() == nil {
							fail(err)
						}
						break
					}
					if err := kerr.ErrorForCode(r.(*kmsg.HeartbeatResponse).ErrorCode); err != nil {
						if errors.Is(err, kerr.UnknownMemberID) {
							memberID = ""
						}
						break // rejoin
					}
				}
			}
		}(i)
	}
	wg.Wait()
	stop()
	<-checked
	// Leave (untimed) so the members do not load the broker until their sessions expire.
	lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
	defer lcancel()
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group = group
	for _, id := range ids {
		if id != "" {
			lm := kmsg.NewLeaveGroupRequestMember()
			lm.MemberID = id
			leave.Members = append(leave.Members, lm)
		}
	}
	if len(leave.Members) > 0 {
		if lc, err := dial(t.Addr, ClientRaw); err == nil {
			_, _ = lc.do(lctx, leave)
			lc.close()
		}
	}
	r := Result{Workload: WClassicStorm, Target: t.Name, Conns: members, Members: members, Partitions: partitions,
		UnitName: "members", Requests: reqs.Load(), Errors: fails.Load()}
	if s, ok := firstErr.Load().(string); ok {
		r.Note = "first error: " + s
	}
	settled, why, checks := st.result()
	stormOutcome(&r, settled, bound, why, fmt.Sprintf("%d members, %d partitions, %d JoinGroup/SyncGroup/Heartbeat requests, %d DescribeGroups", members, partitions, r.Requests, checks))
	return r
}

// roundRobin is the leader's assignment: partitions 0..n-1 of topic dealt in turn to the
// members sorted by member id (the consumer protocol's "roundrobin" assignor on one topic).
func roundRobin(members []kmsg.JoinGroupResponseMember, topic string, partitions int32) []kmsg.SyncGroupRequestGroupAssignment {
	if len(members) == 0 {
		return nil
	}
	ids := make([]string, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.MemberID)
	}
	slices.Sort(ids)
	owned := make([][]int32, len(ids))
	for p := int32(0); p < partitions; p++ {
		owned[int(p)%len(ids)] = append(owned[int(p)%len(ids)], p)
	}
	out := make([]kmsg.SyncGroupRequestGroupAssignment, len(ids))
	for k, id := range ids {
		a := kmsg.ConsumerMemberAssignment{Version: 0}
		at := kmsg.NewConsumerMemberAssignmentTopic()
		at.Topic, at.Partitions = topic, owned[k]
		a.Topics = append(a.Topics, at)
		out[k] = kmsg.NewSyncGroupRequestGroupAssignment()
		out[k].MemberID, out[k].MemberAssignment = id, a.AppendTo(nil)
	}
	return out
}
