package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FetchGroup is one group of an OffsetFetch: Topics nil means every committed offset (seed 001:
// a group's offsets are readable without joining it, in every state).
type FetchGroup struct {
	Group       string
	MemberID    *string
	MemberEpoch int32
	Topics      []kmsg.OffsetFetchRequestGroupTopic // nil = all
}

// FetchOffsets reads committed offsets of one group (reference §1.8): unknown group → all:
// empty, listed: -1 per partition, no error; v9 member validation when a member id or epoch ≥ 0
// is given. It returns the v8+ group shape.
func FetchOffsets(fg FetchGroup) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		out := kmsg.NewOffsetFetchResponseGroup()
		out.Group = fg.Group
		g, ok := st.Groups[fg.Group]
		if ok && (fg.MemberID != nil || fg.MemberEpoch >= 0) {
			id := ""
			if fg.MemberID != nil {
				id = *fg.MemberID
			}
			if err := g.ValidateOffsetFetch(st, id, fg.MemberEpoch); err != nil {
				out.ErrorCode = ErrorCode(err)
				st.Reply(c, &out)
				return
			}
		}
		partition := func(topic string, p int32) kmsg.OffsetFetchResponseGroupTopicPartition {
			rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			rp.Partition = p
			rp.Offset, rp.LeaderEpoch = -1, -1
			md := ""
			rp.Metadata = &md
			if v, ok := st.Offsets.Get(fg.Group, topic, p); ok {
				rp.Offset, rp.LeaderEpoch = v.Offset, v.LeaderEpoch
				m := v.Metadata
				rp.Metadata = &m
			}
			return rp
		}
		if fg.Topics == nil {
			for _, t := range st.Offsets.Topics(fg.Group) {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t
				for _, p := range st.Offsets.Partitions(fg.Group, t) {
					rt.Partitions = append(rt.Partitions, partition(t, p))
				}
				out.Topics = append(out.Topics, rt)
			}
		} else {
			for _, t := range fg.Topics {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rt.Partitions = append(rt.Partitions, partition(t.Topic, p))
				}
				out.Topics = append(out.Topics, rt)
			}
		}
		st.Reply(c, &out)
	}
}

func init() { RegisterHandler(9, offsetFetch) }

// offsetFetch serves OffsetFetch v1–v9: v8+ carries many groups (fanned out per shard in
// parallel), older versions one group with top-level fields; v0 → UNSUPPORTED_VERSION.
func offsetFetch(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	var groups []FetchGroup
	if req.Version >= 8 {
		for _, g := range req.Groups {
			fg := FetchGroup{Group: g.Group, MemberID: g.MemberID, MemberEpoch: g.MemberEpoch, Topics: g.Topics}
			groups = append(groups, fg)
		}
	} else {
		fg := FetchGroup{Group: req.Group, MemberEpoch: -1}
		if req.Topics != nil {
			fg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
			for _, t := range req.Topics {
				fg.Topics = append(fg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		groups = append(groups, fg)
	}
	results := make([]kmsg.OffsetFetchResponseGroup, len(groups))
	done := make(chan struct{}, len(groups))
	for i, fg := range groups {
		go func(i int, fg FetchGroup) {
			defer func() { done <- struct{}{} }()
			out, err := s.do(ctx, fg.Group, meta, FetchOffsets(fg))
			if err != nil {
				g := kmsg.NewOffsetFetchResponseGroup()
				g.Group = fg.Group
				g.ErrorCode = ErrorCode(err)
				results[i] = g
				return
			}
			results[i] = *out.(*kmsg.OffsetFetchResponseGroup)
		}(i, fg)
	}
	for range groups {
		<-done
	}
	if req.Version < 1 {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
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
