package coordtest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// Share group commands of the scenario scripts (KIP-932):
//
//	share-heartbeat group=g member=m epoch=N|current [subscribe=t1,t2] [rack=r] [interval=show]
//	share-describe group=g
//	log topic=t partition=0 hw=10 [start=0]     set a partition log's high watermark and log start
//	share-fetch group=g member=m partitions=t:0,1 [max=500] [start=t:0=5]
//	share-ack group=g member=m acks=t:0=0-4:accept,t:0=5-6:release+reject [fetch=t:0]
//	share-release group=g member=m partitions=t:0 [undo=true]
//	share-unacquire group=g member=m ranges=t:0=3-4
//	share-state group=g topic=t partition=0   the share-partition's SPSO and in-flight window
//	share-offsets group=g [topics=t:0,1]      DescribeShareGroupOffsets
//	share-alter group=g offsets=t:0=5,t:1=7    AlterShareGroupOffsets
//	share-delete-offsets group=g topics=t      DeleteShareGroupOffsets
//	share-watch group=g [wait=1s]             a parked long-poll (answered on a wake-up)
//
// Acknowledge types: accept, release, reject, gap, renew; one per batch or one per offset
// (joined by +).

type shareLog struct{ start, hw int64 }

func (s *script) shareCommand(b *strings.Builder, a args, cmd string) bool {
	switch cmd {
	case "share-heartbeat":
		s.shareHeartbeat(b, a)
	case "share-describe":
		for _, g := range Do(s.h, coordinator.ShareGroupDescribe([]string{a.str("group")})).Resp {
			fmt.Fprintf(b, "group %s: %s %s epoch=%d assignment-epoch=%d assignor=%s\n", g.GroupID, errName(g.ErrorCode), g.GroupState, g.GroupEpoch, g.AssignmentEpoch, g.Assignor)
			ms := append([]kmsg.ShareGroupDescribeResponseGroupMember(nil), g.Members...)
			sort.Slice(ms, func(i, j int) bool { return ms[i].MemberID < ms[j].MemberID })
			for _, m := range ms {
				var parts []string
				for _, t := range m.Assignment.TopicPartitions {
					parts = append(parts, t.Topic+":"+ints(t.Partitions))
				}
				sort.Strings(parts)
				fmt.Fprintf(b, "  member %s epoch=%d subscribed=%s assigned=%s\n", m.MemberID, m.MemberEpoch, strings.Join(m.SubscribedTopicNames, ","), orStr(strings.Join(parts, ";"), "none"))
			}
		}
	case "log":
		if s.logs == nil {
			s.logs = map[string]shareLog{}
		}
		k := a.str("topic") + ":" + strconv.Itoa(a.int("partition", 0))
		l := s.logs[k]
		l.hw = int64(a.int("hw", int(l.hw)))
		l.start = int64(a.int("start", int(l.start)))
		s.logs[k] = l
		b.WriteString("ok\n")
	case "share-fetch":
		req := &coordinator.ShareRequest{Group: a.str("group"), Member: a.str("member"), MaxRecords: a.int("max", 500)}
		starts := map[string]int64{}
		for _, spec := range a.list("start") {
			tp, off, _ := strings.Cut(spec, "=")
			n, _ := strconv.ParseInt(off, 10, 64)
			starts[tp] = n
		}
		for _, tp := range a.partitions("partitions") {
			for _, p := range tp.parts {
				req.Fetch = append(req.Fetch, s.fetchPartition(tp.topic, p, starts))
			}
		}
		s.showShare(b, "share-fetch "+req.Member, Do(s.h, coordinator.Share(req)))
	case "share-ack":
		req := &coordinator.ShareRequest{Group: a.str("group"), Member: a.str("member"), MaxRecords: a.int("max", 500)}
		req.Acks = s.shareAcks(a)
		for _, tp := range a.partitions("fetch") {
			for _, p := range tp.parts {
				req.Fetch = append(req.Fetch, s.fetchPartition(tp.topic, p, nil))
			}
		}
		s.showShare(b, "share-ack "+req.Member, Do(s.h, coordinator.Share(req)))
	case "share-release":
		req := &coordinator.ShareRequest{Group: a.str("group"), Member: a.str("member"), UndoDelivery: a.strOr("undo", "") == "true"}
		for _, tp := range a.partitions("partitions") {
			for _, p := range tp.parts {
				req.Release = append(req.Release, coordinator.SharePartitionID{TopicID: s.h.Topics.ID(tp.topic), Partition: p})
			}
		}
		s.showShare(b, "share-release "+req.Member, Do(s.h, coordinator.Share(req)))
	case "share-unacquire":
		req := &coordinator.ShareRequest{Group: a.str("group"), Member: a.str("member")}
		for _, spec := range a.list("ranges") {
			tp, rng, _ := strings.Cut(spec, "=")
			topic, ps, _ := strings.Cut(tp, ":")
			p, _ := strconv.Atoi(ps)
			f, l := parseRange(rng)
			req.Unacquire = append(req.Unacquire, coordinator.ShareAcquired{SharePartitionID: coordinator.SharePartitionID{TopicID: s.h.Topics.ID(topic), Partition: int32(p)},
				Ranges: []coordinator.ShareRange{{First: f, Last: l}}})
		}
		s.showShare(b, "share-unacquire "+req.Member, Do(s.h, coordinator.Share(req)))
	case "share-state":
		start, runs, ok := coordinator.SharePartitionView(s.h.St, a.str("group"), s.h.Topics.ID(a.str("topic")), int32(a.int("partition", 0)))
		if !ok {
			b.WriteString("no state\n")
			break
		}
		fmt.Fprintf(b, "spso=%d", start)
		for _, r := range runs {
			fmt.Fprintf(b, " %d-%d:%s", r.First, r.Last, r.State)
			if r.Count > 0 {
				fmt.Fprintf(b, "x%d", r.Count)
			}
			if r.Member != "" {
				fmt.Fprintf(b, "(%s)", r.Member)
			}
		}
		b.WriteString("\n")
	case "share-offsets":
		q := coordinator.ShareOffsetsQuery{Group: a.str("group")}
		if a.has("topics") {
			q.Topics = map[string][]int32{}
			for _, tp := range a.partitions("topics") {
				q.Order = append(q.Order, tp.topic)
				q.Topics[tp.topic] = tp.parts
			}
		}
		for _, g := range Do(s.h, coordinator.DescribeShareGroupOffsets([]coordinator.ShareOffsetsQuery{q})).Resp {
			fmt.Fprintf(b, "share-offsets %s: %s", g.Group, errOf(g.Err))
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					fmt.Fprintf(b, " %s:%d=%d", t.Topic, p.Partition, p.StartOffset)
					if p.Terminal > 0 {
						fmt.Fprintf(b, "(+%d done)", p.Terminal)
					}
					if p.Err != nil {
						fmt.Fprintf(b, "(%s)", errOf(p.Err))
					}
				}
			}
			b.WriteString("\n")
		}
	case "share-alter":
		var topics []coordinator.ShareOffsetsTopicChange
		idx := map[string]int{}
		for _, spec := range a.list("offsets") {
			tp, off, _ := strings.Cut(spec, "=")
			topic, ps, _ := strings.Cut(tp, ":")
			p, _ := strconv.Atoi(ps)
			o, _ := strconv.ParseInt(off, 10, 64)
			i, ok := idx[topic]
			if !ok {
				i = len(topics)
				idx[topic] = i
				topics = append(topics, coordinator.ShareOffsetsTopicChange{Topic: topic})
			}
			topics[i].Partitions = append(topics[i].Partitions, coordinator.ShareOffsetsChange{Partition: int32(p), StartOffset: o})
		}
		r := Do(s.h, coordinator.AlterShareGroupOffsets(a.str("group"), topics))
		fmt.Fprintf(b, "share-alter: %s", errOf(r.Err))
		for _, t := range r.Resp {
			for _, p := range t.Partitions {
				fmt.Fprintf(b, " %s:%d=%s", t.Topic, p.Partition, errOf(p.Err))
			}
		}
		b.WriteString("\n")
	case "share-delete-offsets":
		r := Do(s.h, coordinator.DeleteShareGroupOffsets(a.str("group"), a.list("topics")))
		fmt.Fprintf(b, "share-delete-offsets: %s", errOf(r.Err))
		for _, t := range r.Resp {
			fmt.Fprintf(b, " %s=%s", t.Topic, errOf(t.Err))
		}
		b.WriteString("\n")
	case "share-watch":
		r := Do(s.h, coordinator.ShareWatch(a.str("group"), s.wakeSeq, a.dur("wait", time.Second)))
		if r.Done() {
			b.WriteString("share-watch: woken\n")
			break
		}
		b.WriteString("share-watch: waiting\n")
		s.pending = append(s.pending, pendingCall{what: "share-watch", done: r.Done, show: func() string { return "share-watch: woken" }})
	default:
		return false
	}
	return true
}

