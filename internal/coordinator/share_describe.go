package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupDescribe describes share groups of one shard (ShareGroupDescribe v1; Kafka's
// GroupMetadataManager.shareGroupDescribe), in the order of ids: an empty id is
// INVALID_GROUP_ID, an unknown group or a group of another type GROUP_ID_NOT_FOUND with a
// message.
func ShareGroupDescribe(ids []string) func(st *State, c *Call[[]kmsg.ShareGroupDescribeResponseGroup]) {
	return func(st *State, c *Call[[]kmsg.ShareGroupDescribeResponseGroup]) {
		out := make([]kmsg.ShareGroupDescribeResponseGroup, 0, len(ids))
		for _, id := range ids {
			out = append(out, describeShareGroup(st, id))
		}
		c.Reply(st, out)
	}
}

func describeShareGroup(st *State, id string) kmsg.ShareGroupDescribeResponseGroup {
	d := kmsg.NewShareGroupDescribeResponseGroup()
	d.GroupID = id
	d.AuthorizedOperations = -2147483648
	if id == "" {
		d.ErrorCode = kerr.InvalidGroupID.Code
		return d
	}
	g, err := st.shareGroup(id)
	if err != nil {
		d.ErrorCode, d.ErrorMessage = ErrorCode(err), ErrorMessage(err)
		return d
	}
	d.GroupState = g.StateName()
	d.GroupEpoch = g.epoch
	d.AssignmentEpoch = g.assignmentEpoch
	d.Assignor = ShareAssignorName
	for _, mid := range sortedKeys(g.members) {
		m := g.members[mid]
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID = mid
		dm.RackID = m.rackID
		dm.MemberEpoch = g.current(mid).epoch
		dm.ClientID = m.clientID
		dm.ClientHost = m.clientHost
		dm.SubscribedTopicNames = append([]string{}, m.subscribed...)
		dm.Assignment.TopicPartitions = []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{}
		a := g.current(mid).assigned
		for _, t := range sortedTopicIDs(a) {
			tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			tp.TopicID = t
			tp.Partitions = append([]int32{}, a[t]...)
			if st.Image != nil {
				// Topics the image does not know (deleted) are left out, as Kafka's
				// ShareGroupMember.topicPartitionsFromMap does.
				name, ok := st.Image.TopicName(t)
				if !ok {
					continue
				}
				tp.Topic = name
			}
			dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, tp)
		}
		d.Members = append(d.Members, dm)
	}
	return d
}
