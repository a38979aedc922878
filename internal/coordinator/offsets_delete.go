package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete handles OffsetDelete v0 (KIP-496; Kafka's OffsetMetadataManager.deleteOffsets). The
// wire handler first answers partitions of topics that do not exist with UNKNOWN_TOPIC_OR_PARTITION
// (KafkaApis); then: unknown group → GROUP_ID_NOT_FOUND; the group type's own check (classic
// non-Empty non-"consumer" → NON_EMPTY_GROUP); every partition of a topic the group is subscribed
// to → GROUP_SUBSCRIBED_TO_TOPIC and nothing deleted for that topic; other partitions get a
// tombstone when an offset exists, and NONE.
func OffsetDelete(req *kmsg.OffsetDeleteRequest) func(st *State, c *Call[*kmsg.OffsetDeleteResponse]) {
	return func(st *State, c *Call[*kmsg.OffsetDeleteResponse]) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		if req.Group == "" {
			resp.ErrorCode = kerr.InvalidGroupID.Code
			c.Reply(st, resp)
			return
		}
		g, ok := st.Groups[req.Group]
		if !ok {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
			c.Reply(st, resp)
			return
		}
		if err := g.ValidateOffsetDelete(); err != nil {
			resp.ErrorCode = ErrorCode(err)
			c.Reply(st, resp)
			return
		}
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			subscribed := g.IsSubscribedToTopic(t.Topic)
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition = p.Partition
				_, committed := st.Offsets.Get(req.Group, t.Topic, p.Partition)
				if subscribed {
					rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
				} else if committed || st.TxnOffsets.HasPartition(req.Group, t.Topic, p.Partition) {
					// A committed or pending offset: the tombstone removes the partition
					// from every open transaction too (KAFKA-14505).
					st.WriteOffsetTombstone(req.Group, t.Topic, p.Partition)
					st.deletePending(req.Group, t.Topic, p.Partition)
					st.Metrics.OffsetDeletions++
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.Reply(st, resp)
	}
}
