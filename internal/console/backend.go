package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/lag"
	"github.com/muster-io/muster/internal/security"
)

// The console reads through the group coordinator's adapters, the same code that answers a
// Kafka client's ListGroups, DescribeGroups, ConsumerGroupDescribe, StreamsGroupDescribe and
// OffsetFetch.

// errNotFound is a group or topic that does not exist (HTTP 404).
var errNotFound = errors.New("not found")

// listGroups lists every group (ListGroups v5).
func (c *Console) listGroups(ctx context.Context) ([]GroupSummary, error) {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	resp := c.d.Coordinator.ListGroups(ctx, coordinator.Meta{APIVersion: 5}, req)
	if resp.ErrorCode != 0 && len(resp.Groups) == 0 {
		return nil, kerr.ErrorForCode(resp.ErrorCode)
	}
	out := make([]GroupSummary, len(resp.Groups))
	var snapGroups = c.lagGroups()
	for i, g := range resp.Groups {
		out[i] = GroupSummary{Group: g.Group, Type: g.GroupType, State: g.GroupState, ProtocolType: g.ProtocolType}
		if gl, ok := snapGroups[g.Group]; ok {
			out[i].LagStatus, out[i].TotalLag = gl.Status.String(), gl.TotalLag
		}
	}
	return out, nil
}

// groupType finds a group's type (ListGroups' answer for it), errNotFound when it does not exist.
func (c *Console) groupType(ctx context.Context, id string) (GroupSummary, error) {
	groups, err := c.listGroups(ctx)
	if err != nil {
		return GroupSummary{}, err
	}
	i := sort.Search(len(groups), func(i int) bool { return groups[i].Group >= id })
	if i < len(groups) && groups[i].Group == id {
		return groups[i], nil
	}
	return GroupSummary{}, errNotFound
}

// describeGroup describes a group of any type with one page of its members.
func (c *Console) describeGroup(ctx context.Context, id string, page, size int) (*Group, error) {
	sum, err := c.groupType(ctx, id)
	if err != nil {
		return nil, err
	}
	var g *Group
	switch sum.Type {
	case "consumer":
		g, err = c.describeConsumer(ctx, id)
	case "streams":
		g, err = c.describeStreams(ctx, id)
	case "share":
		g, err = c.describeShare(ctx, id)
	default:
		g, err = c.describeClassic(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	g.Page = newPage(page, size, len(g.Members))
	lo, hi := g.Page.bounds()
	g.Members = g.Members[lo:hi]
	if g.Type == "streams" {
		g.Processes = processes(g.Members)
	}
	return g, nil
}

func (c *Console) describeConsumer(ctx context.Context, id string) (*Group, error) {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version = 1
	req.Groups = []string{id}
	resp := c.d.Coordinator.ConsumerGroupDescribe(ctx, coordinator.Meta{APIVersion: 1}, req)
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("ConsumerGroupDescribe answered %d groups", len(resp.Groups))
	}
	rg := resp.Groups[0]
	if err := groupErr(rg.ErrorCode, rg.ErrorMessage); err != nil {
		return nil, err
	}
	names := c.topicNames()
	g := &Group{Group: id, Type: "consumer", State: rg.State, Epoch: rg.Epoch, AssignmentEpoch: rg.AssignmentEpoch,
		Assignor: rg.AssignorName, TopologyEpoch: -1, Members: make([]Member, 0, len(rg.Members))}
	for _, rm := range rg.Members {
		m := Member{MemberID: rm.MemberID, InstanceID: deref(rm.InstanceID), ClientID: rm.ClientID, ClientHost: rm.ClientHost,
			Rack: deref(rm.RackID), MemberEpoch: rm.MemberEpoch, SubscribedTopics: rm.SubscribedTopics,
			SubscribedRegex: deref(rm.SubscribedTopicRegex), Protocol: "consumer",
			Owned: assignment(rm.Assignment, names), Target: assignment(rm.TargetAssignment, names)}
		if rm.MemberType == 0 {
			m.Protocol = "classic"
		}
		m.Reconciled = m.MemberEpoch == rg.AssignmentEpoch && sameAssignment(m.Owned, m.Target)
		m.Status = "Stable"
		if !m.Reconciled {
			m.Status = "Reconciling"
		}
		g.Members = append(g.Members, m)
	}
	sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].MemberID < g.Members[j].MemberID })
	return g, nil
}

