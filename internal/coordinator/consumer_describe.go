package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Member types in ConsumerGroupDescribe v1.
const (
	memberTypeClassic  int8 = 0
	memberTypeConsumer int8 = 1
)

// ConsumerGroupDescribe describes consumer groups of one shard (ConsumerGroupDescribe v0–v1;
// Kafka's GroupMetadataManager.consumerGroupDescribe); the reply is a
// []kmsg.ConsumerGroupDescribeResponseGroup in the order of ids. An empty id is INVALID_GROUP_ID;
// an unknown group or a group of another type is GROUP_ID_NOT_FOUND with a message.
func ConsumerGroupDescribe(ids []string, version int16) func(st *State, c *Call[[]kmsg.ConsumerGroupDescribeResponseGroup]) {
	return func(st *State, c *Call[[]kmsg.ConsumerGroupDescribeResponseGroup]) {
		out := make([]kmsg.ConsumerGroupDescribeResponseGroup, 0, len(ids))
		for _, id := range ids {
			out = append(out, describeConsumerGroup(st, id, version))
		}
		c.Reply(st, out)
	}
}

func describeConsumerGroup(st *State, id string, version int16) kmsg.ConsumerGroupDescribeResponseGroup {
	d := kmsg.NewConsumerGroupDescribeResponseGroup()
	d.Group = id
	fail := func(err error) kmsg.ConsumerGroupDescribeResponseGroup {
		d.ErrorCode, d.ErrorMessage = ErrorCode(err), ErrorMessage(err)
		return d
	}
	if id == "" {
		return fail(kerr.InvalidGroupID)
	}
	var g *ConsumerGroup
	switch x := st.Groups[id].(type) {
	case *ConsumerGroup:
		g = x
	case nil:
		return fail(Errf(kerr.GroupIDNotFound, "Group %s not found.", id))
	default:
		return fail(Errf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", id))
	}
	d.State = g.StateName()
	d.Epoch = g.epoch
	d.AssignmentEpoch = g.assignmentEpoch
	d.AssignorName = g.preferredAssignor(st)
	for _, mid := range sortedKeys(g.members) {
		m := g.members[mid]
		cur := g.current(mid)
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID = mid
		dm.InstanceID = m.instanceID
		dm.RackID = m.rackID
		dm.MemberEpoch = cur.epoch
		dm.ClientID = m.clientID
		dm.ClientHost = m.clientHost
		dm.SubscribedTopics = append([]string{}, m.subscribedNames...)
		if m.subscribedRegex != "" {
			re := m.subscribedRegex
			dm.SubscribedTopicRegex = &re
		}
		// The current assignment includes partitions pending revocation (KAFKA-20431).
		owned := cloneTP(cur.assigned)
		for t, ps := range cur.pending {
			owned[t] = append(owned[t], ps...)
		}
		dm.Assignment = describeAssignment(st, normalizeTP(owned))
		dm.TargetAssignment = describeAssignment(st, g.targets[mid])
		if version >= 1 {
			dm.MemberType = memberTypeConsumer
			if m.classic != nil {
				dm.MemberType = memberTypeClassic
			}
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// describeAssignment lists an assignment's topics with their names. Like Kafka's
// ConsumerGroupMember.topicPartitionsFromMap it leaves out topics the metadata image does not
// know (deleted topics a member has not revoked yet).
func describeAssignment(st *State, a topicPartitions) kmsg.Assignment {
	out := kmsg.NewAssignment()
	out.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for _, t := range sortedTopicIDs(a) {
		tp := kmsg.AssignmentTopicPartition{TopicID: t, Partitions: append([]int32{}, a[t]...)}
		if st.Image != nil {
			name, ok := st.Image.TopicName(t)
			if !ok {
				continue
			}
			tp.Topic = name
		}
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return out
}
