package coordinator

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/streams/assignor"
)

// streamsAssignor is the group's task assignor (Kafka's built-in "sticky").
var streamsAssignor = assignor.Sticky()

// maybeAssign computes a new target assignment when the group epoch is ahead of the target
// assignment epoch (Kafka's updateStreamsTargetAssignment, run on every heartbeat whatever the
// state of the topology): with the assignor when the configured topology is ready, else an
// empty assignment for every member, since a topology that cannot be configured has no tasks
// to give. The first assignment of a group without target assignments waits for
// group.streams.initial.rebalance.delay.ms (delayed=true, status ASSIGNMENT_DELAYED): meanwhile
// members reconcile towards an empty target at epoch delayedTargetEpoch, and a timer computes
// the assignment when the delay ends.
func (g *StreamsGroup) maybeAssign(st *State, cfg StreamsConfig) (delayed bool, err error) {
	if g.topology == nil || g.groupEpoch <= g.targetEpoch || len(g.meta) == 0 {
		return false, nil
	}
	if cfg.InitialRebalanceDelay > 0 && len(g.targets) == 0 {
		if g.delayDeadline.IsZero() {
			g.delayDeadline = st.Now.Add(cfg.InitialRebalanceDelay)
			gid := g.id
			st.Timers.Schedule(streamsDelayKey(gid), g.delayDeadline, func(st *State) {
				cur, ok := st.Groups[gid].(*StreamsGroup)
				if !ok {
					return
				}
				cur.delayDeadline = st.Now
				if _, err := cur.maybeAssign(st, st.streamsConfig(gid)); err != nil {
					st.Log.Error("streams: delayed target assignment failed", "group", gid, "err", err)
				}
			})
		}
		if st.Now.Before(g.delayDeadline) {
			return true, nil
		}
	}
	g.delayDeadline = time.Time{}
	st.Timers.Cancel(streamsDelayKey(g.id))
	return false, g.computeTarget(st, cfg)
}

// delayedTargetEpoch is the epoch members reconcile to, with an empty assignment, while the
// initial rebalance delay holds the first target assignment back (Kafka: max(1, assignment
// epoch)). It stays below the group epoch (a new group starts at epoch
// streamsInitialGroupEpoch, so its first join writes epoch 2), so the members move on to the
// target computed when the delay ends.
func (g *StreamsGroup) delayedTargetEpoch() int32 { return max(1, g.targetEpoch) }

// computeTarget writes the target assignment at the group epoch: the sticky assignor's, run on
// the members, their current targets (stickiness) and task lags, when the configured topology
// is ready; an empty assignment for every member when it is not (Kafka's
// streams.TargetAssignmentBuilder). Only changed member targets are written, then the target
// assignment metadata.
func (g *StreamsGroup) computeTarget(st *State, cfg StreamsConfig) error {
	if g.configured == nil || g.configured.epoch != g.topology.Epoch {
		g.configured = configureStreamsTopology(g.topology, st.Image)
	}
	ids := g.MemberIDs()
	if !g.configured.ready() {
		for _, id := range ids {
			next := newStreamsTaskSet()
			if old, ok := g.targets[id]; !ok || !old.equal(next) {
				g.writeTarget(st, id, next)
			}
		}
		g.writeTargetMetadata(st, g.groupEpoch)
		return nil
	}
	spec := &assignor.GroupSpec{
		NumStandbyReplicas:    cfg.NumStandbyReplicas,
		NumWarmupReplicas:     cfg.NumWarmupReplicas,
		AcceptableRecoveryLag: StreamsAcceptableRecoveryLag,
	}
	for _, s := range g.topology.Subtopologies {
		spec.Subtopologies = append(spec.Subtopologies, assignor.Subtopology{
			ID: s.ID, NumTasks: g.configured.numTasks[s.ID], Stateful: len(s.StateChangelogTopics) > 0,
		})
	}
	for _, id := range ids {
		m := g.meta[id]
		ms := assignor.MemberSpec{MemberID: id, ProcessID: m.ProcessID, ClientTags: m.ClientTags}
		if m.InstanceID != nil {
			ms.InstanceID = *m.InstanceID
		}
		if m.RackID != nil {
			ms.RackID = *m.RackID
		}
		if t, ok := g.targets[id]; ok {
			ms.Active, ms.Standby, ms.Warmup = toAssignorTasks(t.Active), toAssignorTasks(t.Standby), toAssignorTasks(t.Warmup)
		}
		ms.TaskLags = g.taskLags(id)
		spec.Members = append(spec.Members, ms)
	}
	out, err := streamsAssignor.Assign(spec)
	if err != nil {
		return Errf(kerr.UnknownServerError, "Failed to compute a new target assignment for epoch %d: %v", g.groupEpoch, err)
	}
	for k, id := range ids {
		// The output numbers members in id order, as MemberIDs returns them.
		i := k
		if i >= out.Len() || out.MemberID(i) != id {
			i = out.Index(id)
		}
		next := streamsTaskSet{
			Active:  fromAssignorTasks(out, i, assignor.ActiveTasks),
			Standby: fromAssignorTasks(out, i, assignor.StandbyTasks),
			Warmup:  fromAssignorTasks(out, i, assignor.WarmupTasks),
		}
		if old, ok := g.targets[id]; !ok || !old.equal(next) {
			g.writeTarget(st, id, next)
		}
	}
	g.writeTargetMetadata(st, g.groupEpoch)
	return nil
}

