package coordinator

import (
	"encoding/binary"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetValue is one committed offset (Kafka's OffsetAndMetadata; record OffsetCommitValue).
// The shard keeps it as an offsetEntry of 40 bytes and the rare expire timestamp aside.
type OffsetValue struct {
	Offset   int64
	CommitMs int64 // commit timestamp
	// ExpireMs is the expire timestamp OffsetCommit v2–v4 set with an explicit retention time;
	// 0 when none (the record then carries -1).
	ExpireMs    int64
	Metadata    string
	LeaderEpoch int32 // -1 when unknown
	// Partition is the value's own partition (set by the shard).
	Partition int32
}

// CommitTime is the commit timestamp.
func (v *OffsetValue) CommitTime() time.Time { return time.UnixMilli(v.CommitMs) }

// ExpireTime is the expire timestamp; the zero time when there is none.
func (v *OffsetValue) ExpireTime() time.Time {
	if v.ExpireMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.ExpireMs)
}

// offsetEntry is a committed offset as the shard's trees keep it: 40 bytes, times in
// milliseconds, no pointer but the metadata's (an OffsetValue without its expire timestamp).
type offsetEntry struct {
	Offset      int64
	CommitMs    int64
	Metadata    string
	LeaderEpoch int32
	Partition   int32
}

func (e offsetEntry) key() int32 { return e.Partition }

func (e *offsetEntry) value(expireMs int64) OffsetValue {
	return OffsetValue{Offset: e.Offset, CommitMs: e.CommitMs, ExpireMs: expireMs, Metadata: e.Metadata,
		LeaderEpoch: e.LeaderEpoch, Partition: e.Partition}
}

// expireKey names an offset with an expire timestamp (Offsets.expire).
type expireKey struct {
	group, topic string
	partition    int32
}

// Offsets holds every committed offset of a shard, by group, topic and partition, in persistent
// sorted trees (ptree): Freeze hands out the current version, which never changes afterwards,
// at the cost of a copy of the nodes the next changes touch. The engine publishes a version
// after each durable batch (OffsetsView), so offset reads are served without the shard loop.
type Offsets struct {
	groups ptree[string, groupEntry]
	count  int
	edit   uint64 // the edit token of the current version (ptree)
	// changed: something changed since the last Freeze.
	changed bool
	// topics interns topic names: one string per distinct topic of the shard, shared by every
	// group's topic tree, with the number of groups holding offsets for it (dropped at zero).
	topics map[string]internedTopic
	// The group and topic of the last change, mutable under edit (loads and commits write runs
	// of one group's partitions).
	lastGroup *groupOffsets
	lastTopic *topicOffsets
	// expire holds the expire timestamps (OffsetCommit v2–v4 with a retention time): rare, so
	// kept aside rather than in every entry. Live state only: no reader of a frozen version
	// needs them.
	expire map[expireKey]int64
}

// groupOffsets is one group's offsets: its topics in name order.
type groupOffsets struct {
	id     string
	edit   uint64
	topics ptree[string, topicEntry]
	n      int // offsets of the group
}

// topicOffsets is one topic's committed partitions in a group, in partition order.
type topicOffsets struct {
	name  string
	edit  uint64
	parts ptree[int32, offsetEntry]
}

type groupEntry struct {
	id string
	g  *groupOffsets
}

func (e groupEntry) key() string { return e.id }

type topicEntry struct {
	name string
	t    *topicOffsets
}

func (e topicEntry) key() string { return e.name }

// internedTopic is the canonical string of a topic name and how many groups use it.
type internedTopic struct {
	name   string
	groups int
}

func newOffsets() *Offsets {
	return &Offsets{edit: 1, topics: map[string]internedTopic{}}
}

// internTopic returns the shard's canonical string for topic and counts one more group using it.
func (o *Offsets) internTopic(topic string) string {
	it, ok := o.topics[topic]
	if !ok {
		it.name = topic
	}
	it.groups++
	o.topics[it.name] = it
	return it.name
}

// topicName is the string of a topic name read from a record: the last topic's or the
// interned one when the shard has it (no allocation), else a new string.
func (o *Offsets) topicName(topic []byte) string {
	if t := o.lastTopic; t != nil && t.name == string(topic) {
		return t.name
	}
	if it, ok := o.topics[string(topic)]; ok {
		return it.name
	}
	return string(topic)
}

// releaseTopic counts one group less using topic, dropping the name at zero.
func (o *Offsets) releaseTopic(topic string) {
	it, ok := o.topics[topic]
	if !ok {
		return
	}
	if it.groups--; it.groups <= 0 {
		delete(o.topics, topic)
		return
	}
	o.topics[topic] = it
}

// Freeze returns the current version of the offsets, which no later change alters.
func (o *Offsets) Freeze() OffsetsView {
	v := OffsetsView{groups: o.groups, count: o.count}
	if o.changed {
		o.edit++
		o.changed = false
		o.lastGroup, o.lastTopic = nil, nil
	}
	return v
}

// Count is the number of committed offsets in the shard (gauge offset-count).
func (o *Offsets) Count() int { return o.count }

// Get returns one committed offset.
func (o *Offsets) Get(group, topic string, partition int32) (OffsetValue, bool) {
	v, ok := o.view().Get(group, topic, partition)
	if ok && len(o.expire) > 0 {
		v.ExpireMs = o.expire[expireKey{group, topic, partition}]
	}
	return v, ok
}

// view is the current version for reading on the shard (not to be kept: it changes in place).
func (o *Offsets) view() OffsetsView { return OffsetsView{groups: o.groups, count: o.count} }

// GroupIDs lists the groups with committed offsets, sorted.
func (o *Offsets) GroupIDs() []string {
	out := make([]string, 0, o.groups.Len())
	o.groups.Ascend(func(e *groupEntry) bool {
		out = append(out, e.id)
		return true
	})
	return out
}

// HasOffsets reports whether group has any committed offset.
func (o *Offsets) HasOffsets(group string) bool {
	_, ok := o.groups.Get(group)
	return ok
}

// Topics lists the topics a group has offsets for, sorted.
func (o *Offsets) Topics(group string) []string {
	e, ok := o.groups.Get(group)
	if !ok {
		return nil
	}
	out := make([]string, 0, e.g.topics.Len())
	e.g.topics.Ascend(func(te *topicEntry) bool {
		out = append(out, te.name)
		return true
	})
	return out
}

// Partitions lists a topic's committed partitions for a group, sorted.
func (o *Offsets) Partitions(group, topic string) []int32 {
	t := o.view().topic(group, topic)
	if t == nil {
		return nil
	}
	out := make([]int32, 0, t.parts.Len())
	t.parts.Ascend(func(e *offsetEntry) bool {
		out = append(out, e.Partition)
		return true
	})
	return out
}

// Each calls fn for every committed offset of group, by topic and partition in order, until fn
// returns false; fn must not change the offsets.
func (o *Offsets) Each(group string, fn func(topic string, v *OffsetValue) bool) {
	e, ok := o.groups.Get(group)
	if !ok {
		return
	}
	e.g.topics.Ascend(func(te *topicEntry) bool {
		cont := true
		te.t.parts.Ascend(func(pe *offsetEntry) bool {
			var exp int64
			if len(o.expire) > 0 {
				exp = o.expire[expireKey{group, te.name, pe.Partition}]
			}
			v := pe.value(exp)
			cont = fn(te.name, &v)
			return cont
		})
		return cont
	})
}

// mutableGroup returns group's offsets ready to change under the current edit token (a copy of
// a frozen one, put in its place), created when create is set; nil when absent and not created.
func (o *Offsets) mutableGroup(group string, create bool) *groupOffsets {
	if g := o.lastGroup; g != nil && g.id == group {
		return g
	}
	e, ok := o.groups.Get(group)
	switch {
	case !ok && !create:
		return nil
	case !ok:
		e = groupEntry{id: group, g: &groupOffsets{id: group, edit: o.edit}}
		o.groups.Set(o.edit, e)
	case e.g.edit != o.edit:
		c := *e.g
		c.edit = o.edit
		e.g = &c
		o.groups.Set(o.edit, e)
	}
	o.lastGroup, o.lastTopic = e.g, nil
	return e.g
}

// mutableTopic is mutableGroup for one topic of g (mutable); topic is interned when created.
func (o *Offsets) mutableTopic(g *groupOffsets, topic string, create bool) *topicOffsets {
	if t := o.lastTopic; t != nil && t.name == topic {
		return t
	}
	e, ok := g.topics.Get(topic)
	switch {
	case !ok && !create:
		return nil
	case !ok:
		name := o.internTopic(topic)
		e = topicEntry{name: name, t: &topicOffsets{name: name, edit: o.edit}}
		g.topics.Set(o.edit, e)
	case e.t.edit != o.edit:
		c := *e.t
		c.edit = o.edit
		e.t = &c
		g.topics.Set(o.edit, e)
	}
	o.lastTopic = e.t
	return e.t
}

// put stores v for group/topic/partition. group should be the group's own id string (shared
// with st.Groups); topic is interned (a name new to the shard is kept as given).
func (o *Offsets) put(group, topic string, partition int32, v OffsetValue) {
	o.changed = true
	g := o.mutableGroup(group, true)
	t := o.mutableTopic(g, topic, true)
	n := t.parts.Len()
	t.parts.Set(o.edit, offsetEntry{Offset: v.Offset, CommitMs: v.CommitMs, Metadata: v.Metadata,
		LeaderEpoch: v.LeaderEpoch, Partition: partition})
	switch {
	case v.ExpireMs != 0:
		if o.expire == nil {
			o.expire = map[expireKey]int64{}
		}
		o.expire[expireKey{g.id, t.name, partition}] = v.ExpireMs
	case len(o.expire) > 0:
		delete(o.expire, expireKey{g.id, t.name, partition})
	}
	if t.parts.Len() > n {
		g.n++
		o.count++
	}
}

func (o *Offsets) remove(group, topic []byte, partition int32) bool {
	t := o.view().topic(string(group), string(topic))
	if t == nil {
		return false
	}
	if _, ok := t.parts.Get(partition); !ok {
		return false
	}
	o.changed = true
	g := o.mutableGroup(string(group), false)
	t = o.mutableTopic(g, t.name, false)
	t.parts.Delete(o.edit, partition)
	if len(o.expire) > 0 {
		delete(o.expire, expireKey{g.id, t.name, partition})
	}
	g.n--
	o.count--
	if t.parts.Len() == 0 {
		g.topics.Delete(o.edit, t.name)
		o.releaseTopic(t.name)
		o.lastTopic = nil
		if g.topics.Len() == 0 {
			o.groups.Delete(o.edit, g.id)
			o.lastGroup = nil
		}
	}
	return true
}

// OffsetsView is one version of a shard's committed offsets (Offsets.Freeze): immutable, safe
// to read from any goroutine.
type OffsetsView struct {
	groups ptree[string, groupEntry]
	count  int
}

// Count is the number of committed offsets.
func (v OffsetsView) Count() int { return v.count }

func (v OffsetsView) group(group string) *groupOffsets {
	e, ok := v.groups.Get(group)
	if !ok {
		return nil
	}
	return e.g
}

func (v OffsetsView) topic(group, topic string) *topicOffsets {
	g := v.group(group)
	if g == nil {
		return nil
	}
	e, ok := g.topics.Get(topic)
	if !ok {
		return nil
	}
	return e.t
}

// AscendGroup calls fn with each committed offset of group, in topic and partition order,
// until fn returns false; it allocates nothing (a reader of every group's offsets, such as the
// lag monitor, holds one group at a time rather than a copy of the version).
func (v OffsetsView) AscendGroup(group string, fn func(topic string, partition int32, offset int64) bool) {
	g := v.group(group)
	if g == nil {
		return
	}
	g.topics.Ascend(func(te *topicEntry) bool {
		more := true
		te.t.parts.Ascend(func(ov *offsetEntry) bool {
			more = fn(te.name, ov.Partition, ov.Offset)
			return more
		})
		return more
	})
}

// Get returns one committed offset (without its expire timestamp, which only the live state
// keeps).
func (v OffsetsView) Get(group, topic string, partition int32) (OffsetValue, bool) {
	t := v.topic(group, topic)
	if t == nil {
		return OffsetValue{}, false
	}
	e, ok := t.parts.Get(partition)
	return e.value(0), ok
}

// offsetKey encodes OffsetCommitKey (record type 1): int16 version, int16-length group and
// topic, int32 partition.
func offsetKey(group, topic string, partition int32) []byte {
	return appendOffsetKey(make([]byte, 0, offsetKeyLen(group, topic)), group, topic, partition)
}

func offsetKeyLen(group, topic string) int { return 2 + 2 + len(group) + 2 + len(topic) + 4 }

func appendOffsetKey(b []byte, group, topic string, partition int32) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(RecOffsetCommit))
	b = binary.BigEndian.AppendUint16(b, uint16(len(group)))
	b = append(b, group...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(topic)))
	b = append(b, topic...)
	return binary.BigEndian.AppendUint32(b, uint32(partition))
}

