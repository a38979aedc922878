package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The shard side of KIP-1331 (streams group topology descriptions): the persisted epochs
// (StoredTopologyEpoch, LastFailedTopologyEpoch) live in each StreamsGroup and change only by
// records written here. The plugin itself, the solicitation back-off and the in-flight tracker
// live in the adapters (package api), which call these operations around their plugin calls.

// TopologyDescriptionState is what a successful StreamsGroupHeartbeat reports for the KIP-1331
// solicitation decision, taken on the shard.
type TopologyDescriptionState struct {
	// Current is the group's topology epoch (-1 = none); Stored and LastFailed the persisted
	// KIP-1331 epochs.
	Current, Stored, LastFailed int32
	// Stale is true when the member got STALE_TOPOLOGY.
	Stale bool
	// OldestMember is the lowest topology epoch a member of the group runs (-1: no member):
	// once it reaches Current, a rolling upgrade is complete and the previous epoch's
	// description can be deleted (muster's multi-epoch descriptions).
	OldestMember int32
	// Now is the shard time of the heartbeat.
	Now time.Time
	// Valid is false on paths that did not reach a group (errors, leaves).
	Valid bool
}

// topologyDescriptionState snapshots the group's KIP-1331 epochs for the heartbeat's member.
func (g *StreamsGroup) topologyDescriptionState(st *State, resp *kmsg.StreamsGroupHeartbeatResponse) TopologyDescriptionState {
	s := TopologyDescriptionState{Valid: true, Current: g.TopologyEpoch(), Stored: g.storedTopologyEpoch,
		LastFailed: g.lastFailedTopologyEpoch, Now: st.Now, OldestMember: g.oldestMemberTopologyEpoch()}
	for _, x := range resp.Status {
		if x.StatusCode == StreamsStatusStaleTopology {
			s.Stale = true
		}
	}
	return s
}

// KeepOnExpiry implements ExpiryVeto: with a plugin configured, an Empty streams group whose
// offsets all expired is kept while StoredTopologyEpoch ≠ -1, until the periodic cleanup deleted
// its description and cleared the field. Without a plugin, expiry ignores StoredTopologyEpoch.
func (g *StreamsGroup) KeepOnExpiry(st *State) bool {
	return g.storedTopologyEpoch != -1 && st.Cfg.TopologyDescriptions.PluginConfigured
}

// CheckTopologyDescriptionPush is the read-only check of a StreamsGroupTopologyDescriptionUpdate
// before the plugin is called: the group must be an existing streams group (UNKNOWN_MEMBER_ID,
// as KIP-1331 specifies), the member one of its members, the epoch the group's topology epoch
// (INVALID_REQUEST).
func CheckTopologyDescriptionPush(req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) func(st *State, c *Call[Ack]) {
	return func(st *State, c *Call[Ack]) {
		raw, ok := st.Groups[req.Group]
		g, streams := raw.(*StreamsGroup)
		switch {
		case !ok || !streams:
			c.Fail(st, Errf(kerr.UnknownMemberID, "Group %s is not an existing streams group.", req.Group))
		case g.meta[req.MemberID] == nil:
			c.Fail(st, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group))
		case req.TopologyEpoch != g.TopologyEpoch():
			c.Fail(st, Errf(kerr.InvalidRequest, "Topology epoch %d does not match the group's current topology epoch %d.", req.TopologyEpoch, g.TopologyEpoch()))
		default:
			c.Reply(st, Ack{})
		}
	}
}

// RecordTopologyDescriptionPush records a plugin outcome of a push at epoch: stored → the
// group's StoredTopologyEpoch becomes epoch; failed permanently (too large, invalid) → its
// LastFailedTopologyEpoch does; in both cases only while epoch is still the group's topology
// epoch. It answers whether the group still exists (a group deleted while the plugin stored its
// description leaves an orphan the adapter deletes).
func RecordTopologyDescriptionPush(group string, epoch int32, stored bool) func(st *State, c *Call[bool]) {
	return func(st *State, c *Call[bool]) {
		g, _ := st.Groups[group].(*StreamsGroup)
		if g == nil {
			c.Reply(st, false)
			return
		}
		switch {
		case stored && g.storedTopologyEpoch != epoch && g.TopologyEpoch() == epoch:
			g.WriteTopologyDescriptionEpochs(st, epoch, g.lastFailedTopologyEpoch)
		case !stored && g.lastFailedTopologyEpoch != epoch && g.TopologyEpoch() == epoch:
			g.WriteTopologyDescriptionEpochs(st, g.storedTopologyEpoch, epoch)
		}
		c.Reply(st, true)
	}
}

// StoredTopologyDescriptionToDelete answers whether DeleteGroups will delete group (an Empty
// streams group) while the plugin still holds its description (StoredTopologyEpoch ≠ -1): the
// adapter then deletes the description first.
func StoredTopologyDescriptionToDelete(group string) func(st *State, c *Call[bool]) {
	return func(st *State, c *Call[bool]) {
		g, ok := st.Groups[group].(*StreamsGroup)
		c.Reply(st, ok && g.storedTopologyEpoch != -1 && g.ValidateDeleteGroup() == nil)
	}
}

// TopologyDescriptionCleanupCandidates lists the shard's streams groups whose description the
// periodic cleanup deletes: Empty, every offset expired, StoredTopologyEpoch ≠ -1 (the value is
// the group's StoredTopologyEpoch, for ClearStoredTopologyEpoch).
func TopologyDescriptionCleanupCandidates() func(st *State, c *Call[map[string]int32]) {
	return func(st *State, c *Call[map[string]int32]) {
		eligible := map[string]int32{}
		for id, raw := range st.Groups {
			if g, ok := raw.(*StreamsGroup); ok && g.storedTopologyEpoch != -1 && g.IsEmpty() && allOffsetsExpired(st, g) {
				eligible[id] = g.storedTopologyEpoch
			}
		}
		c.Reply(st, eligible)
	}
}

// ClearStoredTopologyEpoch sets a streams group's StoredTopologyEpoch to -1 if it still equals
// expected (the description was deleted, or the plugin lost it and the next heartbeat
// re-solicits it).
func ClearStoredTopologyEpoch(group string, expected int32) func(st *State, c *Call[Ack]) {
	return func(st *State, c *Call[Ack]) {
		if g, ok := st.Groups[group].(*StreamsGroup); ok && g.storedTopologyEpoch == expected {
			g.WriteTopologyDescriptionEpochs(st, -1, g.lastFailedTopologyEpoch)
		}
		c.Reply(st, Ack{})
	}
}

// allOffsetsExpired reports whether every committed offset of g would expire in a retention
// sweep now (vacuously true without offsets): the predicate under which ExpireOffsets deletes an
// Empty group.
func allOffsetsExpired(st *State, g Group) bool {
	for _, topic := range st.Offsets.Topics(g.ID()) {
		if g.IsSubscribedToTopic(topic) {
			return false
		}
		for _, p := range st.Offsets.Partitions(g.ID(), topic) {
			v, _ := st.Offsets.Get(g.ID(), topic, p)
			if !offsetExpired(st, g, &v) {
				return false
			}
		}
	}
	return true
}

// StreamsGroupsDescribed is one shard's StreamsGroupDescribe answer, in the order asked, plus
// each described streams group's StoredTopologyEpoch (KIP-1331 describe reads the plugin only
// when it matches the topology epoch).
type StreamsGroupsDescribed struct {
	Groups               []kmsg.StreamsGroupDescribeResponseGroup
	StoredTopologyEpochs map[string]int32
}