// taskLags derives a member's task lags from its reported changelog offsets and end offsets
// (nil when it reported none), as the assignor's flat list (one entry per task, any order).
func (g *StreamsGroup) taskLags(id string) []assignor.TaskLag {
	s := g.soft[id]
	if s == nil || s.TaskOffsets == nil {
		return nil
	}
	out := make([]assignor.TaskLag, 0, len(s.TaskOffsets))
	for t, off := range s.TaskOffsets {
		lag := int64(0)
		if end, ok := s.TaskEndOffsets[t]; ok && end > off {
			lag = end - off
		}
		out = append(out, assignor.TaskLag{Subtopology: t.Sub, Partition: t.Part, Lag: lag})
	}
	return out
}

// toAssignorTasks lists a member's tasks as the assignor's input: one entry per subtopology
// (ascending), its partitions ascending, all sharing one array; nil when there are none.
func toAssignorTasks(t streamsTasks) []assignor.SubtopologyTasks {
	if len(t) == 0 {
		return nil
	}
	tasks := t.sorted()
	parts := make([]int32, len(tasks))
	var out []assignor.SubtopologyTasks
	start := 0
	for i, k := range tasks {
		parts[i] = k.Part
		if i+1 == len(tasks) || tasks[i+1].Sub != k.Sub {
			out = append(out, assignor.SubtopologyTasks{Subtopology: k.Sub, Partitions: parts[start : i+1 : i+1]})
			start = i + 1
		}
	}
	return out
}

// fromAssignorTasks returns the tasks of the given kind of member number i of an assignor
// output (none when i < 0), as a map of its final size.
func fromAssignorTasks(a *assignor.Assignment, i int, kind assignor.TaskKind) streamsTasks {
	if i < 0 {
		return streamsTasks{}
	}
	out := make(streamsTasks, a.Count(i, kind))
	for j := range a.Subtopologies(i, kind) {
		s, ps := a.Tasks(i, kind, j)
		for _, p := range ps {
			out[streamsTask{s, p}] = 0
		}
	}
	return out
}

