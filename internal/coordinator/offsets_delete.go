package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete handles OffsetDelete v0 (KIP-496, reference §1.9). The wire handler first answers
// partitions of topics that do not exist with UNKNOWN_TOPIC_OR_PARTITION (KafkaApis); then: unknown group →
// GROUP_ID_NOT_FOUND; the group type's own check (classic non-Empty non-"consumer" →
// NON_EMPTY_GROUP); every partition of a topic the group is subscribed to →
// GROUP_SUBSCRIBED_TO_TOPIC and nothing deleted for that topic; other partitions get a tombstone
// when an offset exists, and NONE.
func OffsetDelete(req *kmsg.OffsetDeleteRequest) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		if req.Group == "" {
			resp.ErrorCode = kerr.InvalidGroupID.Code
			st.Reply(c, resp)
			return
		}
		g, ok := st.Groups[req.Group]
		if !ok {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
			st.Reply(c, resp)
			return
		}
		if err := g.ValidateOffsetDelete(); err != nil {
			resp.ErrorCode = ErrorCode(err)
			st.Reply(c, resp)
			return
		}
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			subscribed := g.IsSubscribedToTopic(t.Topic)
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition = p.Partition
				if subscribed {
					rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
				} else if _, ok := st.Offsets.Get(req.Group, t.Topic, p.Partition); ok {
					st.WriteOffsetTombstone(req.Group, t.Topic, p.Partition)
					st.Metrics.OffsetDeletions++
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		st.Reply(c, resp)
	}
}

func init() {
	RegisterHandler(47, func(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.OffsetDeleteRequest)
		known, unknown := splitUnknownPartitions(s.Cfg.Topics, req.Topics,
			func(t kmsg.OffsetDeleteRequestTopic) (string, []kmsg.OffsetDeleteRequestTopicPartition) {
				return t.Topic, t.Partitions
			},
			func(p kmsg.OffsetDeleteRequestTopicPartition) int32 { return p.Partition },
			func(t kmsg.OffsetDeleteRequestTopic, ps []kmsg.OffsetDeleteRequestTopicPartition) kmsg.OffsetDeleteRequestTopic {
				t.Partitions = ps
				return t
			})
		sub := *req
		sub.Topics = known
		resp, err := s.do(ctx, req.Group, meta, OffsetDelete(&sub))
		out := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		if err != nil {
			out.ErrorCode = ErrorCode(err)
			return out
		}
		got := resp.(*kmsg.OffsetDeleteResponse)
		out.ErrorCode = got.ErrorCode
		if got.ErrorCode != 0 {
			return out
		}
		// Answer in request order: unknown partitions UNKNOWN_TOPIC_OR_PARTITION, the others
		// what the coordinator said.
		codes := map[topicPartition]int16{}
		for _, t := range got.Topics {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
			}
		}
		for tp := range unknown {
			codes[tp] = kerr.UnknownTopicOrPartition.Code
		}
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = codes[topicPartition{t.Topic, p.Partition}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			out.Topics = append(out.Topics, rt)
		}
		return out
	})
}