// describeShare describes a KIP-932 share group (ShareGroupDescribe): members own what the
// assignor gives them at once (share groups revoke nothing).
func (c *Console) describeShare(ctx context.Context, id string) (*Group, error) {
	req := kmsg.NewPtrShareGroupDescribeRequest()
	req.GroupIDs = []string{id}
	resp := c.d.Coordinator.ShareGroupDescribe(ctx, coordinator.Meta{APIVersion: req.Version}, req)
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("ShareGroupDescribe answered %d groups", len(resp.Groups))
	}
	rg := resp.Groups[0]
	if err := groupErr(rg.ErrorCode, rg.ErrorMessage); err != nil {
		return nil, err
	}
	names := c.topicNames()
	g := &Group{Group: id, Type: "share", State: rg.GroupState, Epoch: rg.GroupEpoch, AssignmentEpoch: rg.AssignmentEpoch,
		Assignor: rg.Assignor, TopologyEpoch: -1, Members: make([]Member, 0, len(rg.Members))}
	for _, rm := range rg.Members {
		m := Member{MemberID: rm.MemberID, ClientID: rm.ClientID, ClientHost: rm.ClientHost, Rack: deref(rm.RackID),
			MemberEpoch: rm.MemberEpoch, SubscribedTopics: rm.SubscribedTopicNames, Protocol: "share"}
		for _, tp := range rm.Assignment.TopicPartitions {
			name := tp.Topic
			if name == "" {
				name = names[tp.TopicID]
			}
			ps := append([]int32(nil), tp.Partitions...)
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			m.Owned = append(m.Owned, TopicPartitions{Topic: name, Partitions: ps})
		}
		sort.Slice(m.Owned, func(i, j int) bool { return m.Owned[i].Topic < m.Owned[j].Topic })
		m.Reconciled = m.MemberEpoch == rg.AssignmentEpoch
		m.Status = "Stable"
		if !m.Reconciled {
			m.Status = "Reconciling"
		}
		g.Members = append(g.Members, m)
	}
	sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].MemberID < g.Members[j].MemberID })
	return g, nil
}

func (c *Console) describeClassic(ctx context.Context, id string) (*Group, error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{id}
	resp := c.d.Coordinator.DescribeGroups(ctx, coordinator.Meta{APIVersion: 5}, req)
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("DescribeGroups answered %d groups", len(resp.Groups))
	}
	rg := resp.Groups[0]
	if err := groupErr(rg.ErrorCode, nil); err != nil {
		return nil, err
	}
	g := &Group{Group: id, Type: "classic", State: rg.State, ProtocolType: rg.ProtocolType, Protocol: rg.Protocol,
		Epoch: -1, AssignmentEpoch: -1, TopologyEpoch: -1, Members: make([]Member, 0, len(rg.Members))}
	for _, rm := range rg.Members {
		m := Member{MemberID: rm.MemberID, InstanceID: deref(rm.InstanceID), ClientID: rm.ClientID, ClientHost: rm.ClientHost,
			MemberEpoch: -1, Protocol: "classic", Reconciled: rg.State == "Stable", Status: rg.State}
		if rg.ProtocolType == "consumer" {
			var meta kmsg.ConsumerMemberMetadata
			if err := meta.ReadFrom(rm.ProtocolMetadata); err == nil {
				m.SubscribedTopics = meta.Topics
			}
			var as kmsg.ConsumerMemberAssignment
			if err := as.ReadFrom(rm.MemberAssignment); err == nil {
				for _, t := range as.Topics {
					ps := append([]int32(nil), t.Partitions...)
					sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
					m.Owned = append(m.Owned, TopicPartitions{Topic: t.Topic, Partitions: ps})
				}
				sort.Slice(m.Owned, func(i, j int) bool { return m.Owned[i].Topic < m.Owned[j].Topic })
			}
		}
		g.Members = append(g.Members, m)
	}
	sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].MemberID < g.Members[j].MemberID })
	return g, nil
}

