package coordinator

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// KafkaRecord converts one coordinator record to Kafka's own __consumer_offsets record format,
// what a consumer of the internal topic reads (Kafka's CoordinatorRecordSerde): the key is
// unchanged (muster's keys are Kafka's keys: the record type as the int16 key version, then the
// key fields in the classic encoding), a tombstone stays a tombstone, OffsetCommit and
// GroupMetadata values are unchanged (muster writes them with kmsg, in Kafka's layout), and the
// KIP-848 and KIP-1071 values, which muster stores in its own layout (docs/records.md), are
// written again in the layouts of Kafka 4.3's group-coordinator schemas
// (ConsumerGroup*Value.json, StreamsGroup*Value.json: value version 0, flexible encoding, tagged
// fields written only when they differ from their defaults, as Kafka's generated writers do).
// The KIP-1331 topology description epochs of the streams group metadata are Kafka trunk's tags
// 2 and 3. A record that does not decode is an error (ErrCorruptRecord). Records private to
// muster are ErrNotKafkaRecord, left out: share-partition state (Kafka keeps it in
// __share_group_state) and pending transactional offsets (RecPendingTxnOffset; Kafka keeps them
// as transactional OffsetCommit records before a marker).
func KafkaRecord(key, value []byte) (kkey, kvalue []byte, err error) {
	typ, err := RecordType(key)
	if err != nil {
		return nil, nil, err
	}
	if typ == RecRebalanceHistory || typ == RecPendingTxnOffset || typ == RecSharePartitionState {
		return nil, nil, ErrNotKafkaRecord
	}
	if value == nil {
		return key, nil, nil
	}
	conv, ok := kafkaValues[typ]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown record type %d", ErrCorruptRecord, typ)
	}
	if conv == nil {
		return key, value, nil
	}
	v, err := conv(value)
	if err != nil {
		return nil, nil, err
	}
	return key, v, nil
}

// KafkaVerbatim reports whether KafkaRecord leaves a record with this key unchanged (key and
// value): OffsetCommit (key versions 0 and 1) and GroupMetadata records.
func KafkaVerbatim(key []byte) bool {
	if len(key) < 2 || key[0] != 0 {
		return false
	}
	typ := int16(key[1])
	return typ == 0 || typ == RecOffsetCommit || typ == RecGroupMetadata
}

// kafkaValues converts a stored value to Kafka's layout per record type (nil: unchanged).
var kafkaValues = map[int16]func([]byte) ([]byte, error){
	0:                              nil,
	RecOffsetCommit:                nil,
	RecGroupMetadata:               nil,
	RecConsumerGroupMetadata:       kafkaCGMetadata,
	RecConsumerGroupMemberMetadata: kafkaCGMember,
	RecConsumerGroupTargetMetadata: kafkaCGTargetMetadata,
	RecConsumerGroupTargetMember:   kafkaCGTargetMember,
	RecConsumerGroupCurrentMember:  kafkaCGCurrent,
	RecConsumerGroupRegex:          kafkaCGRegex,
	RecStreamsGroupMetadata:        kafkaStreamsMetadata,
	RecStreamsGroupMemberMetadata:  kafkaStreamsMember,
	RecStreamsGroupTargetMetadata:  kafkaStreamsTargetMetadata,
	RecStreamsGroupTargetMember:    kafkaStreamsTarget,
	RecStreamsGroupCurrentMember:   kafkaStreamsCurrent,
	RecStreamsGroupTopology:        kafkaStreamsTopology,
	RecShareGroupMetadata:          kafkaShareMetadata,
	RecShareGroupMemberMetadata:    kafkaShareMember,
	RecShareGroupTargetMetadata:    kafkaShareTargetMetadata,
	RecShareGroupTargetMember:      kafkaShareTargetMember,
	RecShareGroupCurrentMember:     kafkaShareCurrent,
}

// flexEnc appends Kafka's flexible (KIP-482) encoding: compact strings, arrays and bytes
// (unsigned varint length + 1, 0 = null) and tagged-field sections.
type flexEnc struct{ B []byte }

func newFlexValue() *flexEnc {
	e := &flexEnc{B: make([]byte, 0, 64)}
	e.Int16(0) // value version 0
	return e
}

