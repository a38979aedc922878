package coordinator

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RecRebalanceHistory is muster's own record type (not one of Kafka's): one rebalance history
// event of a group. Key: int16 type, string group, int64 sequence number; value: see
// encodeRebalanceEvent (layout in docs/records.md).
const RecRebalanceHistory int16 = 1020

// CauseKind names why a group's epoch (a classic group's generation) was bumped.
type CauseKind string

// The causes of rebalances.
const (
	// CauseMemberJoined: a member joined (the first one creates the group).
	CauseMemberJoined CauseKind = "MEMBER_JOINED"
	// CauseMemberRejoined: a classic member (the leader, or one with changed metadata) joined
	// again.
	CauseMemberRejoined CauseKind = "MEMBER_REJOINED"
	// CauseMemberLeft: a member left (a leave heartbeat, LeaveGroup with its member id).
	CauseMemberLeft CauseKind = "MEMBER_LEFT"
	// CauseMemberFenced: the coordinator removed a member; Reason says why (session timeout,
	// rebalance timeout, join or sync timeout, group over its maximum size).
	CauseMemberFenced CauseKind = "MEMBER_FENCED"
	// CauseAdminRemoval: an administrator removed a member (LeaveGroup naming a static member
	// by its instance id alone, as Kafka's Admin.removeMembersFromConsumerGroup does).
	CauseAdminRemoval CauseKind = "ADMIN_REMOVAL"
	// CauseSubscriptionChanged: a member's subscribed topics (or a classic member's protocols)
	// changed, Old and New.
	CauseSubscriptionChanged CauseKind = "SUBSCRIPTION_CHANGED"
	// CauseRegexChanged: a member's subscribed regular expression changed, Old and New.
	CauseRegexChanged CauseKind = "REGEX_CHANGED"
	// CauseRegexResolved: a subscribed regular expression now matches other topics.
	CauseRegexResolved CauseKind = "REGEX_RESOLUTION_CHANGED"
	// CauseMetadataChanged: the KIP-1101 metadata hash of the subscribed topics changed; Topic
	// and Reason say what changed (created, deleted, partitions a → b, racks).
	CauseMetadataChanged CauseKind = "METADATA_CHANGED"
	// CauseMemberMetadataChanged: a streams member's metadata changed (rack, endpoint, client
	// tags, process, ...), Old and New.
	CauseMemberMetadataChanged CauseKind = "MEMBER_METADATA_CHANGED"
	// CauseTopologyChanged: a streams group's topology epoch changed, or its topology became
	// ready or not ready, Old and New.
	CauseTopologyChanged CauseKind = "TOPOLOGY_CHANGED"
	// CauseAssignorChanged: the preferred server assignor changed, Old and New.
	CauseAssignorChanged CauseKind = "ASSIGNOR_CHANGED"
	// CauseAssignmentConfigChanged: a streams group's assignment configs changed, Old and New.
	CauseAssignmentConfigChanged CauseKind = "ASSIGNMENT_CONFIG_CHANGED"
	// CauseMigration: the group changed protocol (classic → consumer or consumer → classic).
	CauseMigration CauseKind = "PROTOCOL_MIGRATION"
	// CauseUnknown: a classic rebalance whose cause was not seen (it began before a restart).
	CauseUnknown CauseKind = "UNKNOWN"
)

// AllCauses lists the causes (metrics export one series per group type and cause).
var AllCauses = []CauseKind{CauseMemberJoined, CauseMemberRejoined, CauseMemberLeft, CauseMemberFenced,
	CauseAdminRemoval, CauseSubscriptionChanged, CauseRegexChanged, CauseRegexResolved, CauseMetadataChanged,
	CauseMemberMetadataChanged, CauseTopologyChanged, CauseAssignorChanged, CauseAssignmentConfigChanged,
	CauseMigration, CauseUnknown}

