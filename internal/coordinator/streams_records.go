package coordinator

import (
	"fmt"
	"sort"
)

// Streams group records (types 17, 19–23). Keys are groupKey(type, group[, member]); values
// start with an int16 value version (0) and use Enc/Dec. Layouts: docs/records.md, section
// "Streams groups".

const streamsValueVersion int16 = 0

func streamsValue() *Enc {
	e := &Enc{B: make([]byte, 0, 64)}
	e.Int16(streamsValueVersion)
	return e
}

func streamsDec(what string, value []byte) (*Dec, error) {
	d := &Dec{B: value}
	if v := d.Int16(); d.Err() == nil && v != streamsValueVersion {
		return nil, fmt.Errorf("%w: %s value version %d", ErrCorruptRecord, what, v)
	}
	return d, d.Err()
}

// --- task sets ---

func encodeTasks(e *Enc, t streamsTasks, withEpochs bool) {
	sorted := t.sorted()
	// group by subtopology
	var subs []string
	for _, k := range sorted {
		if len(subs) == 0 || subs[len(subs)-1] != k.Sub {
			subs = append(subs, k.Sub)
		}
	}
	e.ArrayLen(len(subs))
	i := 0
	for _, s := range subs {
		e.String(s)
		j := i
		for j < len(sorted) && sorted[j].Sub == s {
			j++
		}
		e.ArrayLen(j - i)
		for _, k := range sorted[i:j] {
			e.Int32(k.Part)
			if withEpochs {
				e.Int32(t[k])
			}
		}
		i = j
	}
}

func decodeTasks(d *Dec, withEpochs bool) streamsTasks {
	out := streamsTasks{}
	n := d.ArrayLen(6)
	for i := 0; i < n; i++ {
		s := d.String()
		m := d.ArrayLen(4)
		for j := 0; j < m; j++ {
			p := d.Int32()
			var ep int32
			if withEpochs {
				ep = d.Int32()
			}
			out[streamsTask{s, p}] = ep
		}
	}
	return out
}

func encodeTaskSet(e *Enc, a streamsTaskSet, activeEpochs bool) {
	encodeTasks(e, a.Active, activeEpochs)
	encodeTasks(e, a.Standby, false)
	encodeTasks(e, a.Warmup, false)
}

func decodeTaskSet(d *Dec, activeEpochs bool) streamsTaskSet {
	return streamsTaskSet{Active: decodeTasks(d, activeEpochs), Standby: decodeTasks(d, false), Warmup: decodeTasks(d, false)}
}

// --- 17 StreamsGroupMetadata ---

type streamsMetadataValue struct {
	Epoch                   int32
	MetadataHash            int64
	ValidatedTopologyEpoch  int32
	LastAssignmentConfigs   map[string]string
	StoredTopologyEpoch     int32
	LastFailedTopologyEpoch int32
}

func encodeStreamsConfigs(m map[string]string) []byte {
	e := &Enc{}
	if m == nil {
		e.ArrayLen(-1)
		return e.B
	}
	e.ArrayLen(len(m))
	for _, k := range sortedKeys(m) {
		e.String(k)
		e.String(m[k])
	}
	return e.B
}

func encodeStreamsMetadata(v *streamsMetadataValue) []byte {
	e := streamsValue()
	e.Int32(v.Epoch)
	e.Int64(v.MetadataHash)
	e.Int32(v.ValidatedTopologyEpoch)
	e.B = append(e.B, encodeStreamsConfigs(v.LastAssignmentConfigs)...)
	e.Int32(v.StoredTopologyEpoch)
	e.Int32(v.LastFailedTopologyEpoch)
	return e.B
}

func decodeStreamsMetadata(value []byte) (*streamsMetadataValue, error) {
	d, err := streamsDec("StreamsGroupMetadata", value)
	if err != nil {
		return nil, err
	}
	v := &streamsMetadataValue{Epoch: d.Int32(), MetadataHash: d.Int64(), ValidatedTopologyEpoch: d.Int32()}
	if n := d.ArrayLen(4); n >= 0 {
		v.LastAssignmentConfigs = map[string]string{}
		for i := 0; i < n; i++ {
			k := d.String()
			v.LastAssignmentConfigs[k] = d.String()
		}
	}
	v.StoredTopologyEpoch = d.Int32()
	v.LastFailedTopologyEpoch = d.Int32()
	return v, d.Done()
}

