package coordinator

import (
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fixed values of the streams heartbeat response.
const (
	// StreamsAcceptableRecoveryLag is the lag (records) up to which a member counts as caught up
	// on a task (Kafka Streams' acceptable.recovery.lag default); sent to members and given to
	// the assignor.
	StreamsAcceptableRecoveryLag int64 = 10000
	// streamsTaskOffsetInterval is how often members report task offsets (Kafka's default of
	// group.streams.task.offset.interval.ms).
	streamsTaskOffsetInterval = 60 * time.Second
)

// sameAssignmentConfigs is sameStringMap(m, c.assignmentConfigs()) without building the map.
func (c StreamsConfig) sameAssignmentConfigs(m map[string]string) bool {
	if len(m) != 2 {
		return false
	}
	s, ok1 := m["num.standby.replicas"]
	w, ok2 := m["num.warmup.replicas"]
	return ok1 && ok2 && s == strconv.Itoa(c.NumStandbyReplicas) && w == strconv.Itoa(c.NumWarmupReplicas)
}

// assignmentConfigs are the assignment configs stored with the group epoch; a change bumps it.
func (c StreamsConfig) assignmentConfigs() map[string]string {
	return map[string]string{
		"num.standby.replicas": strconv.Itoa(c.NumStandbyReplicas),
		"num.warmup.replicas":  strconv.Itoa(c.NumWarmupReplicas),
	}
}

// StreamsHeartbeatResult is what the StreamsGroupHeartbeat operation returns: the response and
// the internal topics the broker must create outside the shard loop (Kafka's KafkaApis creates
// them after the coordinator answered).
type StreamsHeartbeatResult struct {
	Response *kmsg.StreamsGroupHeartbeatResponse
	Create   []StreamsInternalTopic
	// TopologyDescription feeds the KIP-1331 solicitation decision (see
	// TopologyDescriptions.ShouldSolicit); zero on error and leave paths.
	TopologyDescription TopologyDescriptionState
}

// TopicsToCreate lists the internal topics to create as name → partition count.
func (r *StreamsHeartbeatResult) TopicsToCreate() map[string]int32 {
	out := map[string]int32{}
	for _, t := range r.Create {
		out[t.Name] = t.Partitions
	}
	return out
}

func streamsHeartbeatError(req *kmsg.StreamsGroupHeartbeatRequest, err error) *kmsg.StreamsGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	resp.ErrorCode = ErrorCode(err)
	resp.ErrorMessage = ErrorMessage(err)
	resp.MemberID = req.MemberID
	resp.MemberEpoch = req.MemberEpoch
	return resp
}