func (s *script) fetchPartition(topic string, p int32, starts map[string]int64) coordinator.ShareFetchPartition {
	k := topic + ":" + strconv.Itoa(int(p))
	l := s.logs[k]
	start := int64(-1)
	if v, ok := starts[k]; ok {
		start = v
	}
	return coordinator.ShareFetchPartition{SharePartitionID: coordinator.SharePartitionID{TopicID: s.h.Topics.ID(topic), Partition: p},
		LogStart: l.start, HighWatermark: l.hw, StartOffset: start}
}

var ackTypes = map[string]int8{"gap": coordinator.AckGap, "accept": coordinator.AckAccept, "release": coordinator.AckRelease,
	"reject": coordinator.AckReject, "renew": coordinator.AckRenew}

// shareAcks parses acks=t:0=0-4:accept,t:0=5-6:release+reject.
func (s *script) shareAcks(a args) []coordinator.ShareAckPartition {
	var out []coordinator.ShareAckPartition
	idx := map[coordinator.SharePartitionID]int{}
	for _, spec := range a.list("acks") {
		tp, rest, _ := strings.Cut(spec, "=")
		rng, types, _ := strings.Cut(rest, ":")
		topic, ps, _ := strings.Cut(tp, ":")
		p, _ := strconv.Atoi(ps)
		id := coordinator.SharePartitionID{TopicID: s.h.Topics.ID(topic), Partition: int32(p)}
		f, l := parseRange(rng)
		batch := coordinator.ShareAckBatch{First: f, Last: l}
		for _, t := range strings.Split(types, "+") {
			batch.Types = append(batch.Types, ackTypes[t])
		}
		i, ok := idx[id]
		if !ok {
			i = len(out)
			idx[id] = i
			out = append(out, coordinator.ShareAckPartition{SharePartitionID: id})
		}
		out[i].Batches = append(out[i].Batches, batch)
	}
	return out
}

