package coordinator

import (
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClassicState is a classic group's state (Kafka's ClassicGroupState).
type ClassicState int8

// The classic group states.
const (
	ClassicEmpty ClassicState = iota
	ClassicPreparingRebalance
	ClassicCompletingRebalance
	ClassicStable
	ClassicDead
)

func (s ClassicState) String() string {
	return [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}[s]
}

// ClassicGroup is a group using the classic rebalance protocol (JoinGroup/SyncGroup/Heartbeat/
// LeaveGroup). Its durable part is Kafka's GroupMetadataValue record, written when a rebalance
// completes (sync of the leader's assignment) or when the group becomes Empty; joins in progress
// live in memory only, as in Kafka.
type ClassicGroup struct {
	id           string
	state        ClassicState
	protocolType string // "" for a simple group created by offset commits
	protocolName string // selected protocol ("" when none)
	generation   int32
	leader       string
	stateTime    time.Time
	members      map[string]*classicMember
	static       map[string]string // group.instance.id → member id
	pending      map[string]bool   // member ids handed out with MEMBER_ID_REQUIRED
	// pendingSync are the members of the current generation that have not sent SyncGroup yet
	// (Kafka's pendingSyncMembers); the sync timer removes them after the rebalance timeout.
	pendingSync    map[string]bool
	newMemberAdded bool
	// awaiting counts members with a waiting JoinGroup and protoCount the members listing each
	// protocol name (Kafka's numMembersAwaitingJoinResponse and supportedProtocols), so that a
	// join costs O(1) in the group size instead of O(members).
	awaiting   int
	protoCount map[string]int
	tracked    int // members counted in awaiting/protoCount; ≠ len(members) → recount
	// persisted is the content of the last GroupMetadata record written or replayed (nil when
	// none): what a restart would rebuild while a rebalance is in progress.
	persisted *classicDurable
	// initialDelayRemaining is how long the initial-rebalance delay may still extend.
	initialDelayRemaining time.Duration
	inInitialDelay        bool
	// causes are why the rebalance in progress began and what joined or left since: recorded
	// with the generation bump that completes it (rebalance history); in memory only.
	causes []RebalanceCause
}

type classicProtocol struct {
	Name     string
	Metadata []byte
}

type classicMember struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	protocolType     string
	protocols        []classicProtocol
	assignment       []byte
	joinCall         *JoinCall
	joinVersion      int16
	joinReason       string
	syncCall         *SyncCall
	syncVersion      int16
	isNew            bool
	// In memory only: the session timer key, cached for member id hbKeyFor.
	hbKey, hbKeyFor string
}

func newSimpleClassicGroup(id string) *ClassicGroup {
	return &ClassicGroup{id: id, members: map[string]*classicMember{}, static: map[string]string{},
		pending: map[string]bool{}, pendingSync: map[string]bool{}, protoCount: map[string]int{}}
}

// ID implements Group.
func (g *ClassicGroup) ID() string { return g.id }

// Type implements Group.
func (g *ClassicGroup) Type() GroupType { return TypeClassic }

// StateName implements Group.
func (g *ClassicGroup) StateName() string { return g.state.String() }

// State returns the classic state.
func (g *ClassicGroup) State() ClassicState { return g.state }

// ProtocolType implements Group.
func (g *ClassicGroup) ProtocolType() string { return g.protocolType }

// ProtocolName is the selected protocol.
func (g *ClassicGroup) ProtocolName() string { return g.protocolName }

// Generation is the generation id.
func (g *ClassicGroup) Generation() int32 { return g.generation }

// Leader is the leader member id.
func (g *ClassicGroup) Leader() string { return g.leader }

// IsEmpty implements Group.
func (g *ClassicGroup) IsEmpty() bool { return g.state == ClassicEmpty }

// NumMembers is the member count.
func (g *ClassicGroup) NumMembers() int { return len(g.members) }

