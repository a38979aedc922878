package api

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/metadata"
)

// OffsetFetch serves OffsetFetch v1–v10 (v0 answers UNSUPPORTED_VERSION): v8+ carries many
// groups, older versions one group with top-level fields. Groups answer in request order. v10
// names topics by id (KAFKA-14691, byTopicID). A group is read from its shard's published
// offsets (the last durable batch's version, OffsetViews) when its shard is active; a fetch
// bound to a member (v9 member id or epoch, validated by the group) or asking for stable
// offsets (RequireStable: pending transactional offsets are the shard's) runs on the shard,
// several groups in parallel.
func (s *Service) OffsetFetch(ctx context.Context, meta coordinator.Meta, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version < 1 {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
	}
	var groups []coordinator.FetchGroup
	var ids []*fetchByID
	if req.Version >= 8 {
		im := s.image()
		for _, g := range req.Groups {
			fg := coordinator.FetchGroup{Group: g.Group, MemberID: g.MemberID, MemberEpoch: g.MemberEpoch, Topics: g.Topics,
				RequireStable: req.RequireStable}
			if req.Version >= 10 {
				var byID *fetchByID
				fg.Topics, byID = resolveFetchTopics(im, g.Topics)
				ids = append(ids, byID)
			}
			groups = append(groups, fg)
		}
	} else {
		fg := coordinator.FetchGroup{Group: req.Group, MemberEpoch: -1, RequireStable: req.Version >= 7 && req.RequireStable}
		if req.Topics != nil {
			fg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
			for _, t := range req.Topics {
				fg.Topics = append(fg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		groups = append(groups, fg)
	}
	results := make([]kmsg.OffsetFetchResponseGroup, len(groups))
	onShard := make([]int, 0, len(groups))
	for i := range groups {
		if v := s.publishedOffsets(&groups[i]); v != nil {
			results[i] = *coordinator.FetchOffsetsFrom(*v, groups[i])
			continue
		}
		onShard = append(onShard, i)
	}
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
	if len(onShard) == 1 {
		fetch(onShard[0])
	} else if len(onShard) > 1 {
		var wg sync.WaitGroup
		for _, i := range onShard {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fetch(i)
			}()
		}
		wg.Wait()
	}
	if req.Version >= 10 {
		for i := range results {
			ids[i].answer(s.image(), &results[i])
		}
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
			// Each partition keeps its own error (v7 RequireStable: UNSTABLE_OFFSET_COMMIT), as
			// Kafka's OffsetFetchResponse does when it answers v2–v7 from the group shape.
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata
			rp.ErrorCode = p.ErrorCode
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// fetchByID is what OffsetFetch v10 needs to answer one group by topic id: each requested
// topic's id and whether the metadata image knew it (nil topics = every committed offset).
type fetchByID struct {
	all     bool
	ids     [][16]byte
	unknown []bool
}

// resolveFetchTopics names the requested topics of one v10 group by their ids in the image
// (an unknown id gets no name, so the coordinator finds no offset for it).
func resolveFetchTopics(im *metadata.Image, topics []kmsg.OffsetFetchRequestGroupTopic) ([]kmsg.OffsetFetchRequestGroupTopic, *fetchByID) {
	if topics == nil {
		return nil, &fetchByID{all: true}
	}
	b := &fetchByID{ids: make([][16]byte, len(topics)), unknown: make([]bool, len(topics))}
	named := make([]kmsg.OffsetFetchRequestGroupTopic, len(topics))
	for i, t := range topics {
		named[i] = t
		b.ids[i] = t.TopicID
		name, ok := im.TopicName(t.TopicID)
		if !ok || t.TopicID == ([16]byte{}) {
			b.unknown[i] = true
			name = ""
		}
		named[i].Topic = name
	}
	return named, b
}

// answer rewrites one group's answer for v10 (Kafka's KafkaApis.handleOffsetFetchRequest with
// topic ids): requested topics carry their ids, and an id the image did not know answers
// UNKNOWN_TOPIC_ID for each of its partitions; fetching every offset names each topic by its
// current id and leaves out the offsets of a topic the image no longer has (a deleted topic has
// no id to name it by).
func (b *fetchByID) answer(im *metadata.Image, g *kmsg.OffsetFetchResponseGroup) {
	if g.ErrorCode != 0 {
		return
	}
	if b.all {
		kept := g.Topics[:0]
		for _, t := range g.Topics {
			id, _, ok := im.TopicID(t.Topic)
			if !ok {
				continue
			}
			t.TopicID = id
			kept = append(kept, t)
		}
		g.Topics = kept
		return
	}
	for i := range g.Topics {
		if i >= len(b.ids) {
			break
		}
		t := &g.Topics[i]
		t.TopicID = b.ids[i]
		if !b.unknown[i] {
			continue
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			md := ""
			p.ErrorCode, p.Offset, p.LeaderEpoch, p.Metadata = kerr.UnknownTopicID.Code, -1, -1, &md
		}
	}
}

// PublishedOffsets returns the published offsets of group's shard (its last durable batch's
// version) when the shard is active: what OffsetFetch without RequireStable and without a
// member answers from. ok is false while the shard loads or moves (read it with OffsetFetch).
func (s *Service) PublishedOffsets(group string) (v *coordinator.OffsetsView, ok bool) {
	fg := coordinator.FetchGroup{Group: group, MemberEpoch: -1}
	v = s.publishedOffsets(&fg)
	return v, v != nil
}

// publishedOffsets returns the published offsets fg can be answered from: its shard's, when
// the shard is active and fg needs nothing of the shard's live state.
func (s *Service) publishedOffsets(fg *coordinator.FetchGroup) *coordinator.OffsetsView {
	if s.Offsets == nil || fg.RequireStable || fg.MemberBound() {
		return nil
	}
	shard := coordinator.ShardFor(fg.Group, s.RT.Shards())
	if !s.RT.Active(shard) {
		return nil
	}
	return s.Offsets.view(shard)
}