// validateStreamsHeartbeat is Kafka's throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures
// then throwIfStreamsGroupHeartbeatRequestIsInvalid (GroupCoordinatorService), in their order and
// with their messages: INVALID_REQUEST (or STREAMS_INVALID_TOPOLOGY).
func validateStreamsHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) error {
	if req.Topology != nil {
		for _, s := range req.Topology.Subtopologies {
			if len(s.SourceTopicRegex) > 0 {
				return Errf(kerr.InvalidRequest, "Regular expressions for source topics are not supported yet.")
			}
		}
	}
	switch {
	case blankString(req.MemberID):
		return Errf(kerr.InvalidRequest, "MemberId can't be empty.")
	case blankString(req.Group):
		return Errf(kerr.InvalidRequest, "GroupId can't be empty.")
	case req.InstanceID != nil && blankString(*req.InstanceID):
		return Errf(kerr.InvalidRequest, "InstanceId can't be empty.")
	case req.RackID != nil && blankString(*req.RackID):
		return Errf(kerr.InvalidRequest, "RackId can't be empty.")
	}
	switch {
	case req.MemberEpoch == 0:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return Errf(kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request.")
		case len(req.ActiveTasks) != 0:
			return Errf(kerr.InvalidRequest, "ActiveTasks must be empty when (re-)joining.")
		case len(req.StandbyTasks) != 0:
			return Errf(kerr.InvalidRequest, "StandbyTasks must be empty when (re-)joining.")
		case len(req.WarmupTasks) != 0:
			return Errf(kerr.InvalidRequest, "WarmupTasks must be empty when (re-)joining.")
		case req.Topology == nil:
			return Errf(kerr.InvalidRequest, "Topology must be non-null when (re-)joining.")
		}
	case req.MemberEpoch == -2:
		if req.InstanceID == nil {
			return Errf(kerr.InvalidRequest, "InstanceId can't be null.")
		}
	case req.MemberEpoch < -2:
		return Errf(kerr.InvalidRequest, "MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch)
	}
	nonNil := 0
	for _, l := range [][]kmsg.TaskIDs{req.ActiveTasks, req.StandbyTasks, req.WarmupTasks} {
		if l != nil {
			nonNil++
		}
	}
	if nonNil != 0 && nonNil != 3 {
		return Errf(kerr.InvalidRequest, "If one task-type is non-null, all must be non-null.")
	}
	if req.MemberEpoch != 0 && req.Topology != nil {
		return Errf(kerr.InvalidRequest, "Topology can only be provided when (re-)joining.")
	}
	for _, l := range [][]kmsg.TaskIDs{req.ActiveTasks, req.StandbyTasks, req.WarmupTasks} {
		for _, t := range l {
			for _, p := range t.Partitions {
				if p < 0 {
					return Errf(kerr.InvalidRequest, "Task %d for subtopology %s is invalid.", p, t.SubtopologyID)
				}
			}
		}
	}
	return nil
}

// StreamsGroupHeartbeat handles StreamsGroupHeartbeat v0–v1 on the shard (KIP-1071;
// Kafka's GroupMetadataManager.streamsGroupHeartbeat). It replies with a
// *StreamsHeartbeatResult. "KIP-1071 heartbeat step N" in comments is step N of the KIP's
// StreamsGroupHeartbeat handling.
func StreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) func(st *State, c *Call[*StreamsHeartbeatResult]) {
	return func(st *State, c *Call[*StreamsHeartbeatResult]) {
		res, err := streamsHeartbeat(st, &c.Meta, req)
		if err != nil {
			res = &StreamsHeartbeatResult{Response: streamsHeartbeatError(req, err)}
		}
		c.Reply(st, res)
	}
}

