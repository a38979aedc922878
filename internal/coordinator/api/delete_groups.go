package api

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// DeleteGroups serves DeleteGroups v0–v3 (coordinator.DeleteGroup per group, in parallel;
// answers in request order). KIP-1331: the stored topology description of a streams group that
// will be deleted goes first. ErrorMessage (v3+) is set only for errors that carry a message;
// like Kafka's shard, GROUP_ID_NOT_FOUND and NON_EMPTY_GROUP come without one. "" is an ordinary
// group id here.
func (s *Service) DeleteGroups(ctx context.Context, meta coordinator.Meta, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	if td := s.TopologyDescriptions; td != nil {
		td.deleteBeforeDeleteGroups(ctx, s, req.Groups)
	}
	resp.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(req.Groups))
	var wg sync.WaitGroup
	for i, id := range req.Groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group = id
			_, err := do(ctx, s, id, meta, coordinator.DeleteGroup(id))
			g.ErrorCode = coordinator.ErrorCode(err)
			if req.Version >= 3 {
				g.ErrorMessage = coordinator.ErrorMessage(err)
			}
			resp.Groups[i] = g
		}()
	}
	wg.Wait()
	return resp
}