// reconcile moves a member's current assignment towards its target (Kafka's streams
// CurrentAssignmentBuilder): tasks no longer in the target are revoked first (the member stays
// at its epoch in UNREVOKED_TASKS until it reports them gone); then it moves to the target
// epoch and gets the target's tasks that no other member still holds (an active task: no other
// member holds it as active, and no other member of its process holds it at all; a standby or
// warm-up task: no other member of its process holds it), staying UNRELEASED_TASKS while some
// are held. owned is the member's reported tasks (nil = not reported). delayed reconciles
// towards the empty target of the initial rebalance delay instead of the member's target. It
// reports whether the current assignment changed.
func (g *StreamsGroup) reconcile(st *State, id string, owned *streamsTaskSet, delayed bool) bool {
	cur := g.currentOf(id)
	if cur.MemberEpoch < 0 {
		return false
	}
	targetEpoch, target := g.targetEpoch, g.targets[id]
	if delayed {
		targetEpoch, target = g.delayedTargetEpoch(), newStreamsTaskSet()
	} else if target.Active == nil {
		target = newStreamsTaskSet()
	}
	var next *streamsCurrent
	switch cur.State {
	case streamsMemberStable:
		if cur.MemberEpoch != targetEpoch {
			next = g.nextAssignment(id, cur, targetEpoch, target)
		}
	case streamsMemberUnrevokedTasks:
		if owned != nil && !holdsAny(owned, cur.PendingRevocation) {
			next = g.nextAssignment(id, cur, targetEpoch, target)
		}
	case streamsMemberUnreleasedTasks:
		next = g.nextAssignment(id, cur, targetEpoch, target)
	}
	if next == nil || sameCurrent(cur, next) {
		return false
	}
	g.writeCurrent(st, id, next)
	g.endpointEpoch++
	if next.State == streamsMemberUnrevokedTasks {
		if cur.State != streamsMemberUnrevokedTasks || cur.MemberEpoch != next.MemberEpoch || !st.Timers.Has(streamsRebalanceKey(g.id, id)) {
			g.scheduleRebalanceTimeout(st, id, next.MemberEpoch)
		}
	} else {
		st.Timers.Cancel(streamsRebalanceKey(g.id, id))
	}
	return true
}

// nextAssignment is the member's next current assignment towards target at targetEpoch.
func (g *StreamsGroup) nextAssignment(id string, cur *streamsCurrent, targetEpoch int32, target streamsTaskSet) *streamsCurrent {
	keep := newStreamsTaskSet()
	revoke := newStreamsTaskSet()
	split := func(have, want, k, r streamsTasks) {
		for t, ep := range have {
			if _, ok := want[t]; ok {
				k[t] = ep
			} else {
				r[t] = ep
			}
		}
	}
	split(cur.Assigned.Active, target.Active, keep.Active, revoke.Active)
	split(cur.Assigned.Standby, target.Standby, keep.Standby, revoke.Standby)
	split(cur.Assigned.Warmup, target.Warmup, keep.Warmup, revoke.Warmup)
	if !revoke.empty() {
		return &streamsCurrent{MemberEpoch: cur.MemberEpoch, PreviousMemberEpoch: cur.PreviousMemberEpoch,
			State: streamsMemberUnrevokedTasks, Assigned: keep, PendingRevocation: revoke}
	}
	process := ""
	if m := g.meta[id]; m != nil {
		process = m.ProcessID
	}
	unreleased := false
	for t := range target.Active {
		if _, ok := keep.Active[t]; ok {
			continue
		}
		if g.heldElsewhere(t, id, process, true) {
			unreleased = true
			continue
		}
		keep.Active[t] = targetEpoch
	}
	for _, pair := range [][2]streamsTasks{{target.Standby, keep.Standby}, {target.Warmup, keep.Warmup}} {
		for t := range pair[0] {
			if _, ok := pair[1][t]; ok {
				continue
			}
			if g.heldElsewhere(t, id, process, false) {
				unreleased = true
				continue
			}
			pair[1][t] = 0
		}
	}
	state := streamsMemberStable
	if unreleased {
		state = streamsMemberUnreleasedTasks
	}
	return &streamsCurrent{MemberEpoch: targetEpoch, PreviousMemberEpoch: cur.MemberEpoch, State: state,
		Assigned: keep, PendingRevocation: newStreamsTaskSet()}
}

// heldElsewhere reports whether another member still holds task t in a way that blocks giving
// it to member id of the given process.
func (g *StreamsGroup) heldElsewhere(t streamsTask, id, process string, active bool) bool {
	for other, bits := range g.holders[t] {
		if other == id {
			continue
		}
		if active && bits&holdActive != 0 {
			return true
		}
		if m := g.meta[other]; m != nil && m.ProcessID == process && process != "" {
			return true
		}
	}
	return false
}

func holdsAny(owned *streamsTaskSet, pending streamsTaskSet) bool {
	for _, pair := range [][2]streamsTasks{{pending.Active, owned.Active}, {pending.Standby, owned.Standby}, {pending.Warmup, owned.Warmup}} {
		for t := range pair[0] {
			if _, ok := pair[1][t]; ok {
				return true
			}
		}
	}
	return false
}

func sameCurrent(a, b *streamsCurrent) bool {
	return string(encodeStreamsCurrent(a)) == string(encodeStreamsCurrent(b))
}