// RebalanceCause is one reason of a rebalance: its kind and what it concerns.
type RebalanceCause struct {
	Kind   CauseKind `json:"cause"`
	Member string    `json:"member,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Topic  string    `json:"topic,omitempty"`
	Old    string    `json:"old,omitempty"`
	New    string    `json:"new,omitempty"`
}

// String renders a cause for log lines and tools: "MEMBER_FENCED member=m reason=session timeout".
func (c RebalanceCause) String() string {
	var b strings.Builder
	b.WriteString(string(c.Kind))
	for _, kv := range [][2]string{{"member", c.Member}, {"topic", c.Topic}, {"reason", c.Reason}, {"old", c.Old}, {"new", c.New}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	return b.String()
}

// RebalanceEvent is one group epoch bump (a classic group's generation bump) with its causes,
// the first being the main one.
type RebalanceEvent struct {
	Seq       int64            `json:"seq"`
	TimeMs    int64            `json:"timestamp_ms"`
	GroupType GroupType        `json:"group_type"`
	OldEpoch  int32            `json:"old_epoch"`
	NewEpoch  int32            `json:"new_epoch"`
	Causes    []RebalanceCause `json:"causes"`
}

// Members lists the member ids the causes name, in order, without repeats.
func (e *RebalanceEvent) Members() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range e.Causes {
		if c.Member != "" && !seen[c.Member] {
			seen[c.Member] = true
			out = append(out, c.Member)
		}
	}
	return out
}

// groupHistory is a group's bounded rebalance history (hard state: the events are records) and
// its log limiter (soft).
type groupHistory struct {
	events []RebalanceEvent // sorted by Seq
	// lastLog and suppressed rate-limit the INFO line of epoch bumps.
	lastLog    time.Time
	suppressed int
}

// nextSeq is one past the newest event's sequence number.
func (h *groupHistory) nextSeq() int64 {
	if len(h.events) == 0 {
		return 0
	}
	return h.events[len(h.events)-1].Seq + 1
}

// put inserts or replaces the event with e.Seq (replay is in key order, so usually at the end).
func (h *groupHistory) put(e RebalanceEvent) {
	i := sort.Search(len(h.events), func(i int) bool { return h.events[i].Seq >= e.Seq })
	switch {
	case i < len(h.events) && h.events[i].Seq == e.Seq:
		h.events[i] = e
	case i == len(h.events):
		h.events = append(h.events, e)
	default:
		h.events = append(h.events, RebalanceEvent{})
		copy(h.events[i+1:], h.events[i:])
		h.events[i] = e
	}
}

func (h *groupHistory) remove(seq int64) {
	i := sort.Search(len(h.events), func(i int) bool { return h.events[i].Seq >= seq })
	if i < len(h.events) && h.events[i].Seq == seq {
		h.events = append(h.events[:i], h.events[i+1:]...)
	}
}

// RebalanceKey counts rebalances by group type and main cause.
type RebalanceKey struct {
	Type  GroupType
	Cause CauseKind
}

// recordRebalance is every group epoch bump's bookkeeping: the bump is counted by group type and
// main cause, logged at INFO (at most one line per group per muster.rebalance.log.interval.ms,
// the suppressed ones counted in the next line), and, with a history bound > 0, written as a
// history record; the oldest events beyond the bound are tombstoned. It writes nothing while the
// shard loads.
func (st *State) recordRebalance(group string, typ GroupType, oldEpoch, newEpoch int32, causes []RebalanceCause) {
	if st.Loading {
		return
	}
	if len(causes) == 0 {
		causes = []RebalanceCause{{Kind: CauseUnknown}}
	}
	if st.Metrics.Rebalances == nil {
		st.Metrics.Rebalances = map[RebalanceKey]int64{}
	}
	st.Metrics.Rebalances[RebalanceKey{typ, causes[0].Kind}]++
	h := st.history(group)
	st.logRebalance(h, group, typ, oldEpoch, newEpoch, causes)
	max := st.Cfg.History.MaxEvents
	if max <= 0 {
		return
	}
	e := RebalanceEvent{Seq: h.nextSeq(), TimeMs: st.Now.UnixMilli(), GroupType: typ, OldEpoch: oldEpoch, NewEpoch: newEpoch, Causes: causes}
	st.Write(Record{Key: historyKey(group, e.Seq), Value: encodeRebalanceEvent(&e)})
	for len(h.events) > max {
		st.Write(Record{Key: historyKey(group, h.events[0].Seq)})
	}
}

func (st *State) logRebalance(h *groupHistory, group string, typ GroupType, oldEpoch, newEpoch int32, causes []RebalanceCause) {
	every := st.Cfg.History.LogInterval
	if every > 0 && !h.lastLog.IsZero() && st.Now.Sub(h.lastLog) < every {
		h.suppressed++
		return
	}
	cs := make([]string, len(causes))
	for i, c := range causes {
		cs[i] = c.String()
	}
	args := []any{"group", group, "type", string(typ), "old_epoch", oldEpoch, "new_epoch", newEpoch, "cause", strings.Join(cs, "; ")}
	if h.suppressed > 0 {
		args = append(args, "suppressed_since_last", h.suppressed)
	}
	st.Log.Info("group epoch bumped", args...)
	h.lastLog, h.suppressed = st.Now, 0
}

// history returns a group's history, creating it.
func (st *State) history(group string) *groupHistory {
	h := st.History[group]
	if h == nil {
		h = &groupHistory{}
		st.History[group] = h
	}
	return h
}

// deleteHistory tombstones a deleted group's history.
func (st *State) deleteHistory(group string) {
	h := st.History[group]
	if h == nil {
		return
	}
	for len(h.events) > 0 {
		st.Write(Record{Key: historyKey(group, h.events[0].Seq)})
	}
	delete(st.History, group)
}

// RebalanceHistory reads a group's rebalance history, oldest first (nil when it has none).
func RebalanceHistory(group string) func(st *State, c *Call[[]RebalanceEvent]) {
	return func(st *State, c *Call[[]RebalanceEvent]) {
		var out []RebalanceEvent
		if h := st.History[group]; h != nil {
			out = append([]RebalanceEvent(nil), h.events...)
		}
		c.Reply(st, out)
	}
}

func historyKey(group string, seq int64) []byte {
	e := Enc{B: make([]byte, 0, 2+2+len(group)+8)}
	e.Int16(RecRebalanceHistory)
	e.String(group)
	e.Int64(seq)
	return e.B
}

// encodeRebalanceEvent is value version 0: int64 time ms, string group type, int32 old epoch,
// int32 new epoch, int32 n causes, each: string kind, member, reason, topic, old, new.
func encodeRebalanceEvent(e *RebalanceEvent) []byte {
	n := 2 + 8 + 2 + len(e.GroupType) + 4 + 4 + 4
	for _, c := range e.Causes {
		n += 12 + len(c.Kind) + len(c.Member) + len(c.Reason) + len(c.Topic) + len(c.Old) + len(c.New)
	}
	enc := Enc{B: make([]byte, 0, n)}
	enc.Int16(0)
	enc.Int64(e.TimeMs)
	enc.String(string(e.GroupType))
	enc.Int32(e.OldEpoch)
	enc.Int32(e.NewEpoch)
	enc.ArrayLen(len(e.Causes))
	for _, c := range e.Causes {
		enc.String(string(c.Kind))
		enc.String(c.Member)
		enc.String(c.Reason)
		enc.String(c.Topic)
		enc.String(c.Old)
		enc.String(c.New)
	}
	return enc.B
}

func decodeRebalanceEvent(seq int64, v []byte) (RebalanceEvent, error) {
	d := Dec{B: v}
	e := RebalanceEvent{Seq: seq}
	if ver := d.Int16(); d.Err() == nil && ver != 0 {
		return e, fmt.Errorf("%w: rebalance history value version %d", ErrCorruptRecord, ver)
	}
	e.TimeMs = d.Int64()
	e.GroupType = GroupType(d.String())
	e.OldEpoch = d.Int32()
	e.NewEpoch = d.Int32()
	n := d.ArrayLen(12)
	for i := 0; i < n && d.Err() == nil; i++ {
		e.Causes = append(e.Causes, RebalanceCause{Kind: CauseKind(d.String()), Member: d.String(), Reason: d.String(),
			Topic: d.String(), Old: d.String(), New: d.String()})
	}
	return e, d.Done()
}

// replayHistory applies a history record: a value puts the event, a tombstone removes it.
func replayHistory(st *State, key, value []byte) error {
	d := Dec{B: key[2:]}
	group := d.String()
	if d.Err() != nil || len(d.B) != 8 {
		return fmt.Errorf("%w: rebalance history key", ErrCorruptRecord)
	}
	seq := int64(binary.BigEndian.Uint64(d.B))
	if value == nil {
		if h := st.History[group]; h != nil {
			h.remove(seq)
			if len(h.events) == 0 {
				delete(st.History, group)
			}
		}
		return nil
	}
	e, err := decodeRebalanceEvent(seq, value)
	if err != nil {
		return err
	}
	st.history(group).put(e)
	return nil
}

// HistoryView is a group's events for the replay-equivalence check (coordtest).
func (st *State) HistoryView() map[string][]RebalanceEvent {
	out := map[string][]RebalanceEvent{}
	for g, h := range st.History {
		if len(h.events) > 0 {
			out[g] = append([]RebalanceEvent(nil), h.events...)
		}
	}
	return out
}

// subscriptionString renders a consumer member's subscription: "t1,t2" and/or "regex=r".
func subscriptionString(m *consumerMember) string {
	s := strings.Join(m.subscribedNames, ",")
	if m.subscribedRegex != "" {
		if s != "" {
			s += " "
		}
		s += "regex=" + m.subscribedRegex
	}
	return s
}

// topicChanges names what changed in the group's subscribed topics since their KIP-1101 hashes
// were last computed in this process (nothing after a restart): created, deleted, recreated,
// partitions old → new, racks.
func (g *ConsumerGroup) topicChanges(st *State) []RebalanceCause {
	if !g.hashComputed || st.Image == nil {
		return nil
	}
	var out []RebalanceCause
	rack := st.Image.Rack()
	for _, name := range sortedKeys(g.subscribedTopics()) {
		c, cached := g.topicHashes[name]
		id, n, ok := st.Image.TopicID(name)
		switch {
		case !ok && cached:
			out = append(out, RebalanceCause{Kind: CauseMetadataChanged, Topic: name, Reason: "topic deleted"})
			delete(g.topicHashes, name)
		case ok && !cached:
			out = append(out, RebalanceCause{Kind: CauseMetadataChanged, Topic: name, Reason: "topic created", New: strconv.Itoa(int(n)) + " partitions"})
		case !ok:
		case c.id != id:
			out = append(out, RebalanceCause{Kind: CauseMetadataChanged, Topic: name, Reason: "topic recreated with a new id", New: strconv.Itoa(int(n)) + " partitions"})
		case c.parts != n:
			out = append(out, RebalanceCause{Kind: CauseMetadataChanged, Topic: name, Reason: "partitions changed",
				Old: strconv.Itoa(int(c.parts)), New: strconv.Itoa(int(n))})
		case c.rack != rack:
			out = append(out, RebalanceCause{Kind: CauseMetadataChanged, Topic: name, Reason: "partition racks changed"})
		}
	}
	return out
}

// notePending adds causes to be recorded with the group's next epoch bump (a protocol migration,
// recorded when the converted group next rebalances).
func (g *ConsumerGroup) notePending(causes ...RebalanceCause) {
	g.pendingCauses = append(g.pendingCauses, causes...)
}

// takePendingCauses returns and clears the causes noted for the next bump.
func (g *ConsumerGroup) takePendingCauses() []RebalanceCause {
	c := g.pendingCauses
	g.pendingCauses = nil
	return c
}

// maxPendingCauses bounds the causes a classic rebalance collects (a join storm).
const maxPendingCauses = 64

// noteCause adds a cause to the classic rebalance in progress (an equal one is not repeated).
func (g *ClassicGroup) noteCause(c RebalanceCause) {
	for _, o := range g.causes {
		if o == c {
			return
		}
	}
	if len(g.causes) < maxPendingCauses {
		g.causes = append(g.causes, c)
	}
}

// takeCauses returns and clears the causes of the rebalance that completes.
func (g *ClassicGroup) takeCauses() []RebalanceCause {
	c := g.causes
	g.causes = nil
	return c
}

// streamsMemberCause says how a streams member's metadata changed (base nil: it joined).
func streamsMemberCause(id string, base, nm *streamsMemberMeta) RebalanceCause {
	if base == nil {
		return RebalanceCause{Kind: CauseMemberJoined, Member: id, New: "process " + nm.ProcessID}
	}
	if base.TopologyEpoch != nm.TopologyEpoch {
		return RebalanceCause{Kind: CauseTopologyChanged, Member: id, Reason: "member topology epoch",
			Old: strconv.Itoa(int(base.TopologyEpoch)), New: strconv.Itoa(int(nm.TopologyEpoch))}
	}
	var what []string
	add := func(changed bool, name string) {
		if changed {
			what = append(what, name)
		}
	}
	add(!eqStrPtr(base.InstanceID, nm.InstanceID), "instance id")
	add(!eqStrPtr(base.RackID, nm.RackID), "rack")
	add(base.ClientID != nm.ClientID, "client id")
	add(base.ClientHost != nm.ClientHost, "client host")
	add(base.RebalanceTimeout != nm.RebalanceTimeout, "rebalance timeout")
	add(base.ProcessID != nm.ProcessID, "process id")
	add((base.UserEndpoint == nil) != (nm.UserEndpoint == nil) || (base.UserEndpoint != nil && *base.UserEndpoint != *nm.UserEndpoint), "endpoint")
	add(!(&streamsMemberMeta{ClientTags: base.ClientTags}).equal(&streamsMemberMeta{ClientTags: nm.ClientTags}), "client tags")
	return RebalanceCause{Kind: CauseMemberMetadataChanged, Member: id, Reason: strings.Join(what, ", ")}
}

// groupCauses says what changed at the group level of a streams group: the metadata hash of its
// topics, its validated topology epoch, its assignment configs.
// A hash change is named only when nothing else (explained: a member change, or the topology
// readiness) accounts for it.
func (g *StreamsGroup) groupCauses(cfg StreamsConfig, hash int64, validated int32, explained bool) []RebalanceCause {
	var out []RebalanceCause
	if validated != g.validatedTopologyEpoch {
		reason := "the topology is ready"
		if validated < 0 {
			reason = "the topology is not ready (missing or mispartitioned topics)"
		}
		out = append(out, RebalanceCause{Kind: CauseTopologyChanged, Reason: reason,
			Old: strconv.Itoa(int(g.validatedTopologyEpoch)), New: strconv.Itoa(int(validated))})
	}
	if hash != g.metadataHash && !explained && len(out) == 0 {
		out = append(out, RebalanceCause{Kind: CauseMetadataChanged, Reason: "the topology's topics' metadata changed"})
	}
	if !cfg.sameAssignmentConfigs(g.lastAssignmentConfigs) && g.lastAssignmentConfigs != nil {
		out = append(out, RebalanceCause{Kind: CauseAssignmentConfigChanged,
			Old: formatConfigs(g.lastAssignmentConfigs), New: formatConfigs(cfg.assignmentConfigs())})
	}
	return out
}

func formatConfigs(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// DecodeRebalanceHistory reads a history record: its group and sequence number, and the event
// (nil for a tombstone). Tools and tests print records with it.
func DecodeRebalanceHistory(r Record) (group string, seq int64, e *RebalanceEvent, err error) {
	d := Dec{B: r.Key[2:]}
	group = d.String()
	if d.Err() != nil || len(d.B) != 8 {
		return "", 0, nil, fmt.Errorf("%w: rebalance history key", ErrCorruptRecord)
	}
	seq = int64(binary.BigEndian.Uint64(d.B))
	if r.Value == nil {
		return group, seq, nil, nil
	}
	ev, err := decodeRebalanceEvent(seq, r.Value)
	return group, seq, &ev, err
}

// regexCause names what a regex re-resolution changed in the subscribed topics.
func regexCause(before, after map[string]bool) RebalanceCause {
	var added, removed []string
	for t := range after {
		if !before[t] {
			added = append(added, t)
		}
	}
	for t := range before {
		if !after[t] {
			removed = append(removed, t)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	c := RebalanceCause{Kind: CauseRegexResolved, Reason: "a subscribed regular expression matches other topics"}
	if len(added)+len(removed) > 0 {
		c.Reason = "subscribed regular expressions resolved anew"
		c.Old, c.New = "-"+strings.Join(removed, ",-"), "+"+strings.Join(added, ",+")
		if len(removed) == 0 {
			c.Old = ""
		}
		if len(added) == 0 {
			c.New = ""
		}
	}
	return c
}