func (e *flexEnc) Int8(v int8)     { e.B = append(e.B, byte(v)) }
func (e *flexEnc) Int16(v int16)   { e.B = binary.BigEndian.AppendUint16(e.B, uint16(v)) }
func (e *flexEnc) Uint16(v uint16) { e.B = binary.BigEndian.AppendUint16(e.B, v) }
func (e *flexEnc) Int32(v int32)   { e.B = binary.BigEndian.AppendUint32(e.B, uint32(v)) }
func (e *flexEnc) Int64(v int64)   { e.B = binary.BigEndian.AppendUint64(e.B, uint64(v)) }
func (e *flexEnc) UUID(u [16]byte) { e.B = append(e.B, u[:]...) }
func (e *flexEnc) Len(n int)       { e.B = binary.AppendUvarint(e.B, uint64(n)+1) }
func (e *flexEnc) Null()           { e.B = append(e.B, 0) }
func (e *flexEnc) NoTags()         { e.B = append(e.B, 0) }
func (e *flexEnc) String(s string) { e.Len(len(s)); e.B = append(e.B, s...) }
func (e *flexEnc) CompactBytes(b []byte) {
	e.Len(len(b))
	e.B = append(e.B, b...)
}

func (e *flexEnc) NullableString(s *string) {
	if s == nil {
		e.Null()
		return
	}
	e.String(*s)
}

// OptString writes "" as null (muster stores "none" as "", Kafka as null).
func (e *flexEnc) OptString(s string) {
	if s == "" {
		e.Null()
		return
	}
	e.String(s)
}

func (e *flexEnc) Strings(ss []string) {
	e.Len(len(ss))
	for _, s := range ss {
		e.String(s)
	}
}

func (e *flexEnc) Int32s(xs []int32) {
	e.Len(len(xs))
	for _, x := range xs {
		e.Int32(x)
	}
}

func (e *flexEnc) Int16s(xs []int16) {
	e.Len(len(xs))
	for _, x := range xs {
		e.Int16(x)
	}
}

// KeyValues writes a compact array of {Key string, Value string, no tags} structs.
func (e *flexEnc) KeyValues(kvs [][2]string) {
	e.Len(len(kvs))
	for _, kv := range kvs {
		e.String(kv[0])
		e.String(kv[1])
		e.NoTags()
	}
}

// tag is one tagged field: its number and its encoded bytes.
type tag struct {
	n    int
	data []byte
}

// Tags writes a tagged-field section (tags in ascending order).
func (e *flexEnc) Tags(tags ...tag) {
	e.B = binary.AppendUvarint(e.B, uint64(len(tags)))
	for _, t := range tags {
		e.B = binary.AppendUvarint(e.B, uint64(t.n))
		e.B = binary.AppendUvarint(e.B, uint64(len(t.data)))
		e.B = append(e.B, t.data...)
	}
}

func int32Tag(n int, v int32) tag { return tag{n, binary.BigEndian.AppendUint32(nil, uint32(v))} }
func int64Tag(n int, v int64) tag { return tag{n, binary.BigEndian.AppendUint64(nil, uint64(v))} }

func sortedKV(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, [2]string{k, m[k]})
	}
	return out
}

// --- consumer groups (KIP-848) ---

