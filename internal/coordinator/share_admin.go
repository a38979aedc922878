package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// The share group offset admin APIs (KIP-932): DescribeShareGroupOffsets,
// AlterShareGroupOffsets and DeleteShareGroupOffsets, over the share-partition states the
// group's shard keeps.

// ShareOffsetsPartition is one partition of a DescribeShareGroupOffsets answer: its SPSO (-1 when
// the share-partition was never initialized) and how many records past it are already
// ACKNOWLEDGED or ARCHIVED (the adapter computes the lag from the high watermark).
type ShareOffsetsPartition struct {
	Partition   int32
	StartOffset int64
	Terminal    int64
	Err         error
}

// ShareOffsetsTopic is one topic of a DescribeShareGroupOffsets answer.
type ShareOffsetsTopic struct {
	Topic      string
	TopicID    [16]byte
	Partitions []ShareOffsetsPartition
}

// ShareOffsetsGroup is one group of a DescribeShareGroupOffsets answer.
type ShareOffsetsGroup struct {
	Group  string
	Err    error
	Topics []ShareOffsetsTopic
}

// ShareOffsetsQuery names the partitions of a group to describe; Topics nil means every
// share-partition the group has.
type ShareOffsetsQuery struct {
	Group  string
	Topics map[string][]int32
	Order  []string // topic names in request order
}

// DescribeShareGroupOffsets describes the share-partitions of share groups of one shard (Kafka's
// GroupCoordinatorShard.describeShareGroupOffsets): an unknown group or a group of another type is
// GROUP_ID_NOT_FOUND; an unknown topic UNKNOWN_TOPIC_OR_PARTITION per partition; a partition
// without state has start offset -1.
func DescribeShareGroupOffsets(qs []ShareOffsetsQuery) func(st *State, c *Call[[]ShareOffsetsGroup]) {
	return func(st *State, c *Call[[]ShareOffsetsGroup]) {
		out := make([]ShareOffsetsGroup, 0, len(qs))
		for _, q := range qs {
			out = append(out, describeShareOffsets(st, q))
		}
		c.Reply(st, out)
	}
}

func describeShareOffsets(st *State, q ShareOffsetsQuery) ShareOffsetsGroup {
	res := ShareOffsetsGroup{Group: q.Group}
	g, err := st.shareGroup(q.Group)
	if err != nil {
		res.Err = err
		return res
	}
	part := func(sp *SharePartition, p int32) ShareOffsetsPartition {
		if sp == nil {
			return ShareOffsetsPartition{Partition: p, StartOffset: -1}
		}
		_, _, terminal := sp.InFlight()
		return ShareOffsetsPartition{Partition: p, StartOffset: sp.start, Terminal: int64(terminal)}
	}
	if q.Topics == nil {
		var cur *ShareOffsetsTopic
		for _, k := range g.sortedParts() {
			name, ok := st.Image.TopicName(k.topic)
			if st.Image != nil && !ok {
				continue // the topic is gone; its state goes at the next heartbeat
			}
			if cur == nil || cur.TopicID != k.topic {
				res.Topics = append(res.Topics, ShareOffsetsTopic{Topic: name, TopicID: k.topic})
				cur = &res.Topics[len(res.Topics)-1]
			}
			cur.Partitions = append(cur.Partitions, part(g.parts[k], k.partition))
		}
		return res
	}
	for _, name := range q.Order {
		t := ShareOffsetsTopic{Topic: name}
		id, n, ok := st.Image.TopicID(name)
		t.TopicID = id
		for _, p := range q.Topics[name] {
			if !ok || p < 0 || p >= n {
				t.Partitions = append(t.Partitions, ShareOffsetsPartition{Partition: p, StartOffset: -1, Err: kerr.UnknownTopicOrPartition})
				continue
			}
			t.Partitions = append(t.Partitions, part(g.parts[sharePartKey{id, p}], p))
		}
		res.Topics = append(res.Topics, t)
	}
	return res
}

// ShareOffsetsChange is one partition's new SPSO for AlterShareGroupOffsets.
type ShareOffsetsChange struct {
	Partition   int32
	StartOffset int64
	Err         error // the answer
}