// --- 19 StreamsGroupMemberMetadata ---

func encodeStreamsMemberMeta(m *streamsMemberMeta) []byte {
	e := streamsValue()
	e.NullableString(m.InstanceID)
	e.NullableString(m.RackID)
	e.String(m.ClientID)
	e.String(m.ClientHost)
	e.Int32(m.RebalanceTimeout)
	e.Int32(m.TopologyEpoch)
	e.String(m.ProcessID)
	if m.UserEndpoint == nil {
		e.Bool(false)
	} else {
		e.Bool(true)
		e.String(m.UserEndpoint.Host)
		e.Int32(int32(m.UserEndpoint.Port))
	}
	e.ArrayLen(len(m.ClientTags))
	for _, k := range sortedKeys(m.ClientTags) {
		e.String(k)
		e.String(m.ClientTags[k])
	}
	return e.B
}

func decodeStreamsMemberMeta(value []byte) (*streamsMemberMeta, error) {
	d, err := streamsDec("StreamsGroupMemberMetadata", value)
	if err != nil {
		return nil, err
	}
	m := &streamsMemberMeta{InstanceID: d.NullableString(), RackID: d.NullableString(), ClientID: d.String(),
		ClientHost: d.String(), RebalanceTimeout: d.Int32(), TopologyEpoch: d.Int32(), ProcessID: d.String()}
	if d.Bool() {
		m.UserEndpoint = &streamsEndpoint{Host: d.String(), Port: uint16(d.Int32())}
	}
	n := d.ArrayLen(4)
	m.ClientTags = map[string]string{}
	for i := 0; i < n; i++ {
		k := d.String()
		m.ClientTags[k] = d.String()
	}
	return m, d.Done()
}

// --- 20 StreamsGroupTargetAssignmentMetadata ---

func encodeStreamsTargetMetadata(epoch int32, ts int64) []byte {
	e := streamsValue()
	e.Int32(epoch)
	e.Int64(ts)
	return e.B
}

// --- 21 StreamsGroupTargetAssignmentMember ---

func encodeStreamsTarget(a streamsTaskSet) []byte {
	e := streamsValue()
	encodeTaskSet(e, a, false)
	return e.B
}

// --- 22 StreamsGroupCurrentMemberAssignment ---

func encodeStreamsCurrent(c *streamsCurrent) []byte {
	e := streamsValue()
	e.Int32(c.MemberEpoch)
	e.Int32(c.PreviousMemberEpoch)
	e.Int8(c.State)
	encodeTaskSet(e, c.Assigned, true)
	encodeTaskSet(e, c.PendingRevocation, false)
	return e.B
}

func decodeStreamsCurrent(value []byte) (*streamsCurrent, error) {
	d, err := streamsDec("StreamsGroupCurrentMemberAssignment", value)
	if err != nil {
		return nil, err
	}
	c := &streamsCurrent{MemberEpoch: d.Int32(), PreviousMemberEpoch: d.Int32(), State: d.Int8()}
	c.Assigned = decodeTaskSet(d, true)
	c.PendingRevocation = decodeTaskSet(d, false)
	return c, d.Done()
}

// --- 23 StreamsGroupTopology ---

func encodeTopicInfos(e *Enc, ts []StreamsTopicInfo) {
	e.ArrayLen(len(ts))
	for _, t := range ts {
		e.String(t.Name)
		e.Int32(t.Partitions)
		e.Int16(t.ReplicationFactor)
		e.ArrayLen(len(t.Configs))
		for _, kv := range t.Configs {
			e.String(kv[0])
			e.String(kv[1])
		}
	}
}