// scheduleRebalanceTimeout fences the member if it is still revoking tasks at this epoch when
// its rebalance timeout ends.
func (g *StreamsGroup) scheduleRebalanceTimeout(st *State, id string, epoch int32) {
	gid := g.id
	timeout := time.Duration(0)
	if m := g.meta[id]; m != nil {
		timeout = time.Duration(m.RebalanceTimeout) * time.Millisecond
	}
	st.Timers.Schedule(streamsRebalanceKey(gid, id), st.Now.Add(timeout), func(st *State) {
		cur, ok := st.Groups[gid].(*StreamsGroup)
		if !ok || cur.meta[id] == nil {
			return
		}
		c := cur.currentOf(id)
		if c.MemberEpoch != epoch || c.State != streamsMemberUnrevokedTasks {
			return
		}
		st.Log.Info("streams group member fenced", "group", gid, "member", id, "reason", "it failed to revoke its tasks within the rebalance timeout")
		cur.removeMember(st, id, RebalanceCause{Kind: CauseMemberFenced, Member: id, Reason: "rebalance timeout"})
	})
}

// partitionsByUserEndpoint is the interactive-query view (KIP-1071 heartbeat step 7; Kafka's
// EndpointToPartitionsManager): for every user endpoint, the source-topic partitions of the active
// and standby tasks its members currently hold, sorted by endpoint, topic and partition.
func (g *StreamsGroup) partitionsByUserEndpoint() []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	type parts struct{ active, standby map[string]map[int32]bool }
	byEP := map[streamsEndpoint]*parts{}
	topicsOf := map[string][]string{}
	if g.topology != nil {
		for _, s := range g.topology.Subtopologies {
			ts := append([]string{}, s.SourceTopics...)
			for _, r := range s.RepartitionSourceTopics {
				ts = append(ts, r.Name)
			}
			topicsOf[s.ID] = ts
		}
	}
	add := func(dst map[string]map[int32]bool, tasks streamsTasks) {
		for t := range tasks {
			for _, topic := range topicsOf[t.Sub] {
				if dst[topic] == nil {
					dst[topic] = map[int32]bool{}
				}
				dst[topic][t.Part] = true
			}
		}
	}
	for _, id := range g.MemberIDs() {
		m := g.meta[id]
		if m.UserEndpoint == nil {
			continue
		}
		p := byEP[*m.UserEndpoint]
		if p == nil {
			p = &parts{active: map[string]map[int32]bool{}, standby: map[string]map[int32]bool{}}
			byEP[*m.UserEndpoint] = p
		}
		c := g.currentOf(id)
		add(p.active, c.Assigned.Active)
		add(p.standby, c.Assigned.Standby)
	}
	eps := make([]streamsEndpoint, 0, len(byEP))
	for ep := range byEP {
		eps = append(eps, ep)
	}
	sort.Slice(eps, func(i, j int) bool {
		if eps[i].Host != eps[j].Host {
			return eps[i].Host < eps[j].Host
		}
		return eps[i].Port < eps[j].Port
	})
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	for _, ep := range eps {
		e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
		e.UserEndpoint.Host, e.UserEndpoint.Port = ep.Host, ep.Port
		p := byEP[ep]
		for _, topic := range sortedKeys(p.active) {
			a := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition()
			a.Topic, a.Partitions = topic, sortedParts(p.active[topic])
			e.ActivePartitions = append(e.ActivePartitions, a)
		}
		for _, topic := range sortedKeys(p.standby) {
			s := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition()
			s.Topic, s.Partitions = topic, sortedParts(p.standby[topic])
			e.StandbyPartitions = append(e.StandbyPartitions, s)
		}
		out = append(out, e)
	}
	return out
}

func sortedParts(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// onLoadedStreams is the streams part of Kafka's onLoaded: session timers are re-armed, and
// rebalance timers restart for members still revoking.
func onLoadedStreams(st *State) {
	for _, g := range st.streamsGroups() {
		for _, id := range g.MemberIDs() {
			g.scheduleSession(st, id, st.streamsConfig(g.id))
			if c := g.currentOf(id); c.State == streamsMemberUnrevokedTasks {
				g.scheduleRebalanceTimeout(st, id, c.MemberEpoch)
			}
		}
	}
}