func (g *ClassicGroup) transition(st *State, to ClassicState) {
	g.state = to
	g.stateTime = st.Now
}

func (g *ClassicGroup) memberIDs() []string { return sortedKeys(g.members) }

// subscribedTopics parses members' ConsumerProtocol subscriptions; ok=false when they cannot be
// known (non-consumer protocol type or unparsable metadata).
func (g *ClassicGroup) subscribedTopics() (map[string]bool, bool) {
	if g.protocolType != "consumer" || g.protocolName == "" {
		return nil, false
	}
	out := map[string]bool{}
	for _, m := range g.members {
		md := m.metadataFor(g.protocolName)
		if md == nil {
			return nil, false
		}
		var s kmsg.ConsumerMemberMetadata
		if err := s.ReadFrom(md); err != nil {
			return nil, false
		}
		for _, t := range s.Topics {
			out[t] = true
		}
	}
	return out, true
}

func (m *classicMember) metadataFor(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// IsSubscribedToTopic implements Group (Kafka's ClassicGroup.isSubscribedToTopic): Empty → false;
// unknown subscriptions → "uses consumer protocol".
func (g *ClassicGroup) IsSubscribedToTopic(topic string) bool {
	if g.state == ClassicEmpty || g.state == ClassicDead {
		return false
	}
	subs, ok := g.subscribedTopics()
	if !ok {
		return g.protocolType == "consumer"
	}
	return subs[topic]
}

// ValidateOffsetCommit implements Group (ClassicGroup.validateOffsetCommit).
func (g *ClassicGroup) ValidateOffsetCommit(st *State, c *CommitIdentity) error {
	if g.state == ClassicDead {
		return kerr.CoordinatorNotAvailable
	}
	if c.GenerationOrEpoch < 0 && g.state == ClassicEmpty {
		return nil
	}
	if c.GenerationOrEpoch >= 0 || c.MemberID != "" || c.InstanceID != nil {
		if err := g.checkMember(c.MemberID, c.InstanceID); err != nil {
			return err
		}
		if c.GenerationOrEpoch != g.generation {
			return kerr.IllegalGeneration
		}
	} else if !c.Transactional && g.state != ClassicEmpty {
		return kerr.UnknownMemberID
	}
	if !c.Transactional && g.state == ClassicCompletingRebalance {
		return kerr.RebalanceInProgress
	}
	// A plain commit keeps the member's session alive, a transactional one does not (Kafka's
	// OffsetMetadataManager.commitOffset reschedules the heartbeat, commitTransactionalOffset
	// does not).
	if m := g.members[c.MemberID]; m != nil && !c.Transactional && (g.state == ClassicStable || g.state == ClassicPreparingRebalance) {
		g.scheduleSession(st, m)
	}
	return nil
}

// checkMember validates a member id and instance id pair (Kafka's ClassicGroup.validateMember): an
// instance id must be known (else UNKNOWN_MEMBER_ID) and owned by memberID (else
// FENCED_INSTANCE_ID); without an instance id the member id must be known (UNKNOWN_MEMBER_ID).
func (g *ClassicGroup) checkMember(memberID string, instanceID *string) error {
	if instanceID != nil {
		owner, ok := g.static[*instanceID]
		switch {
		case !ok:
			return kerr.UnknownMemberID
		case owner != memberID:
			return kerr.FencedInstanceID
		}
		return nil
	}
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID
	}
	return nil
}

// ValidateOffsetFetch implements Group: classic groups accept any v9 fetch.
func (g *ClassicGroup) ValidateOffsetFetch(*State, string, int32) error { return nil }

// ValidateOffsetDelete implements Group.
func (g *ClassicGroup) ValidateOffsetDelete() error {
	switch {
	case g.state == ClassicDead:
		return kerr.GroupIDNotFound
	case g.state != ClassicEmpty && g.protocolType != "consumer":
		return kerr.NonEmptyGroup
	}
	return nil
}

