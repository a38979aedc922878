package coordinator

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// describedStreamsShard is one shard's StreamsGroupDescribe answer plus each described streams
// group's StoredTopologyEpoch (KIP-1331).
type describedStreamsShard struct {
	Groups []kmsg.StreamsGroupDescribeResponseGroup
	Stored map[string]int32
}

// describeStreamsGroupsStored is DescribeStreamsGroups that also reports StoredTopologyEpoch.
func describeStreamsGroupsStored(ids []string, version int16) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		out := describedStreamsShard{Stored: map[string]int32{}}
		for _, id := range ids {
			out.Groups = append(out.Groups, describeStreamsGroup(st, id, version))
			if g, ok := st.Groups[id].(*StreamsGroup); ok {
				out.Stored[id] = g.storedTopologyEpoch
			}
		}
		st.Reply(c, out)
	}
}

// attachTopologyDescriptions fills TopologyDescriptionStatus and TopologyDescription of the
// successfully described groups of a StreamsGroupDescribe v1 with IncludeTopologyDescription
// (seed 000 broker side 4). Groups with an error code keep NOT_REQUESTED and are never changed.
// NOT_STORED without a plugin call when no plugin is configured, the group has no topology, or
// StoredTopologyEpoch ≠ the topology epoch; otherwise getTopology runs, in parallel across
// groups: an error → ERROR (WARN log); nothing stored → NOT_STORED and a fire-and-forget write
// resetting StoredTopologyEpoch to -1 (the next heartbeat re-solicits); else AVAILABLE.
func (s *Service) attachTopologyDescriptions(ctx context.Context, groups []kmsg.StreamsGroupDescribeResponseGroup, stored map[string]int32) {
	td := s.TopologyDescriptions()
	var wg sync.WaitGroup
	for i := range groups {
		d := &groups[i]
		if d.ErrorCode != 0 {
			continue
		}
		d.TopologyDescriptionStatus = StreamsTopologyDescriptionNotStored
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
				td.Log.Warn("kip-1331: getTopology failed", "group", d.Group, "topology_epoch", epoch, "err", res.err)
				d.TopologyDescriptionStatus = StreamsTopologyDescriptionError
			case res.d == nil:
				td.Counters.GetSuccess.Add(1)
				td.Log.Warn("kip-1331: plugin has no description the broker believed stored; re-soliciting", "group", d.Group, "topology_epoch", epoch)
				s.resetStoredTopologyEpoch(ctx, d.Group, epoch)
			default:
				td.Counters.GetSuccess.Add(1)
				d.TopologyDescriptionStatus = StreamsTopologyDescriptionAvailable
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
		_, err := s.do(bctx, group, Meta{}, func(st *State, c *Call) {
			if g, ok := st.Groups[group].(*StreamsGroup); ok && g.storedTopologyEpoch == epoch {
				g.WriteTopologyDescriptionEpochs(st, -1, g.lastFailedTopologyEpoch)
			}
			st.Reply(c, nil)
		})
		if err != nil && s.Log != nil {
			s.Log.Warn("kip-1331: resetting StoredTopologyEpoch failed", "group", group, "err", err)
		}
	}()
}
