package coordinator

import (
	"fmt"
	"sort"
)

// Share group records (KIP-932). Membership uses Kafka's __consumer_offsets record types 10–14;
// the state of each share-partition (what Kafka's share coordinator keeps in
// __share_group_state as ShareSnapshot records) is muster's record type 1010 in the group's own
// shard. Keys are "type, group id[, member id]" (10–14) and "type, group id, topic id, partition"
// (1010); values are "int16 version, fields" in Enc's encoding. Layouts: docs/records.md.

// Record types of share groups.
const (
	RecShareGroupMemberMetadata int16 = 10
	RecShareGroupMetadata       int16 = 11
	RecShareGroupTargetMetadata int16 = 12
	RecShareGroupTargetMember   int16 = 13
	RecShareGroupCurrentMember  int16 = 14
	// RecSharePartitionState is muster's: Kafka's ShareSnapshot (__share_group_state), stored with
	// the group that owns the share-partition.
	RecSharePartitionState int16 = 1010
)

func shareMetadataKey(g string) []byte        { return groupKey(RecShareGroupMetadata, g) }
func shareMemberKey(g, m string) []byte       { return groupKey(RecShareGroupMemberMetadata, g, m) }
func shareTargetMetaKey(g string) []byte      { return groupKey(RecShareGroupTargetMetadata, g) }
func shareTargetMemberKey(g, m string) []byte { return groupKey(RecShareGroupTargetMember, g, m) }
func shareCurrentKey(g, m string) []byte      { return groupKey(RecShareGroupCurrentMember, g, m) }

func sharePartitionKey(g string, topic [16]byte, partition int32) []byte {
	e := Enc{B: make([]byte, 0, 4+len(g)+20)}
	e.Int16(RecSharePartitionState)
	e.String(g)
	e.UUID(topic)
	e.Int32(partition)
	return e.B
}

func shareMetadataValue(epoch int32, hash int64) []byte {
	e := Enc{}
	e.Int16(0)
	e.Int32(epoch)
	e.Int64(hash)
	return e.B
}

func shareMemberValue(m *shareMember) []byte {
	e := Enc{}
	e.Int16(0)
	e.NullableString(m.rackID)
	e.String(m.clientID)
	e.String(m.clientHost)
	e.Strings(m.subscribed)
	return e.B
}

func shareTargetMetaValue(epoch int32) []byte {
	e := Enc{}
	e.Int16(0)
	e.Int32(epoch)
	return e.B
}

func shareTargetMemberValue(a topicPartitions) []byte {
	e := Enc{}
	e.Int16(0)
	encTP(&e, a)
	return e.B
}

func shareCurrentValue(c *shareCurrent) []byte {
	e := Enc{}
	e.Int16(0)
	e.Int32(c.epoch)
	e.Int32(c.prevEpoch)
	e.Int8(0) // member state: always STABLE (no revocation in share groups)
	encTP(&e, c.assigned)
	return e.B
}

// --- writes: Write replays each record at once ---

func (g *ShareGroup) writeMetadata(st *State, epoch int32, hash int64) {
	st.Write(Record{Key: shareMetadataKey(g.id), Value: shareMetadataValue(epoch, hash)})
}

func (g *ShareGroup) writeMember(st *State, m *shareMember) {
	st.Write(Record{Key: shareMemberKey(g.id, m.id), Value: shareMemberValue(m)})
}

func (g *ShareGroup) writeTargetMeta(st *State, epoch int32) {
	st.Write(Record{Key: shareTargetMetaKey(g.id), Value: shareTargetMetaValue(epoch)})
}

func (g *ShareGroup) writeTarget(st *State, mid string, a topicPartitions) {
	st.Write(Record{Key: shareTargetMemberKey(g.id, mid), Value: shareTargetMemberValue(a)})
}

func (g *ShareGroup) writeCurrent(st *State, mid string, c *shareCurrent) {
	st.Write(Record{Key: shareCurrentKey(g.id, mid), Value: shareCurrentValue(c)})
}

// writeMemberTombstones removes a member's records in Kafka's order: current assignment, target
// assignment, member metadata.
func (g *ShareGroup) writeMemberTombstones(st *State, mid string) {
	if _, ok := g.currents[mid]; ok {
		st.Write(Record{Key: shareCurrentKey(g.id, mid)})
	}
	if _, ok := g.targets[mid]; ok {
		st.Write(Record{Key: shareTargetMemberKey(g.id, mid)})
	}
	if _, ok := g.members[mid]; ok {
		st.Write(Record{Key: shareMemberKey(g.id, mid)})
	}
}

// --- replay ---

