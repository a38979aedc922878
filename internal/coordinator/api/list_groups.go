package api

import (
	"context"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ListGroups serves ListGroups v0–v5: every shard lists its groups (coordinator.ListGroups),
// StatesFilter (v4+) and TypesFilter (v5+) compared case-insensitively. A shard still loading
// sets COORDINATOR_LOAD_IN_PROGRESS (the first error wins) and contributes no groups. Groups are
// sorted by id. In cluster mode each node lists the groups of the shards it serves, as each
// Kafka broker lists those of the partitions it leads (admin clients ask every broker).
func (s *Service) ListGroups(ctx context.Context, meta coordinator.Meta, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	states := map[string]bool{}
	for _, st := range req.StatesFilter {
		states[strings.ToLower(strings.TrimSpace(st))] = true
	}
	types := map[string]bool{}
	for _, t := range req.TypesFilter {
		types[strings.ToLower(strings.TrimSpace(t))] = true
	}
	lists, errs := fanOut(ctx, s, meta, coordinator.ListGroups(states, types))
	for i, groups := range lists {
		if errs[i] != nil {
			if !s.RT.Owned(int32(i)) {
				continue // cluster mode: the node serving that shard lists its groups
			}
			if resp.ErrorCode == 0 {
				resp.ErrorCode = coordinator.ErrorCode(errs[i])
			}
			continue
		}
		resp.Groups = append(resp.Groups, groups...)
	}
	sort.Slice(resp.Groups, func(i, j int) bool { return resp.Groups[i].Group < resp.Groups[j].Group })
	return resp
}