func parseRange(r string) (int64, int64) {
	f, l, ok := strings.Cut(r, "-")
	a, _ := strconv.ParseInt(f, 10, 64)
	if !ok {
		return a, a
	}
	b, _ := strconv.ParseInt(l, 10, 64)
	return a, b
}

func (s *script) showShare(b *strings.Builder, what string, r *Result[*coordinator.ShareResult]) {
	if r.Err != nil {
		fmt.Fprintf(b, "%s: %s\n", what, errOf(r.Err))
		return
	}
	res := r.Resp
	s.wakeSeq = res.WakeSeq
	fmt.Fprintf(b, "%s:", what)
	topic := func(id [16]byte) string {
		n, _ := s.h.Topics.Image().TopicName(id)
		return n
	}
	for _, ack := range res.Acks {
		fmt.Fprintf(b, " ack %s:%d=%s", topic(ack.TopicID), ack.Partition, errOf(ack.Err))
	}
	for _, acq := range res.Acquired {
		var rs []string
		for _, x := range acq.Ranges {
			rs = append(rs, fmt.Sprintf("%d-%dx%d", x.First, x.Last, x.DeliveryCount))
		}
		fmt.Fprintf(b, " acquired %s:%d=%s", topic(acq.TopicID), acq.Partition, strings.Join(rs, ","))
	}
	for _, n := range res.NeedStart {
		fmt.Fprintf(b, " need-start %s:%d@%d", topic(n.TopicID), n.Partition, n.Timestamp)
	}
	if len(res.Acks) == 0 && len(res.Acquired) == 0 && len(res.NeedStart) == 0 {
		b.WriteString(" nothing")
	}
	b.WriteString("\n")
}

