package consumergroups

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
)

func tpsFromSet(s kadm.TopicsSet) []clikit.TopicPartition {
	var out []clikit.TopicPartition
	for t, ps := range s {
		for p := range ps {
			out = append(out, clikit.TopicPartition{Topic: t, Partition: p})
		}
	}
	clikit.SortTopicPartitions(out)
	return out
}

// memberDesc is one group member, classic or KIP-848.
type memberDesc struct {
	MemberID         string                  `json:"member_id"`
	GroupInstanceID  *string                 `json:"group_instance_id"`
	ClientID         string                  `json:"client_id"`
	Host             string                  `json:"host"`
	MemberEpoch      *int32                  `json:"member_epoch"`
	Assignment       []clikit.TopicPartition `json:"assignment"`
	TargetAssignment []clikit.TopicPartition `json:"target_assignment"`
}

// coordinator identifies the group coordinator broker.
type coordinator struct {
	ID   int32  `json:"id"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// groupDesc is a described group. Type is "consumer" for KIP-848 groups
// (ConsumerGroupDescribe) and "classic" otherwise (DescribeGroups).
type groupDesc struct {
	Group              string
	Exists             bool
	Type               string
	State              string
	ProtocolType       string
	AssignmentStrategy string
	Coordinator        coordinator
	GroupEpoch         *int32
	AssignmentEpoch    *int32
	Members            []memberDesc
	Err                error // describe failure other than "does not exist"
}

// describeGroups describes each group: ConsumerGroupDescribe first (KIP-848),
// falling back to classic DescribeGroups for groups it does not know (Kafka
// answers GROUP_ID_NOT_FOUND for classic groups) or when unsupported. Groups
// that do not exist come back with Exists false (classic state "Dead" or
// GROUP_ID_NOT_FOUND).
func (r *runner) describeGroups(parent context.Context, groups []string) (map[string]*groupDesc, error) {
	out := make(map[string]*groupDesc, len(groups))
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	cg, err := r.describeConsumerProtocol(ctx, groups)
	if err != nil {
		return nil, err
	}
	var classic []string
	for _, g := range groups {
		if gd, ok := cg[g]; ok {
			out[g] = gd
		} else {
			classic = append(classic, g)
		}
	}
	if len(classic) == 0 {
		return out, nil
	}
	dg, err := r.cl.Adm.DescribeGroups(ctx, classic...)
	if err != nil && dg == nil {
		return nil, err
	}
	for _, g := range classic {
		d, ok := dg[g]
		gd := &groupDesc{Group: g, Type: "classic"}
		out[g] = gd
		switch {
		case !ok:
			gd.Err = err
			if gd.Err == nil {
				gd.Err = fmt.Errorf("no describe result for group '%s'", g)
			}
			continue
		case errors.Is(d.Err, kerr.GroupIDNotFound) || (d.Err == nil && (d.State == "Dead" || d.State == "")):
			gd.State = "Dead"
			continue
		case d.Err != nil:
			gd.Err = d.Err
			continue
		}
		gd.Exists = true
		gd.State = d.State
		gd.ProtocolType = d.ProtocolType
		gd.AssignmentStrategy = d.Protocol
		gd.Coordinator = coordinator{d.Coordinator.NodeID, d.Coordinator.Host, d.Coordinator.Port}
		for _, m := range d.Members {
			md := memberDesc{MemberID: m.MemberID, GroupInstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost}
			if a, ok := m.Assigned.AsConsumer(); ok {
				s := make(kadm.TopicsSet)
				for _, t := range a.Topics {
					s.Add(t.Topic, t.Partitions...)
				}
				md.Assignment = tpsFromSet(s)
			}
			gd.Members = append(gd.Members, md)
		}
	}
	return out, nil
}

// offsetRow is one partition line of the offsets view.
type offsetRow struct {
	Topic         string  `json:"topic"`
	Partition     int32   `json:"partition"`
	CurrentOffset *int64  `json:"current_offset"`
	LeaderEpoch   *int32  `json:"leader_epoch"`
	Metadata      *string `json:"metadata"`
	LogEndOffset  *int64  `json:"log_end_offset"`
	Lag           *int64  `json:"lag"`
	ConsumerID    string  `json:"consumer_id"`
	Host          string  `json:"host"`
	ClientID      string  `json:"client_id"`
}

// fetchCommitted reads a group's committed offsets with OffsetFetch (no
// member joins the group; seed 001). Offsets of -1 mean "none committed".
func (r *runner) fetchCommitted(parent context.Context, group string) (kadm.OffsetResponses, error) {
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	resps, err := r.cl.Adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	var perr error
	resps.EachError(func(o kadm.OffsetResponse) {
		if perr == nil {
			perr = fmt.Errorf("fetching committed offset of %s-%d: %w", o.Topic, o.Partition, o.Err)
		}
	})
	return resps, perr
}

// listOffsets lists start (earliest) or end (latest) offsets for the topics of
// tps; a partition absent from the answer is absent from the map.
func (r *runner) listOffsets(parent context.Context, tps []clikit.TopicPartition, end bool) (map[clikit.TopicPartition]int64, error) {
	out := make(map[clikit.TopicPartition]int64)
	if len(tps) == 0 {
		return out, nil
	}
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	topics := topicsOf(tps)
	var listed kadm.ListedOffsets
	var err error
	if end {
		listed, err = r.cl.Adm.ListEndOffsets(ctx, topics...)
	} else {
		listed, err = r.cl.Adm.ListStartOffsets(ctx, topics...)
	}
	if err != nil && listed == nil {
		return nil, err
	}
	for _, tp := range tps {
		if l, ok := listed.Lookup(tp.Topic, tp.Partition); ok && l.Err == nil && l.Offset >= 0 {
			out[tp] = l.Offset
		}
	}
	return out, nil
}

func topicsOf(tps []clikit.TopicPartition) []string {
	seen := map[string]bool{}
	var out []string
	for _, tp := range tps {
		if !seen[tp.Topic] {
			seen[tp.Topic] = true
			out = append(out, tp.Topic)
		}
	}
	sort.Strings(out)
	return out
}

// collectOffsets builds the offsets view rows like Kafka: members with an
// assignment first (most partitions first), their partitions in order, then
// committed partitions no member owns with "-" for consumer, host and client.
// CURRENT-OFFSET comes from OffsetFetch, LOG-END-OFFSET from ListOffsets
// (latest), LAG = end - committed when both are known.
func (r *runner) collectOffsets(ctx context.Context, gd *groupDesc) ([]offsetRow, error) {
	committed, err := r.fetchCommitted(ctx, gd.Group)
	if err != nil {
		return nil, err
	}
	members := append([]memberDesc(nil), gd.Members...)
	sort.SliceStable(members, func(i, j int) bool { return len(members[i].Assignment) > len(members[j].Assignment) })
	var rows []offsetRow
	assigned := map[clikit.TopicPartition]bool{}
	for _, m := range members {
		for _, tp := range m.Assignment {
			assigned[tp] = true
			rows = append(rows, offsetRow{Topic: tp.Topic, Partition: tp.Partition, ConsumerID: m.MemberID, Host: m.Host, ClientID: m.ClientID})
		}
	}
	var unassigned []clikit.TopicPartition
	committed.Each(func(o kadm.OffsetResponse) {
		tp := clikit.TopicPartition{Topic: o.Topic, Partition: o.Partition}
		if !assigned[tp] {
			unassigned = append(unassigned, tp)
		}
	})
	clikit.SortTopicPartitions(unassigned)
	for _, tp := range unassigned {
		rows = append(rows, offsetRow{Topic: tp.Topic, Partition: tp.Partition, ConsumerID: clikit.Missing, Host: clikit.Missing, ClientID: clikit.Missing})
	}
	tps := make([]clikit.TopicPartition, len(rows))
	for i, rw := range rows {
		tps[i] = clikit.TopicPartition{Topic: rw.Topic, Partition: rw.Partition}
	}
	ends, err := r.listOffsets(ctx, tps, true)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rw := &rows[i]
		tp := clikit.TopicPartition{Topic: rw.Topic, Partition: rw.Partition}
		if c, ok := committed.Lookup(rw.Topic, rw.Partition); ok && c.At >= 0 {
			rw.CurrentOffset = ptr(c.At)
			rw.Metadata = ptr(c.Metadata)
			if c.LeaderEpoch >= 0 {
				rw.LeaderEpoch = ptr(c.LeaderEpoch)
			}
		}
		if e, ok := ends[tp]; ok {
			rw.LogEndOffset = ptr(e)
			if rw.CurrentOffset != nil {
				rw.Lag = ptr(e - *rw.CurrentOffset)
			}
		}
	}
	return rows, nil
}

// describeSelected resolves --group / --all-groups, sorts the ids and
// describes those groups.
func (r *runner) describeSelected(ctx context.Context) ([]string, map[string]*groupDesc, error) {
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(groups)
	descs, err := r.describeGroups(ctx, groups)
	if err != nil {
		return nil, nil, err
	}
	return groups, descs, nil
}

// groupIDs resolves --group / --all-groups (all consumer groups, sorted).
func (r *runner) groupIDs(ctx context.Context) ([]string, error) {
	if !r.o.allGroups {
		var out []string
		for _, g := range r.o.groups {
			out = appendUnique(out, g)
		}
		return out, nil
	}
	listed, err := r.listConsumerGroups(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(listed))
	for i, g := range listed {
		out[i] = g.Group
	}
	return out, nil
}

// describeConsumerProtocol describes groups with ConsumerGroupDescribe
// (KIP-848). Only groups the broker describes successfully are returned;
// any per-group error (Kafka answers GROUP_ID_NOT_FOUND for classic groups),
// a failed shard, or an unsupported API leaves the group to the classic
// path. Assigned topics are named from the response, or resolved from their
// topic IDs via metadata when a broker leaves the name empty.
func (r *runner) describeConsumerProtocol(ctx context.Context, groups []string) (map[string]*groupDesc, error) {
	out := map[string]*groupDesc{}
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = groups
	var needNames bool
	var resps []*kmsg.ConsumerGroupDescribeResponse
	var metas []kgo.BrokerMetadata
	for _, sh := range r.cl.Kcl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			continue
		}
		resp := sh.Resp.(*kmsg.ConsumerGroupDescribeResponse)
		resps = append(resps, resp)
		metas = append(metas, sh.Meta)
		for _, g := range resp.Groups {
			for _, m := range g.Members {
				for _, a := range [][]kmsg.AssignmentTopicPartition{m.Assignment.TopicPartitions, m.TargetAssignment.TopicPartitions} {
					for _, tp := range a {
						needNames = needNames || tp.Topic == ""
					}
				}
			}
		}
	}
	names := map[[16]byte]string{}
	if needNames {
		tds, err := r.cl.Adm.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		for _, td := range tds {
			names[td.ID] = td.Topic
		}
	}
	conv := func(a kmsg.Assignment) []clikit.TopicPartition {
		s := make(kadm.TopicsSet)
		for _, tp := range a.TopicPartitions {
			t := tp.Topic
			if t == "" {
				t = names[tp.TopicID]
			}
			if t == "" {
				t = kadm.TopicID(tp.TopicID).String()
			}
			s.Add(t, tp.Partitions...)
		}
		return tpsFromSet(s)
	}
	for i, resp := range resps {
		b := metas[i]
		for _, g := range resp.Groups {
			if g.ErrorCode != 0 || g.State == "" || g.State == "Dead" {
				continue
			}
			gd := &groupDesc{
				Group: g.Group, Exists: true, Type: "consumer", State: g.State, ProtocolType: "consumer",
				AssignmentStrategy: g.AssignorName,
				Coordinator:        coordinator{b.NodeID, b.Host, b.Port},
				GroupEpoch:         ptr(g.Epoch), AssignmentEpoch: ptr(g.AssignmentEpoch),
			}
			for _, m := range g.Members {
				gd.Members = append(gd.Members, memberDesc{
					MemberID: m.MemberID, GroupInstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost,
					MemberEpoch: ptr(m.MemberEpoch), Assignment: conv(m.Assignment), TargetAssignment: conv(m.TargetAssignment),
				})
			}
			sort.SliceStable(gd.Members, func(i, j int) bool { return memberLess(gd.Members[i], gd.Members[j]) })
			out[g.Group] = gd
		}
	}
	return out, nil
}

// memberLess orders members by group instance id (members with one first),
// then member id, like kadm does for classic groups.
func memberLess(a, b memberDesc) bool {
	if (a.GroupInstanceID != nil) != (b.GroupInstanceID != nil) {
		return a.GroupInstanceID != nil
	}
	if a.GroupInstanceID != nil && *a.GroupInstanceID != *b.GroupInstanceID {
		return *a.GroupInstanceID < *b.GroupInstanceID
	}
	return a.MemberID < b.MemberID
}