// offsetValue encodes OffsetCommitValue: v1 when an expire timestamp is set (the only version
// carrying it), else v3 (with leader epoch), as Kafka does.
func offsetValue(v *OffsetValue) []byte {
	return appendOffsetValue(make([]byte, 0, offsetValueLen(v)), v)
}

func offsetValueLen(v *OffsetValue) int {
	if v.ExpireMs != 0 {
		return 2 + 8 + 2 + len(v.Metadata) + 8 + 8
	}
	return 2 + 8 + 4 + 2 + len(v.Metadata) + 8
}

// appendOffsetValue: v3 is version, offset, leader epoch, metadata, commit timestamp; v1 is
// version, offset, metadata, commit timestamp, expire timestamp.
func appendOffsetValue(b []byte, v *OffsetValue) []byte {
	if v.ExpireMs != 0 {
		b = binary.BigEndian.AppendUint16(b, 1)
		b = binary.BigEndian.AppendUint64(b, uint64(v.Offset))
	} else {
		b = binary.BigEndian.AppendUint16(b, 3)
		b = binary.BigEndian.AppendUint64(b, uint64(v.Offset))
		b = binary.BigEndian.AppendUint32(b, uint32(v.LeaderEpoch))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(v.Metadata)))
	b = append(b, v.Metadata...)
	b = binary.BigEndian.AppendUint64(b, uint64(v.CommitMs))
	if v.ExpireMs != 0 {
		b = binary.BigEndian.AppendUint64(b, uint64(v.ExpireMs))
	}
	return b
}