func streamsHeartbeat(st *State, c *Meta, req *kmsg.StreamsGroupHeartbeatRequest) (*StreamsHeartbeatResult, error) {
	if err := validateStreamsHeartbeat(req); err != nil {
		return nil, err
	}
	cfg := st.streamsConfig(req.Group)
	if req.MemberEpoch < 0 {
		return streamsLeave(st, req)
	}
	var (
		g         *StreamsGroup
		err       error
		replacing string
		joinTopo  *StreamsTopology
	)
	if req.MemberEpoch == 0 {
		g, replacing, joinTopo, err = streamsJoinGroup(st, req, cfg)
	} else {
		g, err = streamsExistingMember(st, req)
	}
	if err != nil {
		return nil, err
	}
	id := req.MemberID
	bump := false
	var causes []RebalanceCause // why the epoch is bumped (rebalance history)

	// Member metadata (KIP-1071 heartbeat step 4): any change bumps the group epoch.
	base := g.meta[id]
	if base == nil && replacing != "" {
		base = g.meta[replacing]
	}
	nm := streamsUpdatedMeta(base, req, c, joinTopo)
	if replacing != "" {
		g.replaceStaticMember(st, replacing, id)
	}
	if old := g.meta[id]; old == nil || !old.equal(nm) {
		g.writeMemberMeta(st, id, nm)
		if base == nil || !base.equal(nm) {
			bump = true
			causes = append(causes, streamsMemberCause(id, base, nm))
		}
	}
	if req.MemberEpoch == 0 {
		cur := g.currentOf(id)
		if req.InstanceID != nil && g.current[id] != nil {
			// A static member (re-)joining keeps its tasks at member epoch 0 (as KIP-848 static
			// members do); reconciliation then moves it to the target epoch.
			if cur.MemberEpoch != 0 || cur.PreviousMemberEpoch != 0 {
				g.writeCurrent(st, id, &streamsCurrent{State: cur.State,
					Assigned: cur.Assigned.clone(), PendingRevocation: cur.PendingRevocation.clone()})
				g.endpointEpoch++
			}
		} else if cur.MemberEpoch != 0 || cur.State != streamsMemberStable || !cur.Assigned.empty() || !cur.PendingRevocation.empty() || g.current[id] == nil {
			// A dynamic member (re-)joining starts from an empty assignment at epoch 0.
			g.writeCurrent(st, id, &streamsCurrent{Assigned: newStreamsTaskSet(), PendingRevocation: newStreamsTaskSet()})
			g.endpointEpoch++
		}
	}

	// In-memory member state.
	soft := g.memberSoft(id)
	soft.EndpointEpoch = req.EndpointInformationEpoch
	if req.TaskOffsets != nil {
		soft.TaskOffsets = taskOffsetMap(req.TaskOffsets)
	}
	if req.TaskEndOffsets != nil {
		soft.TaskEndOffsets = taskOffsetMap(req.TaskEndOffsets)
	}
	if req.ShutdownApplication {
		g.shutdownRequested = true
	}
	g.scheduleSession(st, id, cfg)

	// Topology configuration and metadata hash (KIP-1071 heartbeat step 5; the hash is KIP-1101's).
	hash, validated := g.reconfigure(st)
	if hash != g.metadataHash || validated != g.validatedTopologyEpoch ||
		!cfg.sameAssignmentConfigs(g.lastAssignmentConfigs) {
		bump = true
		causes = append(causes, g.groupCauses(cfg, hash, validated, len(causes) > 0)...)
	}
	if bump {
		g.bumpEpoch(st, cfg, hash, validated, causes)
	}

	// Target assignment and reconciliation (KIP-1071 heartbeat step 6).
	delayed, err := g.maybeAssign(st, cfg)
	if err != nil {
		return nil, err
	}
	// Only a member with tasks pending revocation looks at what it reports owning.
	var owned *streamsTaskSet
	if g.currentOf(id).State == streamsMemberUnrevokedTasks {
		owned = ownedFromRequest(req)
	}
	changed := g.reconcile(st, id, owned, delayed)

	// Response.
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	cur := g.currentOf(id)
	resp.MemberID = id
	resp.MemberEpoch = cur.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(cfg.HeartbeatInterval / time.Millisecond)
	resp.TaskOffsetIntervalMillis = int32(streamsTaskOffsetInterval / time.Millisecond)
	resp.AcceptableRecoveryLagLegacy = int32(StreamsAcceptableRecoveryLag)
	resp.AcceptableRecoveryLag = StreamsAcceptableRecoveryLag
	resp.TopologyDescriptionRequired = false
	resp.Status = g.statuses(id, delayed)
	if req.MemberEpoch == 0 || changed || req.MemberEpoch != cur.MemberEpoch {
		resp.ActiveTasks = taskIDs(cur.Assigned.Active)
		resp.StandbyTasks = taskIDs(cur.Assigned.Standby)
		resp.WarmupTasks = taskIDs(cur.Assigned.Warmup)
	}
	resp.EndpointInformationEpoch = g.endpointEpoch
	if req.EndpointInformationEpoch != g.endpointEpoch {
		resp.PartitionsByUserEndpoint = g.partitionsByUserEndpoint()
	}
	out := &StreamsHeartbeatResult{Response: resp, TopologyDescription: g.topologyDescriptionState(st, resp)}
	if g.configured != nil {
		out.Create = g.configured.toCreate
	}
	return out, nil
}

