package coordtest

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

// shareRun is the share workload's view of the world: the partition logs its fetches see and
// what each member acquired.
type shareRun struct {
	logs map[coordinator.SharePartitionID]*shareLog
	held map[string][]coordinator.ShareAcquired // group/member → acquired ranges
}

func (r *randomRun) shareState() *shareRun {
	if r.share == nil {
		r.share = &shareRun{logs: map[coordinator.SharePartitionID]*shareLog{}, held: map[string][]coordinator.ShareAcquired{}}
	}
	return r.share
}

// shareOp is one random operation of the share workload.
func (r *randomRun) shareOp() string {
	s := r.shareState()
	g, m := r.pick(randomGroups), r.pick(randomMembers)
	key := g + "/" + m
	member := "sh-" + m
	switch k := r.rnd.Intn(14); {
	case k < 3:
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID = g, member
		epoch, joined := r.epochs[key]
		what := "share heartbeat " + key
		if !joined || k == 0 {
			req.MemberEpoch, epoch = 0, 0
			req.SubscribedTopicNames = []string{"t1", "t2"}
			if r.rnd.Intn(3) == 0 {
				req.SubscribedTopicNames = []string{"t1"}
			}
			what = "share join " + key
		} else {
			req.MemberEpoch = epoch
		}
		resp := Do(r.h, coordinator.ShareGroupHeartbeat(req)).Resp
		if resp.ErrorCode != 0 {
			delete(r.epochs, key)
			return what
		}
		r.epochs[key] = resp.MemberEpoch
		return what
	case k == 3:
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch = g, member, -1
		Do(r.h, coordinator.ShareGroupHeartbeat(req))
		delete(r.epochs, key)
		delete(s.held, key)
		return "share leave " + key
	case k < 7:
		// The logs grow, sometimes lose their head (retention).
		req := &coordinator.ShareRequest{Group: g, Member: member, MaxRecords: 1 + r.rnd.Intn(20)}
		for _, topic := range []string{"t1", "t2"} {
			_, n, ok := r.h.Topics.Image().TopicID(topic)
			if !ok {
				continue
			}
			for p := int32(0); p < n; p++ {
				id := coordinator.SharePartitionID{TopicID: r.h.Topics.ID(topic), Partition: p}
				l := s.logs[id]
				if l == nil {
					l = &shareLog{}
					s.logs[id] = l
				}
				l.hw += int64(r.rnd.Intn(8))
				if r.rnd.Intn(20) == 0 {
					l.start = l.hw - int64(r.rnd.Intn(int(l.hw-l.start)+1))
				}
				fp := coordinator.ShareFetchPartition{SharePartitionID: id, LogStart: l.start, HighWatermark: l.hw, StartOffset: -1}
				if r.rnd.Intn(2) == 0 {
					fp.StartOffset = l.start
				}
				req.Fetch = append(req.Fetch, fp)
			}
		}
		res := Do(r.h, coordinator.Share(req))
		if res.Err == nil {
			s.held[key] = append(s.held[key], res.Resp.Acquired...)
		}
		return "share fetch " + key
	case k < 10:
		held := s.held[key]
		if len(held) == 0 {
			return "share ack (nothing held) " + key
		}
		a := held[r.rnd.Intn(len(held))]
		rg := a.Ranges[r.rnd.Intn(len(a.Ranges))]
		first := rg.First + int64(r.rnd.Intn(int(rg.Last-rg.First)+1))
		last := first + int64(r.rnd.Intn(int(rg.Last-first)+1))
		b := coordinator.ShareAckBatch{First: first, Last: last}
		if r.rnd.Intn(3) == 0 {
			for o := first; o <= last; o++ {
				b.Types = append(b.Types, int8(r.rnd.Intn(5)))
			}
		} else {
			b.Types = []int8{int8(r.rnd.Intn(5))}
		}
		req := &coordinator.ShareRequest{Group: g, Member: member,
			Acks: []coordinator.ShareAckPartition{{SharePartitionID: a.SharePartitionID, Batches: []coordinator.ShareAckBatch{b}}}}
		Do(r.h, coordinator.Share(req))
		return fmt.Sprintf("share ack %s %d-%d %v", key, first, last, b.Types)
	case k == 10:
		req := &coordinator.ShareRequest{Group: g, Member: member, UndoDelivery: r.rnd.Intn(2) == 0}
		for _, a := range s.held[key] {
			req.Release = append(req.Release, a.SharePartitionID)
		}
		Do(r.h, coordinator.Share(req))
		delete(s.held, key)
		return "share release " + key
	case k == 11:
		if r.rnd.Intn(2) == 0 {
			Do(r.h, coordinator.DeleteShareGroupOffsets(g, []string{"t1"}))
			return "share delete offsets " + g
		}
		off := int64(r.rnd.Intn(50))
		Do(r.h, coordinator.AlterShareGroupOffsets(g, []coordinator.ShareOffsetsTopicChange{{Topic: "t1",
			Partitions: []coordinator.ShareOffsetsChange{{Partition: 0, StartOffset: off}}}}))
		return "share alter offsets " + g + " " + strconv.FormatInt(off, 10)
	case k == 12:
		return r.shareConfigChange(g)
	default:
		Do(r.h, coordinator.ShareWatch(g, 0, 0))
		return "share describe " + g
	}
}

// shareConfigChange sets a random share.* config of group g.
func (r *randomRun) shareConfigChange(g string) string {
	vals := map[string][]string{
		coordinator.GroupShareRecordLockDurationMs: {"15000", "30000"},
		coordinator.GroupShareDeliveryCountLimit:   {"2", "3", "5"},
		coordinator.GroupShareAutoOffsetReset:      {"earliest", "latest", "by_duration:PT1M"},
		coordinator.GroupShareSessionTimeoutMs:     {"45000", "60000"},
	}
	keys := []string{coordinator.GroupShareRecordLockDurationMs, coordinator.GroupShareDeliveryCountLimit,
		coordinator.GroupShareAutoOffsetReset, coordinator.GroupShareSessionTimeoutMs}
	k := r.pick(keys)
	cfg := map[string]string{}
	for key, v := range r.gconfigs[g] {
		cfg[key] = v
	}
	cfg[k] = r.pick(vals[k])
	r.gconfigs[g] = cfg
	all := map[string]coordinator.GroupOverrides{}
	for id, c := range r.gconfigs {
		if len(c) > 0 {
			all[id] = coordinator.GroupOverridesFrom(scriptGroupValues{cfg: config.NewGroupConfig(c), values: r.values})
		}
	}
	r.h.GroupConfigs = coordinator.NewGroupConfigs(r.h.GroupConfigs.Version()+1, all)
	return "share group config " + g + " " + k + "=" + cfg[k]
}