// WriteOffset writes a committed offset record: key and value in one allocation, applied as
// its replay would apply it (applyOffset) without decoding it again.
func (st *State) WriteOffset(group, topic string, partition int32, v *OffsetValue) {
	st.writeOffsetIn(nil, group, topic, partition, v)
}

// offsetRecordMax is the most an offset record of a group, topic and metadata takes.
func offsetRecordMax(group, topic, metadata string) int {
	return offsetKeyLen(group, topic) + 2 + 8 + 2 + len(metadata) + 8 + 8
}

// writeOffsetIn is WriteOffset with the record's bytes taken from *arena when it has room
// (OffsetCommit makes one allocation for all of its records).
func (st *State) writeOffsetIn(arena *[]byte, group, topic string, partition int32, v *OffsetValue) {
	ov := *v
	if ov.ExpireMs < 0 {
		ov.ExpireMs = 0 // no expire timestamp, as a replay reads it
	}
	kl, vl := offsetKeyLen(group, topic), offsetValueLen(&ov)
	var buf []byte
	if arena != nil && cap(*arena)-len(*arena) >= kl+vl {
		a := *arena
		buf = a[len(a) : len(a) : len(a)+kl+vl]
		*arena = a[:len(a)+kl+vl]
	} else {
		buf = make([]byte, 0, kl+vl)
	}
	buf = appendOffsetKey(buf, group, topic, partition)
	buf = appendOffsetValue(buf, &ov)
	rec := Record{Key: buf[:kl:kl], Value: buf[kl:len(buf):len(buf)]}
	if ov.ExpireMs != 0 {
		ov.LeaderEpoch = -1 // v1 carries no leader epoch
	}
	applyOffset(st, group, nil, topic, partition, ov)
	st.out.Records = append(st.out.Records, rec)
}