// streamsJoinGroup finds or creates the group of a joining member (KIP-1071 heartbeat step 2) and
// applies the topology-epoch rules. It returns the member id of a static member being replaced (or
// "") and the request's topology.
func streamsJoinGroup(st *State, req *kmsg.StreamsGroupHeartbeatRequest, cfg StreamsConfig) (*StreamsGroup, string, *StreamsTopology, error) {
	topo, err := streamsTopologyFromRequest(req.Topology)
	if err != nil {
		return nil, "", nil, err
	}
	var g *StreamsGroup
	var emptyClassic *ClassicGroup
	switch eg := st.Groups[req.Group].(type) {
	case nil:
	case *StreamsGroup:
		g = eg
	case *ClassicGroup:
		if !eg.IsEmpty() {
			return nil, "", nil, Errf(kerr.GroupIDNotFound, "Group %s is not a streams group.", req.Group)
		}
		emptyClassic = eg
	default:
		return nil, "", nil, Errf(kerr.GroupIDNotFound, "Group %s is not a streams group.", req.Group)
	}
	replacing := ""
	if g != nil {
		if _, member := g.meta[req.MemberID]; !member && len(g.meta) >= cfg.MaxSize {
			return nil, "", nil, Errf(kerr.GroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", cfg.MaxSize)
		}
		if req.InstanceID != nil {
			if owner := g.staticOwner(*req.InstanceID); owner != "" && owner != req.MemberID {
				if g.currentOf(owner).MemberEpoch != -2 {
					return nil, "", nil, Errf(kerr.UnreleasedInstanceID, "Static member %s with instance id %s is still in use by member %s.", req.MemberID, *req.InstanceID, owner)
				}
				replacing = owner
			}
		}
		if g.topology != nil {
			er, eg := topo.Epoch, g.topology.Epoch
			switch {
			case er == eg:
				if !topo.sameAs(g.topology) {
					return nil, "", nil, Errf(kerr.StreamsInvalidTopologyEpoch,
						"The topology of member %s has epoch %d, the group's topology epoch, but differs from the group's topology.", req.MemberID, er)
				}
			case er < eg:
				return nil, "", nil, Errf(kerr.StreamsTopologyFenced,
					"The topology epoch %d of member %s is older than the group's topology epoch %d.", er, req.MemberID, eg)
			case er > eg+1:
				return nil, "", nil, Errf(kerr.StreamsInvalidTopologyEpoch,
					"The topology epoch %d of member %s is more than one above the group's topology epoch %d.", er, req.MemberID, eg)
			default: // er == eg+1: the member brings the next topology (KIP-1071 step 2.3.4).
				if err := streamsTopologyConfigurable(st, topo); err != nil {
					return nil, "", nil, err
				}
				writeStreamsTopology(st, g.id, topo)
			}
			return g, replacing, topo, nil
		}
		if err := streamsTopologyConfigurable(st, topo); err != nil {
			return nil, "", nil, err
		}
		writeStreamsTopology(st, g.id, topo)
		return g, replacing, topo, nil
	}
	if err := streamsTopologyConfigurable(st, topo); err != nil {
		return nil, "", nil, err
	}
	if emptyClassic != nil {
		emptyClassic.WriteTombstones(st)
		delete(st.Groups, req.Group) // a simple group may have had no record to tombstone
	}
	writeStreamsTopology(st, req.Group, topo) // creates the group (the group takes the member's topology epoch)
	g, ok := st.Groups[req.Group].(*StreamsGroup)
	if !ok {
		return nil, "", nil, kerr.UnknownServerError
	}
	return g, "", topo, nil
}

// streamsTopologyConfigurable fails a topology the group is about to take when the partition
// counts of its repartition topics cannot be decided, before anything is written: Kafka's
// InternalTopicManager.configureTopics throws StreamsInvalidTopologyException (from
// RepartitionTopics.setup) out of the heartbeat.
func streamsTopologyConfigurable(st *State, topo *StreamsTopology) error {
	return configureStreamsTopology(topo, st.Image).invalid
}

// streamsGroupOrThrow is Kafka's GroupMetadataManager.getStreamsGroupOrThrow: GROUP_ID_NOT_FOUND,
// "not found" for a missing group and "not a streams group" for a group of another type.
func streamsGroupOrThrow(st *State, id string) (*StreamsGroup, error) {
	switch g := st.Groups[id].(type) {
	case nil:
		return nil, Errf(kerr.GroupIDNotFound, "Streams group %s not found.", id)
	case *StreamsGroup:
		return g, nil
	default:
		return nil, Errf(kerr.GroupIDNotFound, "Group %s is not a streams group.", id)
	}
}

// streamsExistingMember checks a heartbeat of a member already in the group (KIP-1071 heartbeat
// step 3).
func streamsExistingMember(st *State, req *kmsg.StreamsGroupHeartbeatRequest) (*StreamsGroup, error) {
	g, err := streamsGroupOrThrow(st, req.Group)
	if err != nil {
		return nil, err
	}
	if req.InstanceID != nil {
		owner := g.staticOwner(*req.InstanceID)
		if owner == "" {
			return nil, Errf(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		}
		if owner != req.MemberID {
			return nil, Errf(kerr.FencedInstanceID, "Instance id %s belongs to another member.", *req.InstanceID)
		}
	}
	if _, ok := g.meta[req.MemberID]; !ok {
		return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group)
	}
	cur := g.currentOf(req.MemberID)
	fenced := false
	switch {
	case req.MemberEpoch > cur.MemberEpoch:
		fenced = true
	case req.MemberEpoch < cur.MemberEpoch:
		// The response carrying the new epoch may have been lost (KIP-848): the previous epoch
		// is accepted when every task the member owns is still assigned to it.
		fenced = req.MemberEpoch != cur.PreviousMemberEpoch || !ownedSubset(ownedFromRequest(req), cur.Assigned)
	}
	if fenced {
		st.Log.Info("streams group member fenced", "group", g.id, "member", req.MemberID,
			"reason", fmt.Sprintf("its member epoch %d is not the coordinator's %d", req.MemberEpoch, cur.MemberEpoch))
		g.removeMember(st, req.MemberID, RebalanceCause{Kind: CauseMemberFenced, Member: req.MemberID,
			Reason: fmt.Sprintf("member epoch %d is not the coordinator's %d", req.MemberEpoch, cur.MemberEpoch)})
		return nil, Errf(kerr.FencedMemberEpoch, "The streams group member %s has epoch %d but the coordinator expected %d.", req.MemberID, req.MemberEpoch, cur.MemberEpoch)
	}
	return g, nil
}

// streamsLeave handles MemberEpoch -1 (leave) and -2 (static member temporarily leaving).
func streamsLeave(st *State, req *kmsg.StreamsGroupHeartbeatRequest) (*StreamsHeartbeatResult, error) {
	g, err := streamsGroupOrThrow(st, req.Group)
	if err != nil {
		return nil, err
	}
	id := req.MemberID
	if req.InstanceID != nil {
		owner := g.staticOwner(*req.InstanceID)
		if owner == "" {
			return nil, Errf(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		}
		if owner != id {
			return nil, Errf(kerr.FencedInstanceID, "Instance id %s belongs to another member.", *req.InstanceID)
		}
	} else if _, ok := g.meta[id]; !ok {
		return nil, Errf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", id, req.Group)
	}
	if req.ShutdownApplication {
		g.shutdownRequested = true
	}
	if req.MemberEpoch == -2 {
		// The static member keeps its tasks until it returns or its session expires.
		cur := g.currentOf(id)
		next := &streamsCurrent{MemberEpoch: -2, PreviousMemberEpoch: cur.MemberEpoch, State: cur.State,
			Assigned: cur.Assigned.clone(), PendingRevocation: cur.PendingRevocation.clone()}
		g.writeCurrent(st, id, next)
		st.Timers.Cancel(streamsRebalanceKey(g.id, id))
	} else {
		st.Log.Info("streams group member left the group", "group", g.id, "member", id)
		g.removeMember(st, id, RebalanceCause{Kind: CauseMemberLeft, Member: id, Reason: "left the group (heartbeat with epoch -1)"})
	}
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	resp.MemberID = id
	resp.MemberEpoch = req.MemberEpoch
	resp.AcceptableRecoveryLag = StreamsAcceptableRecoveryLag
	resp.AcceptableRecoveryLagLegacy = int32(StreamsAcceptableRecoveryLag)
	return &StreamsHeartbeatResult{Response: resp}, nil
}

// streamsUpdatedMeta applies the request's non-null fields to a member's metadata.
func streamsUpdatedMeta(old *streamsMemberMeta, req *kmsg.StreamsGroupHeartbeatRequest, c *Meta, topo *StreamsTopology) *streamsMemberMeta {
	if topo == nil && streamsMetaUnchanged(old, req, c) {
		return old // the steady heartbeat: no copy
	}
	nm := &streamsMemberMeta{ClientTags: map[string]string{}}
	if old != nil {
		cp := *old
		nm = &cp
		nm.ClientTags = map[string]string{}
		for k, v := range old.ClientTags {
			nm.ClientTags[k] = v
		}
	}
	if c != nil {
		if c.ClientID != nil {
			nm.ClientID = *c.ClientID
		}
		nm.ClientHost = c.ClientHost
	}
	if req.InstanceID != nil {
		s := *req.InstanceID
		nm.InstanceID = &s
	}
	if req.RackID != nil {
		s := *req.RackID
		nm.RackID = &s
	}
	if req.RebalanceTimeoutMillis != -1 {
		nm.RebalanceTimeout = req.RebalanceTimeoutMillis
	}
	if req.ProcessID != nil {
		nm.ProcessID = *req.ProcessID
	}
	if req.UserEndpoint != nil {
		nm.UserEndpoint = &streamsEndpoint{Host: req.UserEndpoint.Host, Port: req.UserEndpoint.Port}
	}
	if req.ClientTags != nil {
		nm.ClientTags = map[string]string{}
		for _, t := range req.ClientTags {
			nm.ClientTags[t.Key] = t.Value
		}
	}
	if topo != nil {
		nm.TopologyEpoch = topo.Epoch
	}
	return nm
}

// streamsMetaUnchanged reports whether the heartbeat repeats or omits every member metadata
// field of old (conservative: non-empty client tags count as a change).
func streamsMetaUnchanged(old *streamsMemberMeta, req *kmsg.StreamsGroupHeartbeatRequest, c *Meta) bool {
	switch {
	case old == nil:
		return false
	case c != nil && (c.ClientHost != old.ClientHost || (c.ClientID != nil && *c.ClientID != old.ClientID)):
		return false
	case req.InstanceID != nil && (old.InstanceID == nil || *old.InstanceID != *req.InstanceID):
		return false
	case req.RackID != nil && (old.RackID == nil || *old.RackID != *req.RackID):
		return false
	case req.RebalanceTimeoutMillis != -1 && req.RebalanceTimeoutMillis != old.RebalanceTimeout:
		return false
	case req.ProcessID != nil && *req.ProcessID != old.ProcessID:
		return false
	case req.UserEndpoint != nil && (old.UserEndpoint == nil ||
		*old.UserEndpoint != streamsEndpoint{Host: req.UserEndpoint.Host, Port: req.UserEndpoint.Port}):
		return false
	case req.ClientTags != nil && (len(req.ClientTags) != 0 || len(old.ClientTags) != 0):
		return false
	}
	return true
}

func (g *StreamsGroup) staticOwner(instance string) string {
	for _, id := range sortedKeys(g.meta) {
		if m := g.meta[id]; m.InstanceID != nil && *m.InstanceID == instance {
			return id
		}
	}
	return ""
}

// replaceStaticMember moves a static member's target and current assignment (at member epoch 0)
// to its new member id and removes the old member without bumping the group epoch (KIP-345
// semantics for streams, as Kafka's replaceMember for consumer groups).
func (g *StreamsGroup) replaceStaticMember(st *State, oldID, newID string) {
	if t, ok := g.targets[oldID]; ok {
		g.writeTarget(st, newID, t.clone())
	}
	old := g.currentOf(oldID)
	g.dropMember(st, oldID)
	g.writeCurrent(st, newID, &streamsCurrent{State: old.State,
		Assigned: old.Assigned.clone(), PendingRevocation: old.PendingRevocation.clone()})
}

// dropMember writes the member's tombstones (current assignment, target, metadata) and cancels
// its timers, without an epoch bump.
func (g *StreamsGroup) dropMember(st *State, id string) {
	st.Write(Record{Key: groupKey(RecStreamsGroupCurrentMember, g.id, id)})
	st.Write(Record{Key: groupKey(RecStreamsGroupTargetMember, g.id, id)})
	st.Write(Record{Key: groupKey(RecStreamsGroupMemberMetadata, g.id, id)})
	st.Timers.Cancel(streamsSessionKey(g.id, id))
	st.Timers.Cancel(streamsRebalanceKey(g.id, id))
	g.endpointEpoch++
	if len(g.meta) == 0 {
		g.shutdownRequested = false
		g.delayDeadline = time.Time{}
		st.Timers.Cancel(streamsDelayKey(g.id))
	}
}

// removeMember removes a member (it left or was fenced, cause says which): tombstones and a
// group epoch bump.
func (g *StreamsGroup) removeMember(st *State, id string, cause RebalanceCause) {
	g.dropMember(st, id)
	hash, validated := g.reconfigure(st)
	g.bumpEpoch(st, st.streamsConfig(g.id), hash, validated, []RebalanceCause{cause})
}

// bumpEpoch writes the group metadata with the next group epoch, the given metadata hash and
// validated topology epoch, and the current assignment configs; causes are why (rebalance
// history).
func (g *StreamsGroup) bumpEpoch(st *State, cfg StreamsConfig, hash int64, validated int32, causes []RebalanceCause) {
	old := g.groupEpoch
	v := g.metadataValue()
	v.Epoch = g.groupEpoch + 1
	v.MetadataHash, v.ValidatedTopologyEpoch = hash, validated
	v.LastAssignmentConfigs = cfg.assignmentConfigs()
	g.writeMetadata(st, v)
	st.Metrics.StreamsRebalances++
	st.recordRebalance(g.id, TypeStreams, old, v.Epoch, causes)
}

// reconfigure recomputes the metadata hash and, when it or the topology changed, the
// configured topology (in memory). It returns the hash and the validated topology epoch (the
// topology epoch when the configured topology is ready, else -1); when either differs from the
// stored values the group epoch must be bumped, which persists them.
func (g *StreamsGroup) reconfigure(st *State) (hash int64, validated int32) {
	if g.topology == nil {
		return g.metadataHash, g.validatedTopologyEpoch
	}
	hash = g.computeMetadataHash(st.Image)
	if g.configured == nil || g.configured.epoch != g.topology.Epoch || hash != g.metadataHash {
		g.configured = configureStreamsTopology(g.topology, st.Image)
	}
	validated = -1
	if g.configured.ready() {
		validated = g.topology.Epoch
	}
	return hash, validated
}

// streamsSessionTag marks a streams session timer: its fn removes the member named by the key.
const streamsSessionTag = timerTag("streams-session")

// scheduleSession (re)arms the member's session timeout; re-arming an armed one only moves its
// deadline (Timers.Rearm), with the key cached in the member's in-memory state.
func (g *StreamsGroup) scheduleSession(st *State, id string, cfg StreamsConfig) {
	gid := g.id
	key := ""
	if s := g.soft[id]; s != nil {
		if s.sessionKeyFor != id || s.sessionKey == "" {
			s.sessionKey, s.sessionKeyFor = streamsSessionKey(gid, id), id
		}
		key = s.sessionKey
	} else {
		key = streamsSessionKey(gid, id)
	}
	if st.Timers.Rearm(key, streamsSessionTag, st.Now.Add(cfg.SessionTimeout)) {
		return
	}
	st.Timers.ScheduleTagged(key, streamsSessionTag, st.Now.Add(cfg.SessionTimeout), func(st *State) {
		cur, ok := st.Groups[gid].(*StreamsGroup)
		if !ok || cur.meta[id] == nil {
			return
		}
		st.Log.Info("streams group member fenced", "group", gid, "member", id, "reason", "its session expired")
		cur.removeMember(st, id, RebalanceCause{Kind: CauseMemberFenced, Member: id, Reason: "session timeout"})
	})
}

func streamsSessionKey(g, m string) string   { return "session-timeout-" + g + "-" + m }
func streamsRebalanceKey(g, m string) string { return "rebalance-timeout-" + g + "-" + m }
func streamsDelayKey(g string) string        { return "streams-initial-delay-" + g }

func sameStringMap(a, b map[string]string) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func taskOffsetMap(xs []kmsg.TaskOffset) map[streamsTask]int64 {
	out := make(map[streamsTask]int64, len(xs))
	for _, x := range xs {
		out[streamsTask{x.SubtopologyID, x.Partition}] = x.Offset
	}
	return out
}

// ownedFromRequest converts the request's owned tasks; nil when the lists are null (unchanged).
func ownedFromRequest(req *kmsg.StreamsGroupHeartbeatRequest) *streamsTaskSet {
	if req.ActiveTasks == nil {
		return nil
	}
	conv := func(l []kmsg.TaskIDs) streamsTasks {
		out := streamsTasks{}
		for _, t := range l {
			for _, p := range t.Partitions {
				out[streamsTask{t.SubtopologyID, p}] = 0
			}
		}
		return out
	}
	return &streamsTaskSet{Active: conv(req.ActiveTasks), Standby: conv(req.StandbyTasks), Warmup: conv(req.WarmupTasks)}
}

// ownedSubset reports whether the owned tasks (non-null) are all assigned.
func ownedSubset(owned *streamsTaskSet, assigned streamsTaskSet) bool {
	if owned == nil {
		return false
	}
	sub := func(a, b streamsTasks) bool {
		for k := range a {
			if _, ok := b[k]; !ok {
				return false
			}
		}
		return true
	}
	return sub(owned.Active, assigned.Active) && sub(owned.Standby, assigned.Standby) && sub(owned.Warmup, assigned.Warmup)
}

func taskIDs(t streamsTasks) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	for _, k := range t.sorted() {
		if n := len(out); n > 0 && out[n-1].SubtopologyID == k.Sub {
			out[n-1].Partitions = append(out[n-1].Partitions, k.Part)
			continue
		}
		ti := kmsg.NewTaskIDs()
		ti.SubtopologyID = k.Sub
		ti.Partitions = []int32{k.Part}
		out = append(out, ti)
	}
	return out
}

// statuses builds the response's status list for a member.
func (g *StreamsGroup) statuses(id string, delayed bool) []kmsg.StreamsGroupHeartbeatResponseStatus {
	var out []kmsg.StreamsGroupHeartbeatResponseStatus
	add := func(code int8, detail string) {
		s := kmsg.NewStreamsGroupHeartbeatResponseStatus()
		s.StatusCode, s.StatusDetail = code, detail
		out = append(out, s)
	}
	if m := g.meta[id]; m != nil && g.topology != nil && m.TopologyEpoch < g.topology.Epoch {
		add(StreamsStatusStaleTopology, fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", m.TopologyEpoch, g.topology.Epoch))
	}
	if c := g.configured; c != nil && !c.ready() {
		add(c.statusCode, c.statusDetail)
	}
	if g.shutdownRequested {
		add(StreamsStatusShutdownApplication, "A KafkaStreams instance encountered a fatal error and requested a shutdown for the entire application.")
	}
	if delayed {
		add(StreamsStatusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay.")
	}
	return out
}
