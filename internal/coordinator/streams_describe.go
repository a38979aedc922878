package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/streams/assignor"
)

// Topology description statuses of StreamsGroupDescribe v1 (KIP-1331).
const (
	StreamsTopologyDescriptionNotRequested int8 = 0
	StreamsTopologyDescriptionNotStored    int8 = 1
	StreamsTopologyDescriptionError        int8 = 2
	StreamsTopologyDescriptionAvailable    int8 = 3
)

// DescribeStreamsGroups describes groups of one shard (StreamsGroupDescribe v0–v1, Kafka's
// GroupMetadataManager.streamsGroupDescribe). An empty id gets INVALID_GROUP_ID, an unknown id or a
// group of another type GROUP_ID_NOT_FOUND with a message. The topology lists the configured
// subtopologies when the topology is ready, else the declared ones. TopologyDescriptionStatus stays
// NOT_REQUESTED (the KIP-1331 adapter fills it from the plugin); AssignorName is "sticky".
func DescribeStreamsGroups(ids []string, version int16) func(st *State, c *Call[StreamsGroupsDescribed]) {
	return func(st *State, c *Call[StreamsGroupsDescribed]) {
		out := StreamsGroupsDescribed{Groups: make([]kmsg.StreamsGroupDescribeResponseGroup, 0, len(ids)),
			StoredTopologyEpochs: map[string]int32{}}
		for _, id := range ids {
			out.Groups = append(out.Groups, describeStreamsGroup(st, id, version))
			if g, ok := st.Groups[id].(*StreamsGroup); ok {
				out.StoredTopologyEpochs[id] = g.storedTopologyEpoch
			}
		}
		c.Reply(st, out)
	}
}

func describeStreamsGroup(st *State, id string, version int16) kmsg.StreamsGroupDescribeResponseGroup {
	d := kmsg.NewStreamsGroupDescribeResponseGroup()
	d.Group = id
	fail := func(err error) kmsg.StreamsGroupDescribeResponseGroup {
		d.ErrorCode, d.ErrorMessage = ErrorCode(err), ErrorMessage(err)
		d.State = StreamsDead.String()
		return d
	}
	if id == "" {
		return fail(Errf(kerr.InvalidGroupID, "Group id can't be empty."))
	}
	raw, ok := st.Groups[id]
	if !ok {
		return fail(Errf(kerr.GroupIDNotFound, "Group %s not found.", id))
	}
	g, ok := raw.(*StreamsGroup)
	if !ok {
		return fail(Errf(kerr.GroupIDNotFound, "Group %s is not a streams group.", id))
	}
	d.State = g.StateName()
	d.Epoch = g.groupEpoch
	d.AssignmentEpoch = g.targetEpoch
	if version >= 1 {
		d.TopologyDescriptionStatus = StreamsTopologyDescriptionNotRequested
		name := assignor.StickyName
		d.AssignorName = &name
	}
	d.Topology = g.describeTopology(st)
	for _, mid := range g.MemberIDs() {
		d.Members = append(d.Members, g.describeMember(mid))
	}
	return d
}

func (g *StreamsGroup) describeTopology(st *State) *kmsg.StreamsGroupDescribeResponseGroupTopology {
	t := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
	if g.topology == nil {
		t.Epoch = -1
		return &t
	}
	t.Epoch = g.topology.Epoch
	// A read-only describe computes the configuration without storing it.
	conf := configureStreamsTopology(g.topology, st.Image)
	for _, s := range g.topology.Subtopologies {
		ds := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
		ds.SubtopologyID = s.ID
		ds.SourceTopics = nonNilStrings(append([]string{}, s.SourceTopics...))
		ds.RepartitionSinkTopics = nonNilStrings(append([]string{}, s.RepartitionSinkTopics...))
		ds.StateChangelogTopics = describeTopicInfos(s.StateChangelogTopics, conf)
		ds.RepartitionSourceTopics = describeTopicInfos(s.RepartitionSourceTopics, conf)
		t.Subtopologies = append(t.Subtopologies, ds)
	}
	return &t
}

// describeTopicInfos lists internal topics with their configured partition counts when known.
func describeTopicInfos(ts []StreamsTopicInfo, conf *configuredTopology) []kmsg.TopicInfo {
	out := []kmsg.TopicInfo{}
	for _, ti := range ts {
		k := kmsg.NewTopicInfo()
		k.Topic = ti.Name
		k.NumPartitions = ti.Partitions
		if n, ok := conf.internalPartitions[ti.Name]; ok && conf.ready() {
			k.NumPartitions = n
		}
		k.ReplicationFactor = ti.ReplicationFactor
		for _, kv := range ti.Configs {
			c := kmsg.NewTopicInfoConfig()
			c.Key, c.Value = kv[0], kv[1]
			k.Configs = append(k.Configs, c)
		}
		out = append(out, k)
	}
	return out
}

func (g *StreamsGroup) describeMember(id string) kmsg.StreamsGroupDescribeResponseGroupMember {
	m := g.meta[id]
	dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	dm.MemberID = id
	cur := g.currentOf(id)
	dm.MemberEpoch = cur.MemberEpoch
	dm.InstanceID, dm.RackID = m.InstanceID, m.RackID
	dm.ClientID, dm.ClientHost = m.ClientID, m.ClientHost
	dm.TopologyEpoch = m.TopologyEpoch
	dm.ProcessID = m.ProcessID
	if m.UserEndpoint != nil {
		dm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.UserEndpoint.Host, Port: m.UserEndpoint.Port}
	}
	dm.ClientTags = []kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{}
	for _, k := range sortedKeys(m.ClientTags) {
		dm.ClientTags = append(dm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: k, Value: m.ClientTags[k]})
	}
	dm.TaskOffsets, dm.TaskEndOffsets = []kmsg.TaskOffset{}, []kmsg.TaskOffset{}
	if s := g.soft[id]; s != nil {
		dm.TaskOffsets = describeTaskOffsets(s.TaskOffsets)
		dm.TaskEndOffsets = describeTaskOffsets(s.TaskEndOffsets)
	}
	dm.Assignment = kmsg.StreamsAssignment{ActiveTasks: taskIDs(cur.Assigned.Active), StandbyTasks: taskIDs(cur.Assigned.Standby), WarmupTasks: taskIDs(cur.Assigned.Warmup)}
	t, ok := g.targets[id]
	if !ok {
		t = newStreamsTaskSet()
	}
	dm.TargetAssignment = kmsg.StreamsAssignment{ActiveTasks: taskIDs(t.Active), StandbyTasks: taskIDs(t.Standby), WarmupTasks: taskIDs(t.Warmup)}
	return dm
}

func describeTaskOffsets(m map[streamsTask]int64) []kmsg.TaskOffset {
	ts := streamsTasks{}
	for t := range m {
		ts[t] = 0
	}
	out := []kmsg.TaskOffset{}
	for _, t := range ts.sorted() {
		o := kmsg.NewTaskOffset()
		o.SubtopologyID, o.Partition, o.Offset = t.Sub, t.Part, m[t]
		out = append(out, o)
	}
	return out
}
