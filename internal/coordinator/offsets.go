package coordinator

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetValue is one committed offset (reference §5; record OffsetCommitValue).
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
}

func newOffsets() *Offsets { return &Offsets{byGroup: map[string]map[string]map[int32]*OffsetValue{}} }

// Count is the number of committed offsets in the shard (gauge offset-count).
func (o *Offsets) Count() int { return o.count }

// Get returns one committed offset.
func (o *Offsets) Get(group, topic string, partition int32) (*OffsetValue, bool) {
	v, ok := o.byGroup[group][topic][partition]
	return v, ok
}

// Group returns a group's offsets (topic → partition → value); nil when it has none.
func (o *Offsets) Group(group string) map[string]map[int32]*OffsetValue { return o.byGroup[group] }

// HasOffsets reports whether group has any committed offset.
func (o *Offsets) HasOffsets(group string) bool { return len(o.byGroup[group]) > 0 }

// Topics lists the topics a group has offsets for, sorted.
func (o *Offsets) Topics(group string) []string { return sortedKeys(o.byGroup[group]) }

// Partitions lists a topic's committed partitions for a group, sorted.
func (o *Offsets) Partitions(group, topic string) []int32 {
	ps := make([]int32, 0, len(o.byGroup[group][topic]))
	for p := range o.byGroup[group][topic] {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

func (o *Offsets) put(group, topic string, partition int32, v *OffsetValue) {
	g := o.byGroup[group]
	if g == nil {
		g = map[string]map[int32]*OffsetValue{}
		o.byGroup[group] = g
	}
	t := g[topic]
	if t == nil {
		t = map[int32]*OffsetValue{}
		g[topic] = t
	}
	if _, ok := t[partition]; !ok {
		o.count++
	}
	t[partition] = v
}

func (o *Offsets) remove(group, topic string, partition int32) bool {
	t := o.byGroup[group][topic]
	if _, ok := t[partition]; !ok {
		return false
	}
	delete(t, partition)
	o.count--
	if len(t) == 0 {
		delete(o.byGroup[group], topic)
		if len(o.byGroup[group]) == 0 {
			delete(o.byGroup, group)
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

func init() {
	RegisterReplay(RecOffsetCommit, replayOffsetCommit)
	RegisterReplay(0, replayOffsetCommit) // key version 0 is the same record
}

func replayOffsetCommit(st *State, key, value []byte) error {
	var k kmsg.OffsetCommitKey
	if err := k.ReadFrom(key); err != nil {
		return wrapCorrupt("OffsetCommitKey", err)
	}
	if value == nil {
		st.Offsets.remove(k.Group, k.Topic, k.Partition)
		return nil
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		return wrapCorrupt("OffsetCommitValue", err)
	}
	ov := &OffsetValue{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTime: time.UnixMilli(v.CommitTimestamp)}
	if v.Version >= 3 {
		ov.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 && v.ExpireTimestamp >= 0 {
		ov.ExpireTime = time.UnixMilli(v.ExpireTimestamp)
	}
	// A commit for an unknown group creates a "simple" classic group without protocol type.
	if _, ok := st.Groups[k.Group]; !ok {
		st.Groups[k.Group] = newSimpleClassicGroup(k.Group)
	}
	st.Offsets.put(k.Group, k.Topic, k.Partition, ov)
	return nil
}