// kafkaCGMetadata: ConsumerGroupMetadataValue {Epoch int32, MetadataHash int64 tag 0 (KIP-1101)}.
func kafkaCGMetadata(value []byte) ([]byte, error) {
	var epoch int32
	var hash int64
	if err := decodeValue(value, cgMetadataVersion, "ConsumerGroupMetadata", func(d *Dec, v int16) {
		epoch = d.Int32()
		if v >= 1 {
			hash = d.Int64()
		}
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(epoch)
	if hash != 0 {
		e.Tags(int64Tag(0, hash))
	} else {
		e.NoTags()
	}
	return e.B, nil
}

// kafkaCGMember: ConsumerGroupMemberMetadataValue {InstanceId, RackId, ClientId, ClientHost,
// SubscribedTopicNames, SubscribedTopicRegex, RebalanceTimeoutMs, ServerAssignor,
// ClassicMemberMetadata tag 0 {SessionTimeoutMs, SupportedProtocols [{Name, Metadata}]}}.
func kafkaCGMember(value []byte) ([]byte, error) {
	m := &consumerMember{}
	if err := decodeValue(value, 1, "ConsumerGroupMemberMetadata", func(d *Dec, ver int16) {
		d.StringBytes() // member id: Kafka has it in the key only
		m.instanceID, m.rackID = d.NullableString(), d.NullableString()
		m.clientID, m.clientHost = d.String(), d.String()
		m.subscribedNames = d.Strings()
		m.subscribedRegex, m.serverAssignor = d.String(), d.String()
		m.rebalanceTimeout = d.Int32()
		if ver >= 1 {
			cm := &cgClassicMeta{sessionTimeout: d.Int32()}
			n := d.ArrayLen(8)
			for i := 0; i < n && d.Err() == nil; i++ {
				cm.protocols = append(cm.protocols, classicProtocol{Name: d.String(), Metadata: d.Bytes()})
			}
			m.classic = cm
		}
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.NullableString(m.instanceID)
	e.NullableString(m.rackID)
	e.String(m.clientID)
	e.String(m.clientHost)
	e.Strings(m.subscribedNames)
	e.OptString(m.subscribedRegex)
	e.Int32(m.rebalanceTimeout)
	e.OptString(m.serverAssignor)
	if m.classic == nil {
		e.NoTags()
		return e.B, nil
	}
	c := &flexEnc{}
	c.Int32(m.classic.sessionTimeout)
	c.Len(len(m.classic.protocols))
	for _, p := range m.classic.protocols {
		c.String(p.Name)
		c.CompactBytes(p.Metadata)
		c.NoTags()
	}
	c.NoTags()
	e.Tags(tag{0, c.B})
	return e.B, nil
}

// kafkaCGTargetMetadata: ConsumerGroupTargetAssignmentMetadataValue {AssignmentEpoch}.
func kafkaCGTargetMetadata(value []byte) ([]byte, error) {
	e := newFlexValue()
	if err := decodeValue(value, 0, "ConsumerGroupTargetAssignmentMetadata", func(d *Dec, _ int16) {
		e.Int32(d.Int32())
	}); err != nil {
		return nil, err
	}
	e.NoTags()
	return e.B, nil
}

// kafkaTopicPartitions writes a compact array of {TopicId, Partitions, AssignmentEpochs tag 0}
// sorted by topic id; epochs (KIP-1251) are written for a topic whose every partition has one.
func kafkaTopicPartitions(e *flexEnc, a topicPartitions, epochs *assignmentEpochs) {
	ids := sortedTopicIDs(a)
	e.Len(len(ids))
	for _, t := range ids {
		ps := a[t]
		e.UUID(t)
		e.Int32s(ps)
		var eps []int32
		if epochs != nil {
			for _, p := range ps {
				ep, ok := epochs.get(t, p)
				if !ok {
					eps = nil
					break
				}
				eps = append(eps, ep)
			}
		}
		if eps != nil {
			te := &flexEnc{}
			te.Int32s(eps)
			e.Tags(tag{0, te.B})
		} else {
			e.NoTags()
		}
	}
}

// kafkaCGTargetMember: ConsumerGroupTargetAssignmentMemberValue {TopicPartitions [{TopicId,
// Partitions}]}.
func kafkaCGTargetMember(value []byte) ([]byte, error) {
	var a topicPartitions
	if err := decodeValue(value, 0, "ConsumerGroupTargetAssignmentMember", func(d *Dec, _ int16) {
		a = decTP(d)
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	kafkaTopicPartitions(e, a, nil)
	e.NoTags()
	return e.B, nil
}

// kafkaCGCurrent: ConsumerGroupCurrentMemberAssignmentValue {MemberEpoch, PreviousMemberEpoch,
// State, AssignedPartitions, PartitionsPendingRevocation}.
func kafkaCGCurrent(value []byte) ([]byte, error) {
	c := &consumerCurrent{}
	if err := decodeValue(value, 1, "ConsumerGroupCurrentMemberAssignment", func(d *Dec, version int16) {
		c.epoch, c.prevEpoch, c.state = d.Int32(), d.Int32(), ConsumerMemberState(d.Int8())
		c.assigned, c.pending = decTP(d), decTP(d)
		if version >= 1 {
			c.epochs = decAssignmentEpochs(d)
		}
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(c.epoch)
	e.Int32(c.prevEpoch)
	e.Int8(int8(c.state))
	var epochs *assignmentEpochs
	if c.epochs.len() > 0 {
		epochs = &c.epochs
	}
	kafkaTopicPartitions(e, c.assigned, epochs)
	kafkaTopicPartitions(e, c.pending, epochs)
	e.NoTags()
	return e.B, nil
}

// kafkaCGRegex: ConsumerGroupRegularExpressionValue {Topics, Version, Timestamp}.
func kafkaCGRegex(value []byte) ([]byte, error) {
	e := newFlexValue()
	if err := decodeValue(value, 0, "ConsumerGroupRegularExpression", func(d *Dec, _ int16) {
		e.Strings(d.Strings())
		e.Int64(d.Int64())
		e.Int64(d.Int64())
	}); err != nil {
		return nil, err
	}
	e.NoTags()
	return e.B, nil
}

// --- streams groups (KIP-1071) ---

// kafkaStreamsMetadata: StreamsGroupMetadataValue {Epoch, MetadataHash, ValidatedTopologyEpoch
// tag 0 (default -1), LastAssignmentConfigs tag 1 (default null), KIP-1331
// StoredDescriptionTopologyEpoch tag 2 and FailedDescriptionTopologyEpoch tag 3 (default -1)}.
func kafkaStreamsMetadata(value []byte) ([]byte, error) {
	v, err := decodeStreamsMetadata(value)
	if err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(v.Epoch)
	e.Int64(v.MetadataHash)
	var tags []tag
	if v.ValidatedTopologyEpoch != -1 {
		tags = append(tags, int32Tag(0, v.ValidatedTopologyEpoch))
	}
	if v.LastAssignmentConfigs != nil {
		c := &flexEnc{}
		c.KeyValues(sortedKV(v.LastAssignmentConfigs))
		tags = append(tags, tag{1, c.B})
	}
	if v.StoredTopologyEpoch != -1 {
		tags = append(tags, int32Tag(2, v.StoredTopologyEpoch))
	}
	if v.LastFailedTopologyEpoch != -1 {
		tags = append(tags, int32Tag(3, v.LastFailedTopologyEpoch))
	}
	e.Tags(tags...)
	return e.B, nil
}

// kafkaStreamsMember: StreamsGroupMemberMetadataValue {InstanceId, RackId, ClientId, ClientHost,
// RebalanceTimeoutMs, TopologyEpoch, ProcessId, UserEndpoint (nullable {Host, Port uint16}),
// ClientTags [{Key, Value}]}.
func kafkaStreamsMember(value []byte) ([]byte, error) {
	m, err := decodeStreamsMemberMeta(value)
	if err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.NullableString(m.InstanceID)
	e.NullableString(m.RackID)
	e.String(m.ClientID)
	e.String(m.ClientHost)
	e.Int32(m.RebalanceTimeout)
	e.Int32(m.TopologyEpoch)
	e.String(m.ProcessID)
	if m.UserEndpoint == nil {
		e.Int8(-1)
	} else {
		e.Int8(1)
		e.String(m.UserEndpoint.Host)
		e.Uint16(m.UserEndpoint.Port)
		e.NoTags()
	}
	e.KeyValues(sortedKV(m.ClientTags))
	e.NoTags()
	return e.B, nil
}

// kafkaStreamsTargetMetadata: StreamsGroupTargetAssignmentMetadataValue {AssignmentEpoch,
// AssignmentTimestamp tag 0 (KIP-1263, default 0)}.
func kafkaStreamsTargetMetadata(value []byte) ([]byte, error) {
	d, err := streamsDec("StreamsGroupTargetAssignmentMetadata", value)
	if err != nil {
		return nil, err
	}
	epoch, ts := d.Int32(), d.Int64()
	if err := d.Done(); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(epoch)
	if ts != 0 {
		e.Tags(int64Tag(0, ts))
	} else {
		e.NoTags()
	}
	return e.B, nil
}

// kafkaTaskIDs writes a compact array of TaskIds {SubtopologyId, Partitions, AssignmentEpochs
// tag 0 when withEpochs (KIP-1251)} sorted by subtopology and partition.
func kafkaTaskIDs(e *flexEnc, t streamsTasks, withEpochs bool) {
	sorted := t.sorted()
	var subs []int // start index of each subtopology in sorted
	for i, k := range sorted {
		if i == 0 || sorted[i-1].Sub != k.Sub {
			subs = append(subs, i)
		}
	}
	e.Len(len(subs))
	for si, start := range subs {
		end := len(sorted)
		if si+1 < len(subs) {
			end = subs[si+1]
		}
		e.String(sorted[start].Sub)
		parts := make([]int32, 0, end-start)
		epochs := make([]int32, 0, end-start)
		for _, k := range sorted[start:end] {
			parts = append(parts, k.Part)
			epochs = append(epochs, t[k])
		}
		e.Int32s(parts)
		if withEpochs {
			te := &flexEnc{}
			te.Int32s(epochs)
			e.Tags(tag{0, te.B})
		} else {
			e.NoTags()
		}
	}
}

// kafkaStreamsTarget: StreamsGroupTargetAssignmentMemberValue {ActiveTasks, StandbyTasks,
// WarmupTasks}.
func kafkaStreamsTarget(value []byte) ([]byte, error) {
	d, err := streamsDec("StreamsGroupTargetAssignmentMember", value)
	if err != nil {
		return nil, err
	}
	a := decodeTaskSet(d, false)
	if err := d.Done(); err != nil {
		return nil, err
	}
	e := newFlexValue()
	kafkaTaskIDs(e, a.Active, false)
	kafkaTaskIDs(e, a.Standby, false)
	kafkaTaskIDs(e, a.Warmup, false)
	e.NoTags()
	return e.B, nil
}

// kafkaStreamsCurrent: StreamsGroupCurrentMemberAssignmentValue {MemberEpoch,
// PreviousMemberEpoch, State, ActiveTasks (with assignment epochs), StandbyTasks, WarmupTasks,
// and the three lists pending revocation}.
func kafkaStreamsCurrent(value []byte) ([]byte, error) {
	c, err := decodeStreamsCurrent(value)
	if err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(c.MemberEpoch)
	e.Int32(c.PreviousMemberEpoch)
	e.Int8(c.State)
	kafkaTaskIDs(e, c.Assigned.Active, true)
	kafkaTaskIDs(e, c.Assigned.Standby, false)
	kafkaTaskIDs(e, c.Assigned.Warmup, false)
	kafkaTaskIDs(e, c.PendingRevocation.Active, false)
	kafkaTaskIDs(e, c.PendingRevocation.Standby, false)
	kafkaTaskIDs(e, c.PendingRevocation.Warmup, false)
	e.NoTags()
	return e.B, nil
}

// kafkaStreamsTopology: StreamsGroupTopologyValue {Epoch, Subtopologies [{SubtopologyId,
// SourceTopics, SourceTopicRegex, StateChangelogTopics, RepartitionSinkTopics,
// RepartitionSourceTopics, CopartitionGroups [{SourceTopics, SourceTopicRegex,
// RepartitionSourceTopics}]}]}; a TopicInfo is {Name, Partitions, ReplicationFactor,
// TopicConfigs [{key, value}]}.
func kafkaStreamsTopology(value []byte) ([]byte, error) {
	t, err := decodeStreamsTopology(value)
	if err != nil {
		return nil, err
	}
	infos := func(e *flexEnc, ts []StreamsTopicInfo) {
		e.Len(len(ts))
		for _, ti := range ts {
			e.String(ti.Name)
			e.Int32(ti.Partitions)
			e.Int16(ti.ReplicationFactor)
			e.KeyValues(ti.Configs)
			e.NoTags()
		}
	}
	e := newFlexValue()
	e.Int32(t.Epoch)
	subs := append([]StreamsSubtopology(nil), t.Subtopologies...)
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].ID < subs[j].ID })
	e.Len(len(subs))
	for _, s := range subs {
		e.String(s.ID)
		e.Strings(s.SourceTopics)
		e.Strings(nil) // SourceTopicRegex: muster's topologies name their source topics
		infos(e, s.StateChangelogTopics)
		e.Strings(s.RepartitionSinkTopics)
		infos(e, s.RepartitionSourceTopics)
		e.Len(len(s.CopartitionGroups))
		for _, cg := range s.CopartitionGroups {
			e.Int16s(cg.SourceTopics)
			e.Int16s(nil)
			e.Int16s(cg.RepartitionSourceTopics)
			e.NoTags()
		}
		e.NoTags()
	}
	e.NoTags()
	return e.B, nil
}