func (c *Console) describeStreams(ctx context.Context, id string) (*Group, error) {
	rg, err := c.streamsDescribe(ctx, id, false)
	if err != nil {
		return nil, err
	}
	g := &Group{Group: id, Type: "streams", State: rg.State, Epoch: rg.Epoch, AssignmentEpoch: rg.AssignmentEpoch,
		Assignor: deref(rg.AssignorName), TopologyEpoch: -1, Members: make([]Member, 0, len(rg.Members))}
	parts := c.partitionCounts()
	if rg.Topology != nil {
		g.TopologyEpoch = rg.Topology.Epoch
		for _, st := range rg.Topology.Subtopologies {
			s := Subtopology{ID: st.SubtopologyID, SourceTopics: append(append([]string(nil), st.SourceTopics...), topicNamesOf(st.RepartitionSourceTopics)...)}
			for _, t := range s.SourceTopics {
				s.Partitions = max(s.Partitions, parts[t])
			}
			g.Subtopologies = append(g.Subtopologies, s)
		}
	}
	for _, rm := range rg.Members {
		m := Member{MemberID: rm.MemberID, InstanceID: deref(rm.InstanceID), ClientID: rm.ClientID, ClientHost: rm.ClientHost,
			Rack: deref(rm.RackID), MemberEpoch: rm.MemberEpoch, ProcessID: rm.ProcessID, TopologyEpoch: rm.TopologyEpoch,
			Protocol: "streams",
			Active:   tasks(rm.Assignment.ActiveTasks), Standby: tasks(rm.Assignment.StandbyTasks), Warmup: tasks(rm.Assignment.WarmupTasks),
			TargetActive: tasks(rm.TargetAssignment.ActiveTasks), TargetStandby: tasks(rm.TargetAssignment.StandbyTasks),
			TargetWarmup: tasks(rm.TargetAssignment.WarmupTasks)}
		if rm.IsClassic {
			m.Protocol = "classic"
		}
		if ep := rm.UserEndpoint; ep != nil {
			m.Endpoint = net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
		}
		m.Reconciled = m.MemberEpoch == rg.AssignmentEpoch && sameTasks(m.Active, m.TargetActive) &&
			sameTasks(m.Standby, m.TargetStandby) && sameTasks(m.Warmup, m.TargetWarmup)
		switch {
		case g.TopologyEpoch >= 0 && m.TopologyEpoch < g.TopologyEpoch:
			m.Status = "Stale topology"
		case m.Reconciled:
			m.Status = "Stable"
		default:
			m.Status = "Reconciling"
		}
		g.Members = append(g.Members, m)
	}
	sort.Slice(g.Members, func(i, j int) bool {
		a, b := g.Members[i], g.Members[j]
		if a.ProcessID != b.ProcessID {
			return a.ProcessID < b.ProcessID
		}
		return a.MemberID < b.MemberID
	})
	return g, nil
}

// streamsDescribe runs StreamsGroupDescribe v1 for one group, with the KIP-1331 description when
// withTopology is set.
func (c *Console) streamsDescribe(ctx context.Context, id string, withTopology bool) (*kmsg.StreamsGroupDescribeResponseGroup, error) {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version = 1
	req.Groups = []string{id}
	req.IncludeTopologyDescription = withTopology
	// The broker's own read, allowed everything; the console's authorization is the Operator
	// seam's (actions) and the HTTP listener's.
	resp := c.d.Coordinator.StreamsGroupDescribe(ctx, api.Req{Meta: coordinator.Meta{APIVersion: 1},
		Check: security.Check{A: security.AllowAll{}, API: kmsg.StreamsGroupDescribe.Int16()}}, req)
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("StreamsGroupDescribe answered %d groups", len(resp.Groups))
	}
	rg := resp.Groups[0]
	if err := groupErr(rg.ErrorCode, rg.ErrorMessage); err != nil {
		return nil, err
	}
	return &rg, nil
}

// committed reads a group's committed offsets (OffsetFetch v8, all topics), sorted.
func (c *Console) committed(ctx context.Context, id string) ([]PartitionLag, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = id
	req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	resp := c.d.Coordinator.OffsetFetch(ctx, coordinator.Meta{APIVersion: 8}, req)
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("OffsetFetch answered %d groups", len(resp.Groups))
	}
	g := resp.Groups[0]
	if err := groupErr(g.ErrorCode, nil); err != nil {
		return nil, err
	}
	var out []PartitionLag
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Offset < 0 {
				continue
			}
			out = append(out, PartitionLag{Topic: t.Topic, Partition: p.Partition, CommittedOffset: p.Offset, Metadata: deref(p.Metadata),
				LogEndOffset: -1, Lag: -1, TimeLagMs: -1})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// offsets is one page of a group's committed offsets, each with its log end and lag read now
