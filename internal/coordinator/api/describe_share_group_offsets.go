package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// DescribeShareGroupOffsets serves DescribeShareGroupOffsets v0–v1 (KIP-932, KIP-1226 lag): each
// shard describes the share-partitions of its groups (coordinator.DescribeShareGroupOffsets),
// answers in request order. A null topic list means every share-partition of the group. The lag
// (v1) is what remains to be delivered and acknowledged: the high watermark minus the SPSO minus
// the records past the SPSO already acknowledged or archived; -1 for a partition never started.
func (s *Service) DescribeShareGroupOffsets(ctx context.Context, meta coordinator.Meta, req *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	ids := make([]string, len(req.Groups))
	queries := map[string]coordinator.ShareOffsetsQuery{}
	for i, g := range req.Groups {
		ids[i] = g.GroupID
		q := coordinator.ShareOffsetsQuery{Group: g.GroupID}
		if g.Topics != nil {
			q.Topics = map[string][]int32{}
			for _, t := range g.Topics {
				if _, ok := q.Topics[t.Topic]; !ok {
					q.Order = append(q.Order, t.Topic)
				}
				q.Topics[t.Topic] = append(q.Topics[t.Topic], t.Partitions...)
			}
		}
		queries[g.GroupID] = q
	}
	groups := perShard(ctx, s, meta, ids,
		func(ids []string) func(*coordinator.State, *coordinator.Call[[]coordinator.ShareOffsetsGroup]) {
			qs := make([]coordinator.ShareOffsetsQuery, len(ids))
			for i, id := range ids {
				qs[i] = queries[id]
			}
			return coordinator.DescribeShareGroupOffsets(qs)
		},
		func(id string, err error) coordinator.ShareOffsetsGroup {
			return coordinator.ShareOffsetsGroup{Group: id, Err: err}
		})
	for _, g := range groups {
		rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		rg.GroupID = g.Group
		rg.ErrorCode, rg.ErrorMessage = coordinator.ErrorCode(g.Err), coordinator.ErrorMessage(g.Err)
		rg.Topics = []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
		for _, t := range g.Topics {
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p.Partition, p.StartOffset, -1, -1
				rp.ErrorCode, rp.ErrorMessage = coordinator.ErrorCode(p.Err), coordinator.ErrorMessage(p.Err)
				if p.Err == nil && p.StartOffset >= 0 {
					rp.LeaderEpoch = 0
					if s.ShareLog != nil {
						if _, hw, err := s.ShareLog.PartitionOffsets(t.TopicID, p.Partition); err == nil {
							rp.Lag = max(hw-p.StartOffset-p.Terminal, 0)
						}
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rg.Topics = append(rg.Topics, rt)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}