// WriteOffsetTombstone deletes a committed offset.
func (st *State) WriteOffsetTombstone(group, topic string, partition int32) {
	st.Write(Record{Key: offsetKey(group, topic, partition)})
}

// replayOffsetCommit applies an OffsetCommit record. The common encodings (key versions 0–1,
// value versions 0–3) are read in place without intermediate structs; anything else, and any
// record the fast path cannot read, goes through kmsg (same result, same errors).
func replayOffsetCommit(st *State, key, value []byte) error {
	group, topic, partition, ok := parseOffsetKey(key)
	if !ok {
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return wrapCorrupt("OffsetCommitKey", err)
		}
		group, topic, partition = []byte(k.Group), []byte(k.Topic), k.Partition
	}
	if value == nil {
		st.Offsets.remove(group, topic, partition)
		return nil
	}
	var ov OffsetValue
	if !parseOffsetValue(value, &ov) {
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return wrapCorrupt("OffsetCommitValue", err)
		}
		ov = OffsetValue{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitMs: v.CommitTimestamp}
		if v.Version >= 3 {
			ov.LeaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 && v.ExpireTimestamp > 0 {
			ov.ExpireMs = v.ExpireTimestamp
		}
	}
	applyOffset(st, "", group, st.Offsets.topicName(topic), partition, ov)
	return nil
}