func (s *script) shareHeartbeat(b *strings.Builder, a args) {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	name := a.str("member")
	req.GroupID, req.MemberID, req.MemberEpoch = a.str("group"), name, s.epoch(a, a.str("group")+"/"+name)
	if a.has("subscribe") {
		req.SubscribedTopicNames = a.list("subscribe")
	}
	req.RackID = a.opt("rack")
	r := DoMeta(s.h, meta(req.Version, a), coordinator.ShareGroupHeartbeat(req)).Resp
	if r.ErrorCode == 0 {
		s.epochs[req.GroupID+"/"+name] = r.MemberEpoch
	}
	fmt.Fprintf(b, "share-heartbeat %s: %s epoch=%d", name, errName(r.ErrorCode), r.MemberEpoch)
	if a.strOr("interval", "") == "show" {
		fmt.Fprintf(b, " interval=%s", time.Duration(r.HeartbeatIntervalMillis)*time.Millisecond)
	}
	if r.ErrorMessage != nil {
		fmt.Fprintf(b, " message=%q", *r.ErrorMessage)
	}
	if r.Assignment != nil {
		var parts []string
		for _, t := range r.Assignment.TopicPartitions {
			n, _ := s.h.Topics.Image().TopicName(t.TopicID)
			parts = append(parts, n+":"+ints(t.Partitions))
		}
		sort.Strings(parts)
		fmt.Fprintf(b, " assignment=%s", orStr(strings.Join(parts, ";"), "none"))
	}
	b.WriteString("\n")
}

// shareRecord renders share group records on one line.
func (s *script) shareRecord(typ int16, name string, r coordinator.Record) (string, bool) {
	k := coordinator.Dec{B: r.Key[2:]}
	v := coordinator.Dec{B: r.Value}
	v.Int16()
	switch typ {
	case coordinator.RecSharePartitionState:
		g, id, p := k.String(), k.UUID(), k.Int32()
		topic, _ := s.h.Topics.Image().TopicName(id)
		out := fmt.Sprintf("%s %s/%s/%d", name, g, topic, p)
		if r.Value == nil {
			return out + " tombstone", true
		}
		epoch, start, n := v.Int32(), v.Int64(), v.Int32()
		out += fmt.Sprintf(" state-epoch=%d spso=%d", epoch, start)
		states := map[int8]string{0: "available", 2: "acknowledged", 4: "archived"}
		for i := int32(0); i < n && v.Err() == nil; i++ {
			f, l, st, c := v.Int64(), v.Int64(), v.Int8(), v.Int16()
			out += fmt.Sprintf(" %d-%d:%sx%d", f, l, states[st], c)
		}
		return out, true
	case coordinator.RecShareGroupMetadata, coordinator.RecShareGroupTargetMetadata:
		out := name + " " + k.String()
		if r.Value == nil {
			return out + " tombstone", true
		}
		return out + fmt.Sprintf(" epoch=%d", v.Int32()), true
	case coordinator.RecShareGroupCurrentMember:
		out := name + " " + k.String() + "/" + k.String()
		if r.Value == nil {
			return out + " tombstone", true
		}
		return out + fmt.Sprintf(" epoch=%d previous=%d", v.Int32(), v.Int32()), true
	}
	return "", false
}
