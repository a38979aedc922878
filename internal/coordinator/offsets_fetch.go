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

// MemberBound reports whether the fetch names a member (v9+): the group validates it, so it
// must be answered on the shard (FetchOffsets), not from a published OffsetsView.
func (fg *FetchGroup) MemberBound() bool { return fg.MemberID != nil || fg.MemberEpoch >= 0 }

// FetchOffsets reads committed offsets of one group on its shard (Kafka's
// OffsetMetadataManager.fetchOffsets and fetchAllOffsets): v9 member validation when a member
// id or epoch ≥ 0 is given, then FetchOffsetsFrom the current version; with RequireStable,
// UNSTABLE_OFFSET_COMMIT (offset -1) per partition with pending transactional offsets. It
// returns the v8+ group shape.
func FetchOffsets(fg FetchGroup) func(st *State, c *Call[*kmsg.OffsetFetchResponseGroup]) {
	return func(st *State, c *Call[*kmsg.OffsetFetchResponseGroup]) {
		if g, ok := st.Groups[fg.Group]; ok && fg.MemberBound() {
			id := ""
			if fg.MemberID != nil {
				id = *fg.MemberID
			}
			if err := g.ValidateOffsetFetch(st, id, fg.MemberEpoch); err != nil {
				out := kmsg.NewOffsetFetchResponseGroup()
				out.Group = fg.Group
				out.ErrorCode = ErrorCode(err)
				c.Reply(st, &out)
				return
			}
		}
		// The response is encoded after the shard moved on: it points into a frozen version.
		out := FetchOffsetsFrom(st.Offsets.Freeze(), fg)
		if fg.RequireStable && st.TxnOffsets.HasGroup(fg.Group) {
			for i := range out.Topics {
				t := &out.Topics[i]
				for j := range t.Partitions {
					p := &t.Partitions[j]
					if st.TxnOffsets.HasPartition(fg.Group, t.Topic, p.Partition) {
						p.ErrorCode = kerr.UnstableOffsetCommit.Code
						p.Offset, p.LeaderEpoch, p.Metadata = -1, -1, &noMetadata
					}
				}
			}
		}
		c.Reply(st, out)
	}
}

// noMetadata is the metadata of a partition without a committed offset ("", never written).
var noMetadata = ""

// FetchOffsetsFrom answers fg (member validation aside) from one version of the offsets: an
// unknown group answers all: nothing, listed: -1 per partition, no error. Every offset of a
// group comes in topic and partition order, as the version keeps them; the partitions' metadata
// points into the version (immutable), so a large answer costs one allocation per topic.
func FetchOffsetsFrom(v OffsetsView, fg FetchGroup) *kmsg.OffsetFetchResponseGroup {
	out := kmsg.NewOffsetFetchResponseGroup()
	out.Group = fg.Group
	g := v.group(fg.Group)
	if fg.Topics == nil {
		if g == nil {
			return &out
		}
		out.Topics = make([]kmsg.OffsetFetchResponseGroupTopic, 0, g.topics.Len())
		g.topics.Ascend(func(te *topicEntry) bool {
			// Fields set in place: copying whole partition structs (they hold pointers) into
			// the slice costs a write barrier per struct while the GC marks.
			parts := make([]kmsg.OffsetFetchResponseGroupTopicPartition, te.t.parts.Len())
			n := 0
			te.t.parts.Ascend(func(ov *offsetEntry) bool {
				rp := &parts[n]
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = ov.Partition, ov.Offset, ov.LeaderEpoch, &ov.Metadata
				n++
				return true
			})
			out.Topics = append(out.Topics, kmsg.OffsetFetchResponseGroupTopic{Topic: te.name, Partitions: parts[:n]})
			return true
		})
		return &out
	}
	out.Topics = make([]kmsg.OffsetFetchResponseGroupTopic, len(fg.Topics))
	for i, t := range fg.Topics {
		rt := &out.Topics[i]
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.OffsetFetchResponseGroupTopicPartition, len(t.Partitions))
		var to *topicOffsets
		if g != nil {
			if e, ok := g.topics.Get(t.Topic); ok {
				to = e.t
			}
		}
		for j, p := range t.Partitions {
			rp := &rt.Partitions[j]
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, -1, -1, &noMetadata
			if to == nil {
				continue
			}
			if ov := to.parts.ref(p); ov != nil {
				rp.Offset, rp.LeaderEpoch, rp.Metadata = ov.Offset, ov.LeaderEpoch, &ov.Metadata
			}
		}
	}
	return &out
}