// ShareOffsetsTopicChange is one topic of AlterShareGroupOffsets (the answer fills TopicID and
// the partitions' Err; Err itself is a topic-level error of DeleteShareGroupOffsets).
type ShareOffsetsTopicChange struct {
	Topic      string
	TopicID    [16]byte
	Partitions []ShareOffsetsChange
	Err        error
}

// AlterShareGroupOffsets sets the SPSO of share-partitions of an empty share group (Kafka's
// GroupMetadataManager.alterShareGroupOffsets; a group that does not exist is created): each
// partition starts over at its offset with a new state epoch and nothing in flight, and the
// group epoch is bumped so members get the partitions assigned. A group of another type is
// GROUP_ID_NOT_FOUND, a group with members NON_EMPTY_GROUP; an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION.
func AlterShareGroupOffsets(group string, topics []ShareOffsetsTopicChange) func(st *State, c *Call[[]ShareOffsetsTopicChange]) {
	return func(st *State, c *Call[[]ShareOffsetsTopicChange]) {
		var g *ShareGroup
		switch x := st.Groups[group].(type) {
		case *ShareGroup:
			g = x
		case nil:
			g = newShareGroup(group)
		default:
			c.Fail(st, Errf(kerr.GroupIDNotFound, "Group %s is not a share group.", group))
			return
		}
		if !g.IsEmpty() {
			c.Fail(st, Errf(kerr.NonEmptyGroup, "The group is not empty."))
			return
		}
		if _, ok := st.Groups[group]; !ok {
			st.Groups[group] = g
		}
		out := make([]ShareOffsetsTopicChange, len(topics))
		wrote := false
		for i, t := range topics {
			out[i] = ShareOffsetsTopicChange{Topic: t.Topic}
			id, n, ok := st.Image.TopicID(t.Topic)
			if st.Image == nil {
				ok, n = true, 1<<30
			}
			out[i].TopicID = id
			for _, p := range t.Partitions {
				r := ShareOffsetsChange{Partition: p.Partition, StartOffset: p.StartOffset}
				switch {
				case !ok || p.Partition < 0 || p.Partition >= n:
					r.Err = kerr.UnknownTopicOrPartition
				case p.StartOffset < 0:
					r.Err = Errf(kerr.InvalidRequest, "The start offset %d is invalid.", p.StartOffset)
				default:
					k := sharePartKey{id, p.Partition}
					old := g.parts[k]
					sp := newSharePartition(id, p.Partition)
					sp.start = p.StartOffset
					if old != nil {
						sp.stateEpoch = old.stateEpoch + 1
						old.drop(st, g)
					}
					initMap(&g.parts)[k] = sp
					sp.write(st, g)
					wrote = true
				}
				out[i].Partitions = append(out[i].Partitions, r)
			}
		}
		if wrote && g.hasMetadata {
			g.writeMetadata(st, g.epoch+1, g.metadataHash)
			st.Metrics.ShareRebalances++
		}
		if !g.hasRecords() {
			delete(st.Groups, group)
		}
		c.Reply(st, out)
	}
}

// DeleteShareGroupOffsets deletes the share-partition state of whole topics of an empty share
// group (Kafka's GroupMetadataManager.deleteShareGroupOffsets): GROUP_ID_NOT_FOUND for an
// unknown group or one of another type, NON_EMPTY_GROUP with members, UNKNOWN_TOPIC_OR_PARTITION
// per unknown topic.
func DeleteShareGroupOffsets(group string, topics []string) func(st *State, c *Call[[]ShareOffsetsTopicChange]) {
	return func(st *State, c *Call[[]ShareOffsetsTopicChange]) {
		g, err := st.shareGroup(group)
		if err != nil {
			c.Fail(st, err)
			return
		}
		if !g.IsEmpty() {
			c.Fail(st, Errf(kerr.NonEmptyGroup, "The group is not empty."))
			return
		}
		out := make([]ShareOffsetsTopicChange, len(topics))
		for i, name := range topics {
			out[i] = ShareOffsetsTopicChange{Topic: name}
			id, _, ok := st.Image.TopicID(name)
			if !ok {
				out[i].Err = kerr.UnknownTopicOrPartition
				continue
			}
			out[i].TopicID = id
			for _, k := range g.sortedParts() {
				if k.topic == id {
					st.Write(Record{Key: sharePartitionKey(g.id, k.topic, k.partition)})
				}
			}
		}
		c.Reply(st, out)
	}
}