// applyOffset is what an OffsetCommit record does to the state: the group is groupStr, or
// groupBytes when groupStr is empty. A commit for an unknown group creates a "simple" classic
// group without protocol type (Kafka's OffsetMetadataManager.replay).
func applyOffset(st *State, groupStr string, groupBytes []byte, topic string, partition int32, ov OffsetValue) {
	var g Group
	var ok bool
	if groupStr != "" {
		g, ok = st.Groups[groupStr]
	} else {
		g, ok = st.Groups[string(groupBytes)]
	}
	if !ok {
		if groupStr == "" {
			groupStr = string(groupBytes)
		}
		g = newSimpleClassicGroup(groupStr)
		st.Groups[g.ID()] = g
	}
	st.Offsets.put(g.ID(), topic, partition, ov)
}

// parseOffsetKey reads OffsetCommitKey (int16 version, string group, string topic, int32
// partition) in place; ok=false when it is not well formed (kmsg then reports why). Trailing
// bytes are ignored, as kmsg does.
func parseOffsetKey(key []byte) (group, topic []byte, partition int32, ok bool) {
	b := key
	if len(b) < 2 {
		return nil, nil, 0, false
	}
	b = b[2:]
	if group, b, ok = readString16(b); !ok {
		return nil, nil, 0, false
	}
	if topic, b, ok = readString16(b); !ok || len(b) < 4 {
		return nil, nil, 0, false
	}
	return group, topic, int32(binary.BigEndian.Uint32(b)), true
}

// parseOffsetValue reads OffsetCommitValue versions 0–3 (the non-flexible ones) as kmsg would:
// v0 offset, metadata, commit ts; v1 adds the expire ts; v3 the leader epoch after the offset.
// It fills ov and returns true; false (ov untouched) for other versions or a value that is not
// well formed.
func parseOffsetValue(value []byte, ov *OffsetValue) bool {
	b := value
	if len(b) < 2+8 {
		return false
	}
	version := int16(binary.BigEndian.Uint16(b))
	if version < 0 || version > 3 {
		return false
	}
	offset, epoch := int64(binary.BigEndian.Uint64(b[2:])), int32(-1)
	b = b[10:]
	if version >= 3 {
		if len(b) < 4 {
			return false
		}
		epoch = int32(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	meta, b, ok := readString16(b)
	if !ok || len(b) < 8 {
		return false
	}
	var expire int64
	if version == 1 {
		if len(b) < 16 {
			return false
		}
		if exp := int64(binary.BigEndian.Uint64(b[8:])); exp > 0 {
			expire = exp
		}
	}
	*ov = OffsetValue{Offset: offset, LeaderEpoch: epoch, Metadata: string(meta),
		CommitMs: int64(binary.BigEndian.Uint64(b)), ExpireMs: expire}
	return true
}

// readString16 reads an int16-length string (non-nullable: a negative length is malformed).
func readString16(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 2 {
		return nil, nil, false
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	if n < 0 || len(b)-2 < n {
		return nil, nil, false
	}
	return b[2 : 2+n], b[2+n:], true
}
