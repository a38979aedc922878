package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FetchGroup is one group of an OffsetFetch: Topics nil means every committed offset (Kafka's
// OffsetMetadataManager.fetchAllOffsets: a group's offsets are readable without joining it, in
// every state).
type FetchGroup struct {
	Group       string
	MemberID    *string
	MemberEpoch int32
	Topics      []kmsg.OffsetFetchRequestGroupTopic // nil = all
	// RequireStable (v7+, KIP-447): a partition with pending transactional offsets answers
	// UNSTABLE_OFFSET_COMMIT instead of its committed offset.
	RequireStable bool
}

// FetchOffsets reads committed offsets of one group (Kafka's OffsetMetadataManager.fetchOffsets and
// fetchAllOffsets): unknown group → all: empty, listed: -1 per partition, no error; v9 member
// validation when a member id or epoch ≥ 0 is given; with RequireStable, UNSTABLE_OFFSET_COMMIT
// (offset -1) per partition with pending transactional offsets. It returns the v8+ group shape.
func FetchOffsets(fg FetchGroup) func(st *State, c *Call[*kmsg.OffsetFetchResponseGroup]) {
	return func(st *State, c *Call[*kmsg.OffsetFetchResponseGroup]) {
		out := kmsg.NewOffsetFetchResponseGroup()
		out.Group = fg.Group
		g, ok := st.Groups[fg.Group]
		if ok && (fg.MemberID != nil || fg.MemberEpoch >= 0) {
			id := ""
			if fg.MemberID != nil {
				id = *fg.MemberID
			}
			if err := g.ValidateOffsetFetch(st, id, fg.MemberEpoch); err != nil {
				out.ErrorCode = ErrorCode(err)
				c.Reply(st, &out)
				return
			}
		}
		partition := func(topic string, p int32) kmsg.OffsetFetchResponseGroupTopicPartition {
			rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			rp.Partition = p
			rp.Offset, rp.LeaderEpoch = -1, -1
			md := ""
			rp.Metadata = &md
			if fg.RequireStable && st.TxnOffsets.HasPartition(fg.Group, topic, p) {
				rp.ErrorCode = kerr.UnstableOffsetCommit.Code
				return rp
			}
			if v, ok := st.Offsets.Get(fg.Group, topic, p); ok {
				rp.Offset, rp.LeaderEpoch = v.Offset, v.LeaderEpoch
				m := v.Metadata
				rp.Metadata = &m
			}
			return rp
		}
		if fg.Topics == nil {
			for _, t := range st.Offsets.Topics(fg.Group) {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t
				for _, p := range st.Offsets.Partitions(fg.Group, t) {
					rt.Partitions = append(rt.Partitions, partition(t, p))
				}
				out.Topics = append(out.Topics, rt)
			}
		} else {
			for _, t := range fg.Topics {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rt.Partitions = append(rt.Partitions, partition(t.Topic, p))
				}
				out.Topics = append(out.Topics, rt)
			}
		}
		c.Reply(st, &out)
	}
}
