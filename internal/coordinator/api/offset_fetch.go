package api

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// OffsetFetch serves OffsetFetch v1–v9 (v0 answers UNSUPPORTED_VERSION): v8+ carries many groups
// (each read on its shard, in parallel), older versions one group with top-level fields. Groups
// answer in request order.
func (s *Service) OffsetFetch(ctx context.Context, meta coordinator.Meta, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version < 1 {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
	}
	var groups []coordinator.FetchGroup
	if req.Version >= 8 {
		for _, g := range req.Groups {
			groups = append(groups, coordinator.FetchGroup{Group: g.Group, MemberID: g.MemberID, MemberEpoch: g.MemberEpoch, Topics: g.Topics})
		}
	} else {
		fg := coordinator.FetchGroup{Group: req.Group, MemberEpoch: -1}
		if req.Topics != nil {
			fg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
			for _, t := range req.Topics {
				fg.Topics = append(fg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		groups = append(groups, fg)
	}
	results := make([]kmsg.OffsetFetchResponseGroup, len(groups))
	fetch := func(i int) {
		fg := groups[i]
		out, err := do(ctx, s, fg.Group, meta, coordinator.FetchOffsets(fg))
		if err != nil {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group = fg.Group
			g.ErrorCode = coordinator.ErrorCode(err)
			results[i] = g
			return
		}
		results[i] = *out
	}
	if len(groups) == 1 {
		fetch(0)
	} else {
		var wg sync.WaitGroup
		for i := range groups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fetch(i)
			}()
		}
		wg.Wait()
	}
	if req.Version >= 8 {
		resp.Groups = results
		return resp
	}
	g := results[0]
	resp.ErrorCode = g.ErrorCode
	if g.ErrorCode != 0 && req.Version < 2 {
		// v0–v1 have no top-level error: every requested partition carries it (Kafka's
		// OffsetFetchRequest.getErrorResponse).
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.ErrorCode = p, -1, g.ErrorCode
				md := ""
				rp.Metadata = &md
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	for _, t := range g.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