// ValidateDeleteGroup implements Group.
func (g *ClassicGroup) ValidateDeleteGroup() error {
	switch g.state {
	case ClassicDead:
		return kerr.GroupIDNotFound
	case ClassicEmpty:
		return nil
	}
	return kerr.NonEmptyGroup
}

// WriteTombstones implements Group.
func (g *ClassicGroup) WriteTombstones(st *State) {
	st.Write(Record{Key: classicKey(g.id)})
}

// OffsetExpiryBase implements Group (Kafka's ClassicGroup.offsetExpirationCondition).
func (g *ClassicGroup) OffsetExpiryBase(commit time.Time) (time.Time, bool) {
	switch {
	case g.protocolType == "":
		return commit, true
	case g.state == ClassicEmpty:
		if !g.stateTime.IsZero() {
			return g.stateTime, true
		}
		return commit, true
	case g.state == ClassicStable && g.protocolType == "consumer":
		if _, ok := g.subscribedTopics(); ok {
			return commit, true
		}
	}
	return time.Time{}, false
}

type classicDurable struct {
	ProtocolType, Protocol, Leader string
	Generation                     int32
	StateTime                      int64
	Members                        []kmsg.GroupMetadataValueMember
}

// Durable implements Group: what a restart rebuilds. In Empty and Stable the in-memory group
// must equal its last GroupMetadata record, so the value is computed from the live fields (the
// replay-equivalence property then checks that records are written whenever those fields
// change); during a rebalance the group changes in memory only, as in Kafka, and the value is
// the last record written (the zero value when none was: a simple or brand-new group).
func (g *ClassicGroup) Durable() any {
	if g.state != ClassicEmpty && g.state != ClassicStable {
		if g.persisted == nil {
			return classicDurable{}
		}
		return *g.persisted
	}
	return durableOf(g.metadataValue(time.UnixMilli(0)))
}

// HasDurableContent reports whether the group would exist after a restart on its own (without
// committed offsets): false for a simple group and for a new group whose first rebalance has not
// written a record yet.
func (g *ClassicGroup) HasDurableContent() bool {
	d := g.Durable().(classicDurable)
	return d.ProtocolType != "" || d.Generation != 0 || len(d.Members) > 0 || d.Protocol != "" || d.Leader != ""
}

func durableOf(v kmsg.GroupMetadataValue) classicDurable {
	d := classicDurable{ProtocolType: v.ProtocolType, Generation: v.Generation, Members: v.Members}
	if v.Protocol != nil {
		d.Protocol = *v.Protocol
	}
	if v.Leader != nil {
		d.Leader = *v.Leader
	}
	for i := range d.Members { // the record does not distinguish nil from empty bytes
		if d.Members[i].Subscription == nil {
			d.Members[i].Subscription = []byte{}
		}
		if d.Members[i].Assignment == nil {
			d.Members[i].Assignment = []byte{}
		}
	}
	return d
}

func classicKey(id string) []byte {
	k := kmsg.GroupMetadataKey{Version: RecGroupMetadata, Group: id}
	return k.AppendTo(nil)
}

