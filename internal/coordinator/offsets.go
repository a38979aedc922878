package coordinator

import (
	"encoding/binary"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetValue is one committed offset (Kafka's OffsetAndMetadata; record OffsetCommitValue).
type OffsetValue struct {
	Offset      int64
	LeaderEpoch int32 // -1 when unknown
	Metadata    string
	CommitTime  time.Time
	// ExpireTime is set only by OffsetCommit v2–v4 with an explicit retention time.
	ExpireTime time.Time
}

// Offsets holds every committed offset of a shard, by group, topic and partition.
type Offsets struct {
	byGroup map[string]map[string]map[int32]*OffsetValue
	count   int
	// topics interns topic names: one string per distinct topic of the shard, shared by every
	// group's topic map, with the number of groups holding offsets for it (dropped at zero).
	topics map[string]internedTopic

	// While a shard loads, the offsets of one group and topic arrive back to back (loads come in
	// key order): they are collected in run and inserted into a map sized for all of them when
	// the run ends (flush), instead of growing the map record by record. Every reader flushes
	// first, so a pending run is never visible.
	run offsetRun
	// slab hands out OffsetValues in blocks while loading (one allocation per block, not per
	// record).
	slab []OffsetValue
}

// offsetRun is a pending run of loaded offsets of one group and topic whose topic map does not
// exist yet (see Offsets.run).
type offsetRun struct {
	active       bool
	group, topic string // canonical strings (the group's id, the interned topic)
	parts        []int32
	vals         []*OffsetValue
}

// offsetSlabSize is the number of OffsetValues allocated at once while loading: large enough to
// amortise the allocation, small enough that a block kept alive by a few old offsets costs little.
const offsetSlabSize = 32

// newLoadedValue returns a zero OffsetValue from the load slab.
func (o *Offsets) newLoadedValue() *OffsetValue {
	if len(o.slab) == 0 {
		o.slab = make([]OffsetValue, offsetSlabSize)
	}
	v := &o.slab[0]
	o.slab = o.slab[1:]
	return v
}

// flush inserts a pending loaded run (see Offsets.run).
func (o *Offsets) flush() {
	r := &o.run
	if !r.active {
		return
	}
	r.active = false
	g := o.byGroup[r.group]
	if g == nil {
		g = map[string]map[int32]*OffsetValue{}
		o.byGroup[r.group] = g
	}
	t := make(map[int32]*OffsetValue, len(r.parts))
	for i, p := range r.parts {
		t[p] = r.vals[i]
	}
	g[r.topic] = t
	o.count -= len(r.parts) - len(t) // duplicates within the run were counted once each
	r.parts = r.parts[:0]
	clear(r.vals)
	r.vals = r.vals[:0]
	r.group, r.topic = "", ""
}

// load is put for a record replayed while the shard loads: offsets of a group and topic
// without a map yet are collected in the pending run (see Offsets.run).
func (o *Offsets) load(group string, topic []byte, partition int32, v *OffsetValue) {
	r := &o.run
	if r.active && r.group == group && r.topic == string(topic) {
		r.parts = append(r.parts, partition)
		r.vals = append(r.vals, v)
		o.count++
		return
	}
	o.flush()
	if _, ok := o.byGroup[group][string(topic)]; ok {
		o.put(group, topic, partition, v)
		return
	}
	r.active, r.group, r.topic = true, group, o.internTopic(topic)
	r.parts = append(r.parts, partition)
	r.vals = append(r.vals, v)
	o.count++
}

// appendRun adds one more loaded offset to the pending run when it is for the run's group and
// topic; false when there is no such run.
func (o *Offsets) appendRun(group, topic []byte, partition int32, v *OffsetValue) bool {
	r := &o.run
	if !r.active || r.group != string(group) || r.topic != string(topic) {
		return false
	}
	r.parts = append(r.parts, partition)
	r.vals = append(r.vals, v)
	o.count++
	return true
}

// internedTopic is the canonical string of a topic name and how many groups use it.
type internedTopic struct {
	name   string
	groups int
}

func newOffsets() *Offsets {
	return &Offsets{byGroup: map[string]map[string]map[int32]*OffsetValue{}, topics: map[string]internedTopic{}}
}

// internTopic returns the shard's canonical string for topic and counts one more group using it.
func (o *Offsets) internTopic(topic []byte) string {
	it, ok := o.topics[string(topic)]
	if !ok {
		it.name = string(topic)
	}
	it.groups++
	o.topics[it.name] = it
	return it.name
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

// Count is the number of committed offsets in the shard (gauge offset-count).
func (o *Offsets) Count() int { return o.count }

// Get returns one committed offset.
func (o *Offsets) Get(group, topic string, partition int32) (*OffsetValue, bool) {
	o.flush()
	v, ok := o.byGroup[group][topic][partition]
	return v, ok
}

// Group returns a group's offsets (topic → partition → value); nil when it has none.
func (o *Offsets) Group(group string) map[string]map[int32]*OffsetValue {
	o.flush()
	return o.byGroup[group]
}

// GroupIDs lists the groups with committed offsets, sorted.
func (o *Offsets) GroupIDs() []string {
	o.flush()
	return sortedKeys(o.byGroup)
}

// groups returns every group's offsets (group → topic → partition → value).
func (o *Offsets) groups() map[string]map[string]map[int32]*OffsetValue {
	o.flush()
	return o.byGroup
}

// HasOffsets reports whether group has any committed offset.
func (o *Offsets) HasOffsets(group string) bool {
	o.flush()
	return len(o.byGroup[group]) > 0
}

// Topics lists the topics a group has offsets for, sorted.
func (o *Offsets) Topics(group string) []string {
	o.flush()
	return sortedKeys(o.byGroup[group])
}

// Partitions lists a topic's committed partitions for a group, sorted.
func (o *Offsets) Partitions(group, topic string) []int32 {
	o.flush()
	ps := make([]int32, 0, len(o.byGroup[group][topic]))
	for p := range o.byGroup[group][topic] {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// put stores v for group/topic/partition. group should be the group's own id string (shared
// with st.Groups); topic is interned, so the bytes are not retained.
func (o *Offsets) put(group string, topic []byte, partition int32, v *OffsetValue) {
	o.flush()
	g := o.byGroup[group]
	if g == nil {
		g = map[string]map[int32]*OffsetValue{}
		o.byGroup[group] = g
	}
	t := g[string(topic)]
	if t == nil {
		t = map[int32]*OffsetValue{}
		g[o.internTopic(topic)] = t
	}
	if _, ok := t[partition]; !ok {
		o.count++
	}
	t[partition] = v
}

func (o *Offsets) remove(group, topic []byte, partition int32) bool {
	o.flush()
	g := o.byGroup[string(group)]
	t := g[string(topic)]
	if _, ok := t[partition]; !ok {
		return false
	}
	delete(t, partition)
	o.count--
	if len(t) == 0 {
		delete(g, string(topic))
		o.releaseTopic(string(topic))
		if len(g) == 0 {
			delete(o.byGroup, string(group))
		}
	}
	return true
}

// offsetKey encodes OffsetCommitKey (record type 1) with kmsg.
func offsetKey(group, topic string, partition int32) []byte {
	k := kmsg.OffsetCommitKey{Version: RecOffsetCommit, Group: group, Topic: topic, Partition: partition}
	return k.AppendTo(nil)
}

// offsetValue encodes OffsetCommitValue: v1 when an expire timestamp is set (the only version
// carrying it), else v3 (with leader epoch), as Kafka does.
func offsetValue(v *OffsetValue) []byte {
	val := kmsg.NewOffsetCommitValue()
	val.Offset = v.Offset
	val.Metadata = v.Metadata
	val.CommitTimestamp = v.CommitTime.UnixMilli()
	if !v.ExpireTime.IsZero() {
		val.Version = 1
		val.ExpireTimestamp = v.ExpireTime.UnixMilli()
	} else {
		val.Version = 3
		val.LeaderEpoch = v.LeaderEpoch
	}
	return val.AppendTo(nil)
}

// WriteOffset writes a committed offset record.
func (st *State) WriteOffset(group, topic string, partition int32, v *OffsetValue) {
	st.Write(Record{Key: offsetKey(group, topic, partition), Value: offsetValue(v)})
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
	var ov *OffsetValue
	if st.Loading {
		ov = st.Offsets.newLoadedValue()
	} else {
		ov = new(OffsetValue)
	}
	if !parseOffsetValue(value, ov) {
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return wrapCorrupt("OffsetCommitValue", err)
		}
		*ov = OffsetValue{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTime: time.UnixMilli(v.CommitTimestamp)}
		if v.Version >= 3 {
			ov.LeaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 && v.ExpireTimestamp >= 0 {
			ov.ExpireTime = time.UnixMilli(v.ExpireTimestamp)
		}
	}
	// The next partition of the group and topic loading right now: the group exists (a run
	// starts only after the lookup below, and any other record type ends the run).
	if st.Loading && st.Offsets.appendRun(group, topic, partition, ov) {
		return nil
	}
	// A commit for an unknown group creates a "simple" classic group without protocol type.
	g, ok := st.Groups[string(group)]
	if !ok {
		g = newSimpleClassicGroup(string(group))
		st.Groups[g.ID()] = g
	}
	if st.Loading {
		st.Offsets.load(g.ID(), topic, partition, ov)
	} else {
		st.Offsets.put(g.ID(), topic, partition, ov)
	}
	return nil
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
	var expire time.Time
	if version == 1 {
		if len(b) < 16 {
			return false
		}
		if exp := int64(binary.BigEndian.Uint64(b[8:])); exp >= 0 {
			expire = time.UnixMilli(exp)
		}
	}
	*ov = OffsetValue{Offset: offset, LeaderEpoch: epoch, Metadata: string(meta),
		CommitTime: time.UnixMilli(int64(binary.BigEndian.Uint64(b))), ExpireTime: expire}
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
