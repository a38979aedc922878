package api

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/streams/topodesc"
	stopology "github.com/muster-io/muster/internal/streams/topology"
)

// topologyDescriptionBookkeepingTimeout bounds the shard operations that record a plugin outcome
// when the request's own context is gone.
const topologyDescriptionBookkeepingTimeout = 30 * time.Second

// StreamsGroupTopologyDescriptionUpdate serves StreamsGroupTopologyDescriptionUpdate v0 (API 93,
// KIP-1331's UpdateStreamsGroupTopologyDescription).
//
// Checks, in order: streams protocol disabled or no plugin → UNSUPPORTED_VERSION; empty MemberId
// or GroupId → INVALID_REQUEST; then coordinator.CheckTopologyDescriptionPush on the shard
// (UNKNOWN_MEMBER_ID for an unknown group or member, as KIP-1331 specifies where Kafka answers
// GROUP_ID_NOT_FOUND for the group case; INVALID_REQUEST for another topology epoch); a
// description that does not convert → INVALID_REQUEST. There is no broker-side size limit. Then
// the plugin's setTopology runs here, outside the shard loop, and the outcome is recorded:
//   - success: StoredTopologyEpoch = epoch, NONE;
//   - topodesc.ErrTooLarge / ErrInvalid (permanent): LastFailedTopologyEpoch = epoch,
//     STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED (135) with a message naming
//     TOPOLOGY_DESCRIPTION_TOO_LARGE or INVALID_REQUEST (docs/kip-1331.md);
//   - anything else (transient): no record, back-off armed, 135.
//
// The client's message is muster's own: what the plugin (or the remote store behind it) said
// goes to the broker log only, bounded in size (pluginErrorForLog), never into the response.
func (s *Service) StreamsGroupTopologyDescriptionUpdate(ctx context.Context, meta coordinator.Meta, req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	fail := func(err error) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
		resp.ErrorCode, resp.ErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
		return resp
	}
	if !s.Cfg.Streams.Enabled {
		return fail(coordinator.Errf(kerr.UnsupportedVersion, "The streams rebalance protocol is not enabled."))
	}
	td := s.TopologyDescriptions
	if td == nil {
		return fail(coordinator.Errf(kerr.UnsupportedVersion, "The broker has no streams group topology description plugin configured."))
	}
	switch {
	case req.MemberID == "":
		return fail(coordinator.Errf(kerr.InvalidRequest, "MemberId can't be empty."))
	case req.Group == "":
		return fail(coordinator.Errf(kerr.InvalidRequest, "GroupId can't be empty."))
	}
	if err := s.refuseWrite(); err != nil {
		return fail(err)
	}
	if _, err := do(ctx, s, req.Group, meta, coordinator.CheckTopologyDescriptionPush(req)); err != nil {
		return fail(err)
	}
	desc, err := stopology.FromRequest(&req.TopologyDescription)
	if err != nil {
		return fail(coordinator.Errf(kerr.InvalidRequest, "%v", err))
	}

	var perr error
	select {
	case perr = <-td.Plugin.SetTopology(ctx, req.Group, req.TopologyEpoch, desc):
	case <-ctx.Done():
		perr = ctx.Err()
	}
	if perr != nil && !topodesc.IsPermanent(perr) {
		td.Counters.SetError.Add(1)
		td.Log.Warn("kip-1331: setTopology failed (transient)", "group", req.Group, "topology_epoch", req.TopologyEpoch, "err", pluginErrorForLog(perr))
		now := s.RT.Clock().Now()
		until := td.pushFailedTransiently(req.Group, req.TopologyEpoch, now)
		return fail(coordinator.Errf(kerr.StreamsTopologyDescriptionUpdateFailed,
			"TOPOLOGY_DESCRIPTION_UPDATE_FAILED: the topology description plugin could not store the description of topology epoch %d (transient; re-solicited after %s). The broker log has the details.",
			req.TopologyEpoch, until.Sub(now)))
	}
	if perr == nil {
		td.Counters.SetSuccess.Add(1)
		td.afterStored(req.Group, req.TopologyEpoch)
	} else {
		td.Counters.SetError.Add(1)
		td.Log.Warn("kip-1331: setTopology refused the description (permanent)", "group", req.Group, "topology_epoch", req.TopologyEpoch, "err", pluginErrorForLog(perr))
	}
	td.pushSettled(req.Group, req.TopologyEpoch)

	// A failed write is answered with its error; the drift heals when the next heartbeat
	// re-solicits.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), topologyDescriptionBookkeepingTimeout)
	defer cancel()
	exists, err := do(bctx, s, req.Group, meta, coordinator.RecordTopologyDescriptionPush(req.Group, req.TopologyEpoch, perr == nil))
	switch {
	case err != nil:
		return fail(err)
	case !exists && perr == nil:
		// The group was deleted while the plugin stored the description: delete it again so no
		// orphan stays behind (fire and forget; deleteTopology is idempotent).
		go func() {
			dctx, cancel := context.WithTimeout(context.Background(), topologyDescriptionBookkeepingTimeout)
			defer cancel()
			if err := td.deleteTopology(dctx, req.Group); err != nil {
				td.Log.Warn("kip-1331: deleting the description of a group deleted during its push failed", "group", req.Group, "err", err)
			}
		}()
		return fail(coordinator.Errf(kerr.UnknownMemberID, "Group %s is not an existing streams group.", req.Group))
	case perr != nil:
		name, what := "INVALID_REQUEST", "invalid"
		if errors.Is(perr, topodesc.ErrTooLarge) {
			name, what = "TOPOLOGY_DESCRIPTION_TOO_LARGE", "too large"
		}
		return fail(coordinator.Errf(kerr.StreamsTopologyDescriptionUpdateFailed,
			"%s: the topology description plugin refused the description of topology epoch %d as %s; it is not solicited again at this epoch. The broker log has the details.",
			name, req.TopologyEpoch, what))
	}
	return resp
}

// maxPluginErrorLog bounds what a plugin error contributes to one log line.
const maxPluginErrorLog = 1024

// pluginErrorForLog is a plugin error as the broker logs it: its text cut to maxPluginErrorLog
// bytes (at a rune boundary), since it may carry what a remote store answered.
func pluginErrorForLog(err error) string {
	msg := err.Error()
	if len(msg) <= maxPluginErrorLog {
		return msg
	}
	cut := maxPluginErrorLog
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + fmt.Sprintf("… (%d bytes cut)", len(msg)-cut)
}
