package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// StreamsGroupHeartbeat serves StreamsGroupHeartbeat v0–v1 (KIP-1071,
// coordinator.StreamsGroupHeartbeat). After the shard answered, the internal topics the group
// needs are created (outside the shard loop: creation writes to disk; members see
// MISSING_INTERNAL_TOPICS until they exist; authorizeStreamsInternalTopics), and KIP-1331
// decides whether to solicit the topology description.
func (s *Service) StreamsGroupHeartbeat(ctx context.Context, r Req, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
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
	out, err := do(ctx, s, req.Group, r.Meta, coordinator.StreamsGroupHeartbeat(req))
	s.noteRefused(req.Group, err)
	if err != nil {
		return coordinator.StreamsGroupHeartbeatError(req, err)
	}
	if authorizeStreamsInternalTopics(r, out) {
		s.createStreamsInternalTopics(out.Create)
	}
	if td := s.TopologyDescriptions; td != nil {
		td.maybeSolicit(r.Meta, req, out)
	}
	return out.Response
}
