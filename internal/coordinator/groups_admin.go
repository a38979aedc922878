package coordinator

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroups lists the shard's groups for ListGroups v0–v5 (Kafka's
// GroupCoordinatorShard.listGroups), sorted by id: states and types are the lower-case
// StatesFilter (v4+) and TypesFilter (v5+) entries; an empty set matches everything, an unknown
// type nothing.
func ListGroups(states, types map[string]bool) func(st *State, c *Call[[]kmsg.ListGroupsResponseGroup]) {
	return func(st *State, c *Call[[]kmsg.ListGroupsResponseGroup]) {
		var out []kmsg.ListGroupsResponseGroup
		for _, id := range sortedKeys(st.Groups) {
			g := st.Groups[id]
			if len(states) > 0 && !states[strings.ToLower(stateFilterName(g))] {
				continue
			}
			if len(types) > 0 && !types[string(g.Type())] {
				continue
			}
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group = id
			lg.ProtocolType = g.ProtocolType()
			lg.GroupState = g.StateName()
			lg.GroupType = string(g.Type())
			out = append(out, lg)
		}
		c.Reply(st, out)
	}
}

// stateFilterName is the lower-case state name ListGroups filters match ("not_ready" for
// streams NotReady).
func stateFilterName(g Group) string {
	if g.StateName() == "NotReady" {
		return "not_ready"
	}
	return g.StateName()
}

// DescribeGroups describes classic groups of one shard for DescribeGroups v0–v6, in the order
// of ids. Only classic groups are described; an unknown or non-classic group is Dead, with
// GROUP_ID_NOT_FOUND and a message on v6+ and no error before.
func DescribeGroups(ids []string, version int16) func(st *State, c *Call[[]kmsg.DescribeGroupsResponseGroup]) {
	return func(st *State, c *Call[[]kmsg.DescribeGroupsResponseGroup]) {
		out := make([]kmsg.DescribeGroupsResponseGroup, len(ids))
		for i, id := range ids {
			out[i] = describeGroup(st, id, version)
		}
		c.Reply(st, out)
	}
}

func describeGroup(st *State, id string, version int16) kmsg.DescribeGroupsResponseGroup {
	out := kmsg.NewDescribeGroupsResponseGroup()
	out.Group = id
	out.AuthorizedOperations = -2147483648
	g, ok := st.Groups[id]
	cg, classic := g.(*ClassicGroup)
	if !ok || !classic || cg.state == ClassicDead {
		out.State = "Dead"
		if version >= 6 {
			out.ErrorCode = kerr.GroupIDNotFound.Code
			msg := "Group " + id + " not found."
			if ok && !classic {
				msg = "Group " + id + " is not a classic group."
			}
			out.ErrorMessage = &msg
		}
		return out
	}
	out.State = cg.state.String()
	out.ProtocolType = cg.protocolType
	stable := cg.state == ClassicStable
	if stable {
		out.Protocol = cg.protocolName
	}
	for _, mid := range cg.memberIDs() {
		m := cg.members[mid]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
		if stable {
			dm.ProtocolMetadata = m.metadataFor(cg.protocolName)
			dm.MemberAssignment = m.assignment
		}
		if dm.ProtocolMetadata == nil {
			dm.ProtocolMetadata = []byte{}
		}
		if dm.MemberAssignment == nil {
			dm.MemberAssignment = []byte{}
		}
		out.Members = append(out.Members, dm)
	}
	return out
}

// DeleteGroup deletes one group for DeleteGroups v0–v3 (Kafka's
// GroupCoordinatorShard.deleteGroups): GROUP_ID_NOT_FOUND, the group type's own refusal
// (NON_EMPTY_GROUP), or tombstones for every offset first and then for the group's own records.
func DeleteGroup(id string) func(st *State, c *Call[Ack]) {
	return func(st *State, c *Call[Ack]) {
		g, ok := st.Groups[id]
		if !ok {
			// Kafka's shard answers only the code here (no ErrorMessage); v3's ErrorMessage
			// carries messages of errors that have one (KIP-1331 GROUP_DELETION_FAILED).
			c.Fail(st, kerr.GroupIDNotFound)
			return
		}
		if err := g.ValidateDeleteGroup(); err != nil {
			c.Fail(st, err)
			return
		}
		for _, t := range st.Offsets.Topics(id) {
			for _, p := range st.Offsets.Partitions(id, t) {
				st.WriteOffsetTombstone(id, t, p)
				st.deletePending(id, t, p)
			}
		}
		// Partitions with only pending transactional offsets are tombstoned too (Kafka's
		// deleteAllOffsets).
		for _, tp := range st.TxnOffsets.Partitions(id) {
			st.WriteOffsetTombstone(id, tp.Topic, tp.Partition)
			st.deletePending(id, tp.Topic, tp.Partition)
		}
		g.WriteTombstones(st)
		delete(st.Groups, id)
		st.deleteHistory(id)
		c.Reply(st, Ack{})
	}
}
