package api

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// StreamsGroupDescribe serves StreamsGroupDescribe v0–v1 (KIP-1071): each shard describes its
// groups (coordinator.DescribeStreamsGroups); answers come in request order. With
// IncludeTopologyDescription (v1, KIP-1331) the stored topology descriptions are attached, to
// the groups whose topics the caller may describe (hideUndescribableTopologies).
func (s *Service) StreamsGroupDescribe(ctx context.Context, r Req, req *kmsg.StreamsGroupDescribeRequest) *kmsg.StreamsGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	resp.Groups = make([]kmsg.StreamsGroupDescribeResponseGroup, len(req.Groups))
	stored := map[string]int32{}
	order, byShard := s.byShard(req.Groups)
	where := map[string][]int{}
	for i, id := range req.Groups {
		where[id] = append(where[id], i)
	}
	for _, sh := range order {
		ids := byShard[sh]
		res, err := doShard(ctx, s, sh, r.Meta, coordinator.DescribeStreamsGroups(ids, req.Version))
		for k, id := range ids {
			var d kmsg.StreamsGroupDescribeResponseGroup
			if err != nil {
				d = kmsg.NewStreamsGroupDescribeResponseGroup()
				d.Group, d.ErrorCode, d.ErrorMessage = id, coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
			} else {
				d = res.Groups[k]
			}
			for _, i := range where[id] {
				resp.Groups[i] = d
			}
		}
		if err == nil {
			for id, e := range res.StoredTopologyEpochs {
				stored[id] = e
			}
		}
	}
	hideUndescribableTopologies(r, resp.Groups)
	if req.Version >= 1 && req.IncludeTopologyDescription {
		s.attachTopologyDescriptions(ctx, resp.Groups, stored)
	}
	return resp
}

// attachTopologyDescriptions fills TopologyDescriptionStatus and TopologyDescription of the
// successfully described groups of a StreamsGroupDescribe v1 with IncludeTopologyDescription
// (KIP-1331). Groups with an error code keep NOT_REQUESTED and are never changed. NOT_STORED
// without a plugin call when no plugin is configured, the group has no topology, or
// StoredTopologyEpoch ≠ the topology epoch; otherwise getTopology runs, in parallel across
// groups: an error → ERROR (WARN log); nothing stored → NOT_STORED and a fire-and-forget write
// resetting StoredTopologyEpoch to -1 (the next heartbeat re-solicits); else AVAILABLE.
func (s *Service) attachTopologyDescriptions(ctx context.Context, groups []kmsg.StreamsGroupDescribeResponseGroup, stored map[string]int32) {
	td := s.TopologyDescriptions
	var wg sync.WaitGroup
	for i := range groups {
		d := &groups[i]
		if d.ErrorCode != 0 {
			continue
		}
		d.TopologyDescriptionStatus = coordinator.StreamsTopologyDescriptionNotStored
		epoch, ok := stored[d.Group]
		if td == nil || !ok || epoch < 0 || d.Topology == nil || d.Topology.Epoch != epoch {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res struct {
				err error
				d   *kmsg.StreamsGroupDescribeResponseGroupTopologyDescription
			}
			select {
			case r := <-td.Plugin.GetTopology(ctx, d.Group, epoch):
				res.err = r.Err
				if r.Err == nil && r.Description != nil {
					res.d = r.Description.ToDescribe()
				}
			case <-ctx.Done():
				res.err = ctx.Err()
			}
			switch {
			case res.err != nil:
				td.Counters.GetError.Add(1)
				td.Log.Warn("kip-1331: getTopology failed", "group", d.Group, "topology_epoch", epoch, "err", pluginErrorForLog(res.err))
				d.TopologyDescriptionStatus = coordinator.StreamsTopologyDescriptionError
			case res.d == nil:
				td.Counters.GetSuccess.Add(1)
				td.Log.Warn("kip-1331: plugin has no description the broker believed stored; re-soliciting", "group", d.Group, "topology_epoch", epoch)
				s.resetStoredTopologyEpoch(ctx, d.Group, epoch)
			default:
				td.Counters.GetSuccess.Add(1)
				d.TopologyDescriptionStatus = coordinator.StreamsTopologyDescriptionAvailable
				d.TopologyDescription = res.d
			}
		}()
	}
	wg.Wait()
}

// resetStoredTopologyEpoch writes StoredTopologyEpoch = -1 for group if it still equals epoch,
// in the background (fire and forget; a failure is logged and the next describe retries).
func (s *Service) resetStoredTopologyEpoch(ctx context.Context, group string, epoch int32) {
	go func() {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), topologyDescriptionBookkeepingTimeout)
		defer cancel()
		if _, err := do(bctx, s, group, coordinator.Meta{}, coordinator.ClearStoredTopologyEpoch(group, epoch)); err != nil && s.Log != nil {
			s.Log.Warn("kip-1331: resetting StoredTopologyEpoch failed", "group", group, "err", err)
		}
	}()
}