// metadataValue is the group's GroupMetadataValue v3.
func (g *ClassicGroup) metadataValue(now time.Time) kmsg.GroupMetadataValue {
	v := kmsg.NewGroupMetadataValue()
	v.Version = 3
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocolName != "" {
		p := g.protocolName
		v.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = now.UnixMilli()
	for _, id := range g.memberIDs() {
		m := g.members[id]
		mv := kmsg.NewGroupMetadataValueMember()
		mv.MemberID = m.id
		mv.InstanceID = m.instanceID
		mv.ClientID = m.clientID
		mv.ClientHost = m.clientHost
		mv.RebalanceTimeoutMillis = int32(m.rebalanceTimeout / time.Millisecond)
		mv.SessionTimeoutMillis = int32(m.sessionTimeout / time.Millisecond)
		mv.Subscription = m.metadataFor(g.protocolName)
		if mv.Subscription == nil {
			mv.Subscription = []byte{}
		}
		mv.Assignment = m.assignment
		if mv.Assignment == nil {
			mv.Assignment = []byte{}
		}
		v.Members = append(v.Members, mv)
	}
	return v
}

// writeMetadata persists the group (GroupMetadata record); replay rebuilds the durable fields.
func (g *ClassicGroup) writeMetadata(st *State) {
	v := g.metadataValue(st.Now)
	st.Write(Record{Key: classicKey(g.id), Value: v.AppendTo(nil)})
}

// replayGroupMetadata rebuilds a classic group from its record: Empty without members, else
// Stable. For a live group (the record was just written by this shard) the in-memory state is
// kept and only the durable fields are refreshed.
func replayGroupMetadata(st *State, key, value []byte) error {
	var k kmsg.GroupMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return wrapCorrupt("GroupMetadataKey", err)
	}
	if value == nil {
		if g, ok := st.Groups[k.Group].(*ClassicGroup); ok {
			g.state = ClassicDead
			st.removeGroup(k.Group)
		}
		return nil
	}
	var v kmsg.GroupMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return wrapCorrupt("GroupMetadataValue", err)
	}
	g, live := st.Groups[k.Group].(*ClassicGroup)
	if live && !st.Loading {
		// Written by a live operation, which already updated the group in memory (classic
		// groups keep joins in progress in memory, as Kafka does).
		d := durableOf(v)
		g.persisted = &d
		return nil
	}
	if !live {
		if other, ok := st.Groups[k.Group]; ok && other.Type() != TypeClassic {
			return nil // a newer group of another type owns the id
		}
		g = newSimpleClassicGroup(k.Group)
		st.Groups[k.Group] = g
	}
	g.protocolType = v.ProtocolType
	g.generation = v.Generation
	g.protocolName, g.leader = "", ""
	if v.Protocol != nil {
		g.protocolName = *v.Protocol
	}
	if v.Leader != nil {
		g.leader = *v.Leader
	}
	if v.CurrentStateTimestamp > 0 {
		g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
	}
	// Rebuild members from the record, keeping in-memory fields (pending calls) of live ones.
	old := g.members
	g.members = map[string]*classicMember{}
	g.static = map[string]string{}
	for _, mv := range v.Members {
		m := old[mv.MemberID]
		if m == nil {
			m = &classicMember{id: mv.MemberID}
		}
		m.instanceID = mv.InstanceID
		m.clientID = mv.ClientID
		m.clientHost = mv.ClientHost
		m.rebalanceTimeout = time.Duration(mv.RebalanceTimeoutMillis) * time.Millisecond
		m.sessionTimeout = time.Duration(mv.SessionTimeoutMillis) * time.Millisecond
		m.protocolType = v.ProtocolType
		if m.metadataFor(g.protocolName) == nil || !live {
			m.protocols = []classicProtocol{{Name: g.protocolName, Metadata: mv.Subscription}}
		}
		m.assignment = mv.Assignment
		g.members[m.id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	// Loading: the group may already exist as a simple group created by an offset record
	// replayed first (load order is by key, not by write), so the state is always derived.
	g.recount()
	if len(g.members) == 0 {
		g.state = ClassicEmpty
	} else {
		g.state = ClassicStable
	}
	d := durableOf(v)
	g.persisted = &d
	return nil
}

// classicGroups are the shard's classic groups sorted by id (for deterministic walks).
func (st *State) classicGroups() []*ClassicGroup {
	var out []*ClassicGroup
	for _, id := range sortedKeys(st.Groups) {
		if g, ok := st.Groups[id].(*ClassicGroup); ok {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// onLoadedClassic is the classic part of Kafka's onLoaded: every member's session timer is
// re-armed, and a group over group.max.size (the config was lowered) rebalances so that its
// members can commit first.
func onLoadedClassic(st *State) {
	for _, g := range st.classicGroups() {
		for _, id := range g.memberIDs() {
			g.scheduleSession(st, g.members[id])
		}
		if st.Cfg.Classic.MaxSize > 0 && len(g.members) > st.Cfg.Classic.MaxSize {
			g.prepareRebalance(st, RebalanceCause{Kind: CauseMemberFenced, Reason: "the loaded group is over group.max.size"})
		}
	}
}

// StaticMemberID returns the member id owning a group.instance.id ("" when none).
func (g *ClassicGroup) StaticMemberID(instanceID string) string { return g.static[instanceID] }

// HasMember reports whether id is a member of the group.
func (g *ClassicGroup) HasMember(id string) bool { _, ok := g.members[id]; return ok }

// AllMembersSupport reports whether every member listed protocol in its JoinGroup.
func (g *ClassicGroup) AllMembersSupport(protocol string) bool {
	for _, m := range g.members {
		if !m.supports(protocol) {
			return false
		}
	}
	return true
}

// supports reports whether the member listed protocol (its metadata may be empty).
func (m *classicMember) supports(protocol string) bool {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return true
		}
	}
	return false
}

// NumAwaitingSync is the number of members whose SyncGroup is waiting for the leader's.
func (g *ClassicGroup) NumAwaitingSync() int {
	n := 0
	for _, m := range g.members {
		if m.syncCall != nil {
			n++
		}
	}
	return n
}

// track adds (sign +1) or removes (-1) a member's contribution to the awaiting and protoCount
// counters; it is called around every change of a member's protocols, join call or membership.
func (g *ClassicGroup) track(m *classicMember, sign int) {
	g.tracked += sign
	if g.protoCount == nil {
		g.protoCount = map[string]int{}
	}
	if m.joinCall != nil {
		g.awaiting += sign
	}
	for i, p := range m.protocols {
		dup := false
		for _, q := range m.protocols[:i] {
			dup = dup || q.Name == p.Name
		}
		if dup {
			continue
		}
		if g.protoCount[p.Name] += sign; g.protoCount[p.Name] == 0 {
			delete(g.protoCount, p.Name)
		}
	}
}

// setJoin sets a member's waiting JoinGroup call (nil: none), keeping awaiting exact.
func (g *ClassicGroup) setJoin(m *classicMember, c *JoinCall) {
	in := g.members[m.id] == m
	if in && m.joinCall != nil {
		g.awaiting--
	}
	m.joinCall = c
	if in && c != nil {
		g.awaiting++
	}
}

// recount rebuilds the counters from the members.
func (g *ClassicGroup) recount() {
	g.awaiting, g.tracked = 0, 0
	g.protoCount = map[string]int{}
	for _, m := range g.members {
		g.track(m, +1)
	}
}

// ensureCounts recounts when members were installed without track (a group built by another
// group type's conversion, e.g. a consumer group downgraded to classic).
func (g *ClassicGroup) ensureCounts() {
	if g.tracked != len(g.members) {
		g.recount()
	}
}

// CheckCounters reports a difference between the incrementally kept counters and a recount
// (for tests).
func (g *ClassicGroup) CheckCounters() error {
	awaiting, counts, tracked := g.awaiting, g.protoCount, g.tracked
	g.recount()
	defer func() { g.awaiting, g.protoCount, g.tracked = awaiting, counts, tracked }()
	if tracked != len(g.members) {
		return fmt.Errorf("tracked %d members, have %d", tracked, len(g.members))
	}
	if awaiting != g.awaiting {
		return fmt.Errorf("awaiting join %d, recount %d", awaiting, g.awaiting)
	}
	if !maps.Equal(counts, g.protoCount) {
		return fmt.Errorf("protocol counts %v, recount %v", counts, g.protoCount)
	}
	return nil
}