// (the total over all partitions too), its time lag (looked up for the page's partitions only)
// and its status from the latest lag sample.
func (c *Console) offsets(ctx context.Context, id string, page, size int) (*Offsets, error) {
	if _, err := c.groupType(ctx, id); err != nil {
		return nil, err
	}
	all, err := c.committed(ctx, id)
	if err != nil {
		return nil, err
	}
	o := &Offsets{Group: id, Page: newPage(page, size, len(all))}
	for i := range all {
		p := &all[i]
		if _, hw, ok := c.d.Plane.Offsets(p.Topic, p.Partition); ok {
			p.LogEndOffset = hw
			p.Lag = max(hw-p.CommittedOffset, 0)
			o.TotalLag += p.Lag
		}
	}
	lo, hi := o.Page.bounds()
	o.Partitions = all[lo:hi]
	nowMs := c.d.Now().UnixMilli()
	var status map[lag.TopicPartition]string
	if c.d.Lag != nil {
		// The page's partitions as the latest sample evaluates them (the same order and count
		// as all, both read now from the group's committed offsets).
		d, ok, err := c.d.Lag.GroupDetail(ctx, id, func(int) (int, int) { return lo, hi })
		if err != nil {
			return nil, err
		}
		if ok {
			o.Status = d.Group.Status.String()
			status = make(map[lag.TopicPartition]string, len(d.Partitions))
			for _, p := range d.Partitions {
				status[lag.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.Status.String()
			}
		}
	}
	for i := range o.Partitions {
		p := &o.Partitions[i]
		switch {
		case p.Lag == 0:
			p.TimeLagMs = 0
		case p.Lag > 0:
			if ts, ok := c.d.Plane.BatchTimestamp(p.Topic, p.Partition, p.CommittedOffset); ok {
				p.TimeLagMs = max(nowMs-ts, 0)
			}
		}
		p.Status = status[lag.TopicPartition{Topic: p.Topic, Partition: p.Partition}]
	}
	if c.d.Lag != nil {
		o.Chart = c.d.Lag.Chart(id)
	}
	return o, nil
}

// topicNames maps topic ids to names (the newest metadata image).
func (c *Console) topicNames() map[[16]byte]string {
	out := map[[16]byte]string{}
	for _, t := range c.d.Plane.Topics() {
		out[t.ID] = t.Name
	}
	return out
}

func (c *Console) partitionCounts() map[string]int32 {
	out := map[string]int32{}
	for _, t := range c.d.Plane.Topics() {
		out[t.Name] = t.Partitions
	}
	return out
}

func groupErr(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	if code == kerr.GroupIDNotFound.Code {
		return errNotFound
	}
	err := kerr.ErrorForCode(code)
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

func assignment(a kmsg.Assignment, names map[[16]byte]string) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(a.TopicPartitions))
	for _, tp := range a.TopicPartitions {
		name := tp.Topic
		if name == "" {
			name = names[tp.TopicID]
		}
		ps := append([]int32(nil), tp.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		out = append(out, TopicPartitions{Topic: name, Partitions: ps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

func sameAssignment(a, b []TopicPartitions) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Topic != b[i].Topic || !sameInts(a[i].Partitions, b[i].Partitions) {
			return false
		}
	}
	return true
}

func tasks(ts []kmsg.TaskIDs) []Task {
	out := make([]Task, 0, len(ts))
	for _, t := range ts {
		ps := append([]int32(nil), t.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		out = append(out, Task{Subtopology: t.SubtopologyID, Partitions: ps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subtopology < out[j].Subtopology })
	return out
}

func sameTasks(a, b []Task) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Subtopology != b[i].Subtopology || !sameInts(a[i].Partitions, b[i].Partitions) {
			return false
		}
	}
	return true
}

func sameInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func countTasks(ts []Task) int {
	n := 0
	for _, t := range ts {
		n += len(t.Partitions)
	}
	return n
}

// processes groups streams members by process id.
func processes(ms []Member) []Process {
	byID := map[string]*Process{}
	var order []string
	for _, m := range ms {
		p := byID[m.ProcessID]
		if p == nil {
			p = &Process{ProcessID: m.ProcessID}
			byID[m.ProcessID] = p
			order = append(order, m.ProcessID)
		}
		p.Members = append(p.Members, m.MemberID)
		if p.Endpoint == "" {
			p.Endpoint = m.Endpoint
		}
		p.Active += countTasks(m.Active)
		p.Standby += countTasks(m.Standby)
		p.Warmup += countTasks(m.Warmup)
	}
	sort.Strings(order)
	out := make([]Process, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}

func topicNamesOf(ts []kmsg.TopicInfo) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Topic)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// formatTPs renders an assignment compactly: "t1:0,1,2 t2:5".
func formatTPs(tps []TopicPartitions) string {
	var b strings.Builder
	for i, tp := range tps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tp.Topic)
		b.WriteByte(':')
		for j, p := range tp.Partitions {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(p)))
		}
	}
	return b.String()
}

// formatTasks renders tasks compactly: "0_0 0_1 1_2".
func formatTasks(ts []Task) string {
	var b strings.Builder
	for _, t := range ts {
		for _, p := range t.Partitions {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t.Subtopology)
			b.WriteByte('_')
			b.WriteString(strconv.Itoa(int(p)))
		}
	}
	return b.String()
}