// replayShare finds (or, for a value, creates) the share group of a record and applies fn to it;
// a group left without records disappears. A group of another type under the id is a corrupt
// shard (the coordinator never writes both).
func replayShare(st *State, key, value []byte, extra int, fn func(st *State, g *ShareGroup, rest []string, value []byte) error) error {
	group, rest, err := parseGroupKey(key, extra)
	if err != nil {
		return err
	}
	return replayShareGroup(st, group, value, func(g *ShareGroup) error { return fn(st, g, rest, value) })
}

func replayShareGroup(st *State, group string, value []byte, fn func(g *ShareGroup) error) error {
	var g *ShareGroup
	switch x := st.Groups[group].(type) {
	case *ShareGroup:
		g = x
	case nil:
		if value == nil {
			return nil
		}
		g = newShareGroup(group)
		st.Groups[group] = g
	case *ClassicGroup:
		if value == nil {
			return nil
		}
		// A classic group built by replaying another key (committed offsets, loaded first).
		g = newShareGroup(group)
		st.Groups[group] = g
	default:
		return fmt.Errorf("%w: share group record for %s group %s", ErrCorruptRecord, x.Type(), group)
	}
	if err := fn(g); err != nil {
		return err
	}
	if !g.hasRecords() {
		st.removeGroup(group)
	}
	return nil
}

func replayShareMetadata(_ *State, g *ShareGroup, _ []string, v []byte) error {
	if v == nil {
		g.hasMetadata, g.epoch, g.metadataHash = false, 0, 0
		return nil
	}
	var epoch int32
	var hash int64
	if err := decodeValue(v, 0, "ShareGroupMetadata", func(d *Dec, _ int16) { epoch, hash = d.Int32(), d.Int64() }); err != nil {
		return err
	}
	g.hasMetadata, g.epoch, g.metadataHash = true, epoch, hash
	return nil
}

func replayShareMember(_ *State, g *ShareGroup, rest []string, v []byte) error {
	mid := rest[0]
	if v == nil {
		delete(g.members, mid)
		return nil
	}
	m := &shareMember{id: mid}
	if err := decodeValue(v, 0, "ShareGroupMemberMetadata", func(d *Dec, _ int16) {
		m.rackID, m.clientID, m.clientHost, m.subscribed = d.NullableString(), d.String(), d.String(), d.Strings()
	}); err != nil {
		return err
	}
	sort.Strings(m.subscribed)
	m.subscribed = cgDedupSorted(m.subscribed)
	initMap(&g.members)[mid] = m
	return nil
}

func replayShareTargetMeta(_ *State, g *ShareGroup, _ []string, v []byte) error {
	if v == nil {
		g.hasTargetMeta, g.assignmentEpoch = false, 0
		return nil
	}
	var epoch int32
	if err := decodeValue(v, 0, "ShareGroupTargetAssignmentMetadata", func(d *Dec, _ int16) { epoch = d.Int32() }); err != nil {
		return err
	}
	g.hasTargetMeta, g.assignmentEpoch = true, epoch
	return nil
}

func replayShareTargetMember(_ *State, g *ShareGroup, rest []string, v []byte) error {
	mid := rest[0]
	if v == nil {
		delete(g.targets, mid)
		return nil
	}
	var a topicPartitions
	if err := decodeValue(v, 0, "ShareGroupTargetAssignmentMember", func(d *Dec, _ int16) { a = decTP(d) }); err != nil {
		return err
	}
	initMap(&g.targets)[mid] = a
	return nil
}

func replayShareCurrent(_ *State, g *ShareGroup, rest []string, v []byte) error {
	mid := rest[0]
	if v == nil {
		delete(g.currents, mid)
		return nil
	}
	c := &shareCurrent{}
	if err := decodeValue(v, 0, "ShareGroupCurrentMemberAssignment", func(d *Dec, _ int16) {
		c.epoch, c.prevEpoch = d.Int32(), d.Int32()
		d.Int8()
		c.assigned = decTP(d)
	}); err != nil {
		return err
	}
	initMap(&g.currents)[mid] = c
	return nil
}

// replaySharePartition applies a share-partition state record (see SharePartition.replay).
func replaySharePartition(st *State, key, value []byte) error {
	d := Dec{B: key[2:]}
	group := d.String()
	topic := d.UUID()
	partition := d.Int32()
	if err := d.Done(); err != nil {
		return err
	}
	k := sharePartKey{topic: topic, partition: partition}
	return replayShareGroup(st, group, value, func(g *ShareGroup) error {
		if value == nil {
			if sp := g.parts[k]; sp != nil {
				sp.drop(st, g)
				delete(g.parts, k)
			}
			return nil
		}
		sp := g.parts[k]
		if sp == nil {
			sp = newSharePartition(topic, partition)
			initMap(&g.parts)[k] = sp
		}
		return sp.replay(st, g, value)
	})
}
