package coordinator

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	RegisterHandler(16, listGroups)
	RegisterHandler(15, describeGroups)
	RegisterHandler(42, deleteGroups)
}

// fanOut runs op on every shard (in parallel) and returns the replies in shard order; a failed
// shard yields (nil, err) in its slot.
func (s *Service) fanOut(ctx context.Context, meta Meta, op func(st *State, c *Call)) ([]any, []error) {
	n := s.RT.Shards()
	out := make([]any, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := int32(0); i < n; i++ {
		wg.Add(1)
		go func(i int32) {
			defer wg.Done()
			r, err := s.RT.DoShard(ctx, i, meta, op)
			out[i], errs[i] = r, normalizeErr(err)
		}(i)
	}
	wg.Wait()
	return out, errs
}

// listGroups serves ListGroups v0–v5 (reference §1.12): StatesFilter (v4+) and TypesFilter (v5+)
// compared case-insensitively; an unknown type matches nothing. Shards still loading set
// COORDINATOR_LOAD_IN_PROGRESS and contribute no groups.
func listGroups(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	states := map[string]bool{}
	for _, st := range req.StatesFilter {
		states[strings.ToLower(strings.TrimSpace(st))] = true
	}
	types := map[string]bool{}
	for _, t := range req.TypesFilter {
		types[strings.ToLower(strings.TrimSpace(t))] = true
	}
	replies, errs := s.fanOut(ctx, meta, func(st *State, c *Call) {
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
		st.Reply(c, out)
	})
	for i, rep := range replies {
		if errs[i] != nil {
			if resp.ErrorCode == 0 {
				resp.ErrorCode = ErrorCode(errs[i])
			}
			continue
		}
		resp.Groups = append(resp.Groups, rep.([]kmsg.ListGroupsResponseGroup)...)
	}
	sort.Slice(resp.Groups, func(i, j int) bool { return resp.Groups[i].Group < resp.Groups[j].Group })
	return resp
}

// stateFilterName is the lower-case state name ListGroups filters match ("not_ready" for
// streams NotReady).
func stateFilterName(g Group) string {
	if g.StateName() == "NotReady" {
		return "not_ready"
	}
	return g.StateName()
}

// describeGroups serves DescribeGroups v0–v6 (reference §1.11). Only classic groups are
// described; an unknown or non-classic group is Dead, with GROUP_ID_NOT_FOUND and a message on
// v6+ and no error before.
func describeGroups(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	resp.Groups = make([]kmsg.DescribeGroupsResponseGroup, len(req.Groups))
	var wg sync.WaitGroup
	for i, id := range req.Groups {
		wg.Add(1)
		go func(i int, id string) {
			defer wg.Done()
			out, err := s.do(ctx, id, meta, func(st *State, c *Call) { st.Reply(c, describeGroup(st, id, req.Version)) })
			if err != nil {
				g := kmsg.NewDescribeGroupsResponseGroup()
				g.Group, g.ErrorCode = id, ErrorCode(err)
				resp.Groups[i] = g
				return
			}
			resp.Groups[i] = out.(kmsg.DescribeGroupsResponseGroup)
		}(i, id)
	}
	wg.Wait()
	return resp
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

// DeleteGroupsHook runs before a group's tombstones are written (KIP-1331: delete the stored
// topology description first). It may block; it runs outside the shard loop.
var DeleteGroupsHook func(s *Service, ctx context.Context, groups []string)

// deleteGroups serves DeleteGroups v0–v3 (reference §1.10): per group GROUP_ID_NOT_FOUND,
// NON_EMPTY_GROUP, or tombstones for every offset and every group record. ErrorMessage (v3+) is
// set only for errors that carry a message (a group type's MessageError); like Kafka's shard,
// GROUP_ID_NOT_FOUND and NON_EMPTY_GROUP come without one. "" is an ordinary group id here.
func deleteGroups(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	if DeleteGroupsHook != nil {
		DeleteGroupsHook(s, ctx, req.Groups)
	}
	resp.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(req.Groups))
	var wg sync.WaitGroup
	for i, id := range req.Groups {
		wg.Add(1)
		go func(i int, id string) {
			defer wg.Done()
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group = id
			out, err := s.do(ctx, id, meta, DeleteGroup(id))
			if e, ok := out.(error); ok && err == nil {
				err = e
			}
			g.ErrorCode = ErrorCode(err)
			if req.Version >= 3 {
				g.ErrorMessage = ErrorMessage(err)
			}
			resp.Groups[i] = g
		}(i, id)
	}
	wg.Wait()
	return resp
}

// DeleteGroup deletes one group: offsets first, then the group's own records.
func DeleteGroup(id string) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		g, ok := st.Groups[id]
		if !ok {
			// Kafka's shard answers only the code here (no ErrorMessage); v3's ErrorMessage
			// carries messages of errors that have one (KIP-1331 GROUP_DELETION_FAILED).
			st.Reply(c, kerr.GroupIDNotFound)
			return
		}
		if err := g.ValidateDeleteGroup(); err != nil {
			st.Reply(c, err)
			return
		}
		for _, t := range st.Offsets.Topics(id) {
			for _, p := range st.Offsets.Partitions(id, t) {
				st.WriteOffsetTombstone(id, t, p)
			}
		}
		g.WriteTombstones(st)
		delete(st.Groups, id)
		st.Reply(c, nil)
	}
}
