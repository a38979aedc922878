package api

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// StreamsGroupHeartbeat serves StreamsGroupHeartbeat v0–v1 (KIP-1071,
// coordinator.StreamsGroupHeartbeat). After the shard answered, the internal topics the group
// needs are created (outside the shard loop: creation writes to disk; members see
// MISSING_INTERNAL_TOPICS until they exist), and KIP-1331 decides whether to solicit the
// topology description.
func (s *Service) StreamsGroupHeartbeat(ctx context.Context, meta coordinator.Meta, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	if !s.Cfg.Streams.Enabled {
		return coordinator.StreamsGroupHeartbeatError(req, coordinator.Errf(kerr.UnsupportedVersion, "The streams rebalance protocol is not enabled."))
	}
	var err error
	if req.MemberEpoch <= 0 { // joins and leaves always write
		err = s.refuseWrite()
	} else {
		err = s.refuseFrozen(req.Group)
	}
	if err != nil {
		return coordinator.StreamsGroupHeartbeatError(req, err)
	}
	out, err := do(ctx, s, req.Group, meta, coordinator.StreamsGroupHeartbeat(req))
	s.noteRefused(req.Group, err)
	if err != nil {
		return coordinator.StreamsGroupHeartbeatError(req, err)
	}
	s.createStreamsInternalTopics(out.Create)
	if td := s.TopologyDescriptions; td != nil {
		td.maybeSolicit(meta, req, out)
	}
	return out.Response
}

// createStreamsInternalTopics creates the internal topics a streams group needs.
func (s *Service) createStreamsInternalTopics(topics []coordinator.StreamsInternalTopic) {
	if len(topics) == 0 || s.Topics == nil {
		return
	}
	for _, t := range topics {
		if err := s.Topics.CreateTopic(t.Name, t.Partitions, t.Configs); err != nil {
			s.limitedLog().LogKey("create "+t.Name, slog.LevelWarn, "streams: creating internal topic failed", "topic", t.Name, "partitions", t.Partitions, "err", err)
		}
	}
}
