package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/streams/topodesc"
	stopology "github.com/muster-io/muster/internal/streams/topology"
)

// topologyDescriptionBookkeepingTimeout bounds the shard operations that record a plugin outcome
// when the request's own context is gone.
const topologyDescriptionBookkeepingTimeout = 30 * time.Second

func init() {
	RegisterHandler(93, streamsGroupTopologyDescriptionUpdate)
}

// streamsGroupTopologyDescriptionUpdate serves StreamsGroupTopologyDescriptionUpdate v0 (API 93,
// KIP-1331 UpdateStreamsGroupTopologyDescription; seed 000 broker side 2).
//
// Checks, in order: streams protocol disabled or no plugin → UNSUPPORTED_VERSION; empty MemberId
// or GroupId → INVALID_REQUEST; group not an existing streams group, or MemberId not a current
// member → UNKNOWN_MEMBER_ID (seed; Kafka answers GROUP_ID_NOT_FOUND for the group case);
// TopologyEpoch ≠ the group's → INVALID_REQUEST; a description that does not convert →
// INVALID_REQUEST. There is no broker-side size limit. Then the plugin's setTopology runs outside
// the shard loop, and a second shard operation records the outcome:
//   - success: StoredTopologyEpoch = epoch, NONE;
//   - topodesc.ErrTooLarge / ErrInvalid (permanent): LastFailedTopologyEpoch = epoch,
//     STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED (135) with a message naming
//     TOPOLOGY_DESCRIPTION_TOO_LARGE or INVALID_REQUEST (docs/kip-1331.md);
//   - anything else (transient): WARN log, no record, back-off armed, 135.
func streamsGroupTopologyDescriptionUpdate(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.StreamsGroupTopologyDescriptionUpdateRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	fail := func(err error) kmsg.Response {
		resp.ErrorCode, resp.ErrorMessage = ErrorCode(err), ErrorMessage(err)
		return resp
	}
	if s.Cfg != nil && s.Cfg.Values != nil && !streamsCfg(&State{Cfg: s.Cfg}).enabled {
		return fail(Errf(kerr.UnsupportedVersion, "The streams rebalance protocol is not enabled."))
	}
	td := s.TopologyDescriptions()
	if td == nil {
		return fail(Errf(kerr.UnsupportedVersion, "The broker has no streams group topology description plugin configured."))
	}
	switch {
	case req.MemberID == "":
		return fail(Errf(kerr.InvalidRequest, "MemberId can't be empty."))
	case req.Group == "":
		return fail(Errf(kerr.InvalidRequest, "GroupId can't be empty."))
	}
	if err := replyErr(s.do(ctx, req.Group, meta, validateTopologyDescriptionPush(req))); err != nil {
		return fail(err)
	}
	desc, err := stopology.FromRequest(&req.TopologyDescription)
	if err != nil {
		return fail(Errf(kerr.InvalidRequest, "%v", err))
	}

	// The plugin call runs here, in the request goroutine, never on the shard loop.
	var perr error
	select {
	case perr = <-td.Plugin.SetTopology(ctx, req.Group, req.TopologyEpoch, desc):
	case <-ctx.Done():
		perr = ctx.Err()
	}
	permanent := topodesc.IsPermanent(perr)
	if perr == nil {
		td.Counters.SetSuccess.Add(1)
	} else {
		td.Counters.SetError.Add(1)
		if !permanent {
			td.Log.Warn("kip-1331: setTopology failed (transient)", "group", req.Group, "topology_epoch", req.TopologyEpoch, "err", perr)
		}
	}

	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), topologyDescriptionBookkeepingTimeout)
	defer cancel()
	// A failed write is answered with its error; the drift heals when the next heartbeat
	// re-solicits (seed 000).
	if err := replyErr(s.do(bctx, req.Group, meta, recordTopologyDescriptionPush(td, req.Group, req.TopologyEpoch, perr))); err != nil {
		var gone *groupGoneAfterSet
		if errors.As(err, &gone) {
			// The group was deleted while the plugin stored the description: delete it again
			// so no orphan stays behind (fire and forget; deleteTopology is idempotent).
			go func() {
				dctx, cancel := context.WithTimeout(context.Background(), topologyDescriptionBookkeepingTimeout)
				defer cancel()
				if err := td.deleteTopology(dctx, req.Group); err != nil {
					td.Log.Warn("kip-1331: deleting the description of a group deleted during its push failed", "group", req.Group, "err", err)
				}
			}()
		}
		return fail(err)
	}
	return resp
}

// groupGoneAfterSet is the bookkeeping answer when setTopology succeeded for a group that no
// longer exists.
type groupGoneAfterSet struct{ error }

func (e *groupGoneAfterSet) Unwrap() error { return e.error }

// replyErr folds a shard call whose reply is an error (or nil) into one error.
func replyErr(out any, err error) error {
	if err != nil {
		return err
	}
	if e, ok := out.(error); ok {
		return e
	}
	return nil
}

// validateTopologyDescriptionPush is the read-only shard check of a push: group, member, epoch.
// It replies nil or the error (as the reply, so Service.do returns it unchanged).
func validateTopologyDescriptionPush(req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		st.Reply(c, checkTopologyDescriptionPush(st, req))
	}
}

func checkTopologyDescriptionPush(st *State, req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) error {
	raw, ok := st.Groups[req.Group]
	g, streams := raw.(*StreamsGroup)
	if !ok || !streams {
		return Errf(kerr.UnknownMemberID, "Group %s is not an existing streams group.", req.Group)
	}
	if _, member := g.meta[req.MemberID]; !member {
		return Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group)
	}
	if cur := g.TopologyEpoch(); req.TopologyEpoch != cur {
		return Errf(kerr.InvalidRequest, "Topology epoch %d does not match the group's current topology epoch %d.", req.TopologyEpoch, cur)
	}
	return nil
}

// recordTopologyDescriptionPush records a setTopology outcome on the shard and replies nil
// (NONE) or the error for the response.
func recordTopologyDescriptionPush(td *TopologyDescriptions, group string, epoch int32, perr error) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		g, _ := st.Groups[group].(*StreamsGroup)
		switch {
		case perr == nil:
			td.pushSettled(group, epoch)
			if g == nil {
				st.Reply(c, &groupGoneAfterSet{Errf(kerr.UnknownMemberID, "Group %s is not an existing streams group.", group)})
				return
			}
			if g.storedTopologyEpoch != epoch && g.TopologyEpoch() == epoch {
				g.WriteTopologyDescriptionEpochs(st, epoch, g.lastFailedTopologyEpoch)
			}
			st.Reply(c, nil)
		case topodesc.IsPermanent(perr):
			td.pushSettled(group, epoch)
			if g != nil && g.lastFailedTopologyEpoch != epoch && g.TopologyEpoch() == epoch {
				g.WriteTopologyDescriptionEpochs(st, g.storedTopologyEpoch, epoch)
			}
			name := "INVALID_REQUEST"
			if errors.Is(perr, topodesc.ErrTooLarge) {
				name = "TOPOLOGY_DESCRIPTION_TOO_LARGE"
			}
			st.Reply(c, Errf(kerr.StreamsTopologyDescriptionUpdateFailed, "%s: %v", name, perr))
		default:
			until := td.pushFailedTransiently(group, epoch, st.Now)
			st.Reply(c, Errf(kerr.StreamsTopologyDescriptionUpdateFailed,
				"TOPOLOGY_DESCRIPTION_UPDATE_FAILED: the topology description plugin failed (transient; re-solicited after %s): %v",
				until.Sub(st.Now), perr))
		}
	}
}