func decodeTopicInfos(d *Dec) []StreamsTopicInfo {
	n := d.ArrayLen(12)
	var out []StreamsTopicInfo
	for i := 0; i < n; i++ {
		t := StreamsTopicInfo{Name: d.String(), Partitions: d.Int32(), ReplicationFactor: d.Int16()}
		m := d.ArrayLen(4)
		for j := 0; j < m; j++ {
			k := d.String()
			t.Configs = append(t.Configs, [2]string{k, d.String()})
		}
		out = append(out, t)
	}
	return out
}

func encodeInt16s(e *Enc, xs []int16) {
	e.ArrayLen(len(xs))
	for _, x := range xs {
		e.Int16(x)
	}
}

func decodeInt16s(d *Dec) []int16 {
	n := d.ArrayLen(2)
	out := make([]int16, 0, max(n, 0))
	for i := 0; i < n; i++ {
		out = append(out, d.Int16())
	}
	return out
}

func encodeStreamsTopology(t *StreamsTopology) []byte {
	e := streamsValue()
	e.Int32(t.Epoch)
	e.ArrayLen(len(t.Subtopologies))
	for _, s := range t.Subtopologies {
		e.String(s.ID)
		e.Strings(nonNilStrings(s.SourceTopics))
		e.Strings(nonNilStrings(s.RepartitionSinkTopics))
		encodeTopicInfos(e, s.StateChangelogTopics)
		encodeTopicInfos(e, s.RepartitionSourceTopics)
		e.ArrayLen(len(s.CopartitionGroups))
		for _, cg := range s.CopartitionGroups {
			encodeInt16s(e, cg.SourceTopics)
			encodeInt16s(e, cg.RepartitionSourceTopics)
		}
	}
	return e.B
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func decodeStreamsTopology(value []byte) (*StreamsTopology, error) {
	d, err := streamsDec("StreamsGroupTopology", value)
	if err != nil {
		return nil, err
	}
	t := &StreamsTopology{Epoch: d.Int32()}
	n := d.ArrayLen(18)
	for i := 0; i < n; i++ {
		s := StreamsSubtopology{ID: d.String(), SourceTopics: d.Strings(), RepartitionSinkTopics: d.Strings()}
		s.StateChangelogTopics = decodeTopicInfos(d)
		s.RepartitionSourceTopics = decodeTopicInfos(d)
		m := d.ArrayLen(8)
		for j := 0; j < m; j++ {
			s.CopartitionGroups = append(s.CopartitionGroups, StreamsCopartitionGroup{SourceTopics: decodeInt16s(d), RepartitionSourceTopics: decodeInt16s(d)})
		}
		t.Subtopologies = append(t.Subtopologies, s)
	}
	if err := d.Done(); err != nil {
		return nil, err
	}
	sort.SliceStable(t.Subtopologies, func(i, j int) bool { return t.Subtopologies[i].ID < t.Subtopologies[j].ID })
	return t, nil
}

// --- writers (the only way a handler changes a streams group's durable state) ---

func (g *StreamsGroup) metadataValue() *streamsMetadataValue {
	return &streamsMetadataValue{Epoch: g.groupEpoch, MetadataHash: g.metadataHash, ValidatedTopologyEpoch: g.validatedTopologyEpoch,
		LastAssignmentConfigs: g.lastAssignmentConfigs, StoredTopologyEpoch: g.storedTopologyEpoch, LastFailedTopologyEpoch: g.lastFailedTopologyEpoch}
}

func (g *StreamsGroup) writeMetadata(st *State, v *streamsMetadataValue) {
	st.Write(Record{Key: groupKey(RecStreamsGroupMetadata, g.id), Value: encodeStreamsMetadata(v)})
}

// WriteTopologyDescriptionEpochs persists the KIP-1331 epochs (stored, last failed) without
// changing anything else of the group metadata.
func (g *StreamsGroup) WriteTopologyDescriptionEpochs(st *State, stored, lastFailed int32) {
	v := g.metadataValue()
	v.StoredTopologyEpoch, v.LastFailedTopologyEpoch = stored, lastFailed
	g.writeMetadata(st, v)
}

func (g *StreamsGroup) writeMemberMeta(st *State, id string, m *streamsMemberMeta) {
	st.Write(Record{Key: groupKey(RecStreamsGroupMemberMetadata, g.id, id), Value: encodeStreamsMemberMeta(m)})
}

func (g *StreamsGroup) writeTarget(st *State, id string, a streamsTaskSet) {
	st.Write(Record{Key: groupKey(RecStreamsGroupTargetMember, g.id, id), Value: encodeStreamsTarget(a)})
}

func (g *StreamsGroup) writeTargetMetadata(st *State, epoch int32) {
	st.Write(Record{Key: groupKey(RecStreamsGroupTargetMetadata, g.id), Value: encodeStreamsTargetMetadata(epoch, st.Now.UnixMilli())})
}

func (g *StreamsGroup) writeCurrent(st *State, id string, c *streamsCurrent) {
	st.Write(Record{Key: groupKey(RecStreamsGroupCurrentMember, g.id, id), Value: encodeStreamsCurrent(c)})
}

func writeStreamsTopology(st *State, group string, t *StreamsTopology) {
	st.Write(Record{Key: groupKey(RecStreamsGroupTopology, group), Value: encodeStreamsTopology(t)})
}

// --- replay ---

func replayStreamsMetadata(g *StreamsGroup, _ []string, value []byte) error {
	if value == nil {
		g.hasMetadata = false
		g.groupEpoch, g.metadataHash, g.validatedTopologyEpoch = streamsInitialGroupEpoch, 0, -1
		g.lastAssignmentConfigs = nil
		g.storedTopologyEpoch, g.lastFailedTopologyEpoch = -1, -1
		return nil
	}
	v, err := decodeStreamsMetadata(value)
	if err != nil {
		return err
	}
	g.hasMetadata = true
	g.groupEpoch, g.metadataHash, g.validatedTopologyEpoch = v.Epoch, v.MetadataHash, v.ValidatedTopologyEpoch
	g.lastAssignmentConfigs = v.LastAssignmentConfigs
	g.storedTopologyEpoch, g.lastFailedTopologyEpoch = v.StoredTopologyEpoch, v.LastFailedTopologyEpoch
	return nil
}

func replayStreamsMember(g *StreamsGroup, k []string, value []byte) error {
	if value == nil {
		g.countTopologyEpoch(g.meta[k[0]], -1)
		delete(g.meta, k[0])
		delete(g.soft, k[0])
		return nil
	}
	m, err := decodeStreamsMemberMeta(value)
	if err != nil {
		return err
	}
	g.countTopologyEpoch(g.meta[k[0]], -1)
	g.meta[k[0]] = m
	g.countTopologyEpoch(m, +1)
	return nil
}

// countTopologyEpoch adds (delta 1) or removes (-1) a member from the count by topology epoch.
func (g *StreamsGroup) countTopologyEpoch(m *streamsMemberMeta, delta int) {
	if m == nil {
		return
	}
	if g.topoEpochs == nil {
		g.topoEpochs = map[int32]int{}
	}
	if n := g.topoEpochs[m.TopologyEpoch] + delta; n > 0 {
		g.topoEpochs[m.TopologyEpoch] = n
	} else {
		delete(g.topoEpochs, m.TopologyEpoch)
	}
}

// oldestMemberTopologyEpoch is the lowest topology epoch of a member (-1: no member).
func (g *StreamsGroup) oldestMemberTopologyEpoch() int32 {
	oldest := int32(-1)
	for e := range g.topoEpochs {
		if oldest < 0 || e < oldest {
			oldest = e
		}
	}
	return oldest
}

func replayStreamsTargetMetadata(g *StreamsGroup, _ []string, value []byte) error {
	if value == nil {
		g.hasTargetMetadata, g.targetEpoch, g.assignmentTimestamp = false, 0, 0
		return nil
	}
	d, err := streamsDec("StreamsGroupTargetAssignmentMetadata", value)
	if err != nil {
		return err
	}
	epoch, ts := d.Int32(), d.Int64()
	if err := d.Done(); err != nil {
		return err
	}
	g.hasTargetMetadata, g.targetEpoch, g.assignmentTimestamp = true, epoch, ts
	return nil
}

func replayStreamsTargetMember(g *StreamsGroup, k []string, value []byte) error {
	if value == nil {
		delete(g.targets, k[0])
		return nil
	}
	d, err := streamsDec("StreamsGroupTargetAssignmentMember", value)
	if err != nil {
		return err
	}
	a := decodeTaskSet(d, false)
	if err := d.Done(); err != nil {
		return err
	}
	g.targets[k[0]] = a
	return nil
}

func replayStreamsCurrentMember(g *StreamsGroup, k []string, value []byte) error {
	g.unindex(k[0])
	if value == nil {
		delete(g.current, k[0])
		return nil
	}
	c, err := decodeStreamsCurrent(value)
	if err != nil {
		return err
	}
	g.current[k[0]] = c
	g.index(k[0])
	return nil
}

func replayStreamsTopology(g *StreamsGroup, _ []string, value []byte) error {
	if value == nil {
		g.topology = nil
		g.configured = nil
		return nil
	}
	t, err := decodeStreamsTopology(value)
	if err != nil {
		return err
	}
	g.topology = t
	g.configured = nil
	return nil
}

// replayStreams wraps a streams record replay: it parses the key (group and extra strings),
// finds the streams group or creates it lazily from any value record (replacing a classic group
// of the same id, which an older record such as an offset commit may have created), ignores
// tombstones for unknown groups, and removes the group once none of its records remain. The
// result depends only on which keys hold which values, not on the order of keys.
// replayStreams replays one streams group record: the key holds the group id and extra more
// strings (a member id), fn applies the value to the group, created on its first record.
func replayStreams(st *State, key, value []byte, extra int, fn func(g *StreamsGroup, k []string, value []byte) error) error {
	group, rest, err := parseGroupKey(key, extra)
	if err != nil {
		return err
	}
	g, ok := st.Groups[group].(*StreamsGroup)
	if !ok {
		if value == nil {
			return nil
		}
		if other, exists := st.Groups[group]; exists && other.Type() != TypeClassic {
			return fmt.Errorf("%w: streams record for %s group %q", ErrCorruptRecord, other.Type(), group)
		}
		g = newStreamsGroup(group)
		st.Groups[group] = g
	}
	if err := fn(g, rest, value); err != nil {
		return err
	}
	if value == nil && g.noRecords() {
		st.removeGroup(group)
	}
	return nil
}

func (g *StreamsGroup) noRecords() bool {
	return !g.hasMetadata && !g.hasTargetMetadata && g.topology == nil && len(g.meta) == 0 && len(g.targets) == 0 && len(g.current) == 0
}

const (
	holdActive  uint8 = 1
	holdStandby uint8 = 2
	holdWarmup  uint8 = 4
)

func (g *StreamsGroup) index(id string) {
	c := g.current[id]
	if c == nil {
		return
	}
	add := func(t streamsTasks, bit uint8) {
		for k := range t {
			m := g.holders[k]
			if m == nil {
				m = map[string]uint8{}
				g.holders[k] = m
			}
			m[id] |= bit
		}
	}
	add(c.Assigned.Active, holdActive)
	add(c.PendingRevocation.Active, holdActive)
	add(c.Assigned.Standby, holdStandby)
	add(c.PendingRevocation.Standby, holdStandby)
	add(c.Assigned.Warmup, holdWarmup)
	add(c.PendingRevocation.Warmup, holdWarmup)
}

func (g *StreamsGroup) unindex(id string) {
	c := g.current[id]
	if c == nil {
		return
	}
	for _, t := range []streamsTasks{c.Assigned.Active, c.PendingRevocation.Active, c.Assigned.Standby,
		c.PendingRevocation.Standby, c.Assigned.Warmup, c.PendingRevocation.Warmup} {
		for k := range t {
			if m := g.holders[k]; m != nil {
				delete(m, id)
				if len(m) == 0 {
					delete(g.holders, k)
				}
			}
		}
	}
}
