package coordinator

import (
	"fmt"
	"slices"
	"sort"
)

// Consumer group records (KIP-848). Keys are "type, group id[, member id | regex]"; values are
// "int16 version, fields" in Enc's encoding. Layouts: docs/records.md.

const (
	cgMetadataVersionNoHash int16 = 0 // epoch only (legacy: the hash is computed on the next heartbeat)
	cgMetadataVersion       int16 = 1 // epoch + KIP-1101 metadata hash
)

func cgMetadataKey(g string) []byte        { return groupKey(RecConsumerGroupMetadata, g) }
func cgMemberKey(g, m string) []byte       { return groupKey(RecConsumerGroupMemberMetadata, g, m) }
func cgTargetMetaKey(g string) []byte      { return groupKey(RecConsumerGroupTargetMetadata, g) }
func cgTargetMemberKey(g, m string) []byte { return groupKey(RecConsumerGroupTargetMember, g, m) }
func cgCurrentKey(g, m string) []byte      { return groupKey(RecConsumerGroupCurrentMember, g, m) }
func cgRegexKey(g, re string) []byte       { return groupKey(RecConsumerGroupRegex, g, re) }

func cgMetadataValue(epoch int32, hash int64) []byte {
	e := Enc{}
	e.Int16(cgMetadataVersion)
	e.Int32(epoch)
	e.Int64(hash)
	return e.B
}

// cgMemberValue encodes member metadata: version 0 for a consumer-protocol member; version 1
// appends the classic-protocol metadata (session timeout ms, then the JoinGroup protocols as
// name/metadata pairs) of a classic-protocol member.
func cgMemberValue(m *consumerMember) []byte {
	e := Enc{}
	if m.classic != nil {
		e.Int16(1)
	} else {
		e.Int16(0)
	}
	e.String(m.id)
	e.NullableString(m.instanceID)
	e.NullableString(m.rackID)
	e.String(m.clientID)
	e.String(m.clientHost)
	e.Strings(m.subscribedNames)
	e.String(m.subscribedRegex)
	e.String(m.serverAssignor)
	e.Int32(m.rebalanceTimeout)
	if m.classic != nil {
		e.Int32(m.classic.sessionTimeout)
		e.ArrayLen(len(m.classic.protocols))
		for _, p := range m.classic.protocols {
			e.String(p.Name)
			e.Bytes(p.Metadata)
		}
	}
	return e.B
}

func cgTargetMetaValue(epoch int32) []byte {
	e := Enc{}
	e.Int16(0)
	e.Int32(epoch)
	return e.B
}

func encTP(e *Enc, a topicPartitions) {
	ids := sortedTopicIDs(a)
	e.ArrayLen(len(ids))
	for _, t := range ids {
		e.UUID(t)
		e.Int32s(a[t])
	}
}

// decTP reads an assignment into a map sized for it; nil when it holds no partition (readers
// treat a nil assignment as empty, as zeroCurrent's; stored assignments are never modified in
// place). The encoder writes sorted, distinct partitions; anything else (and empty topics) is
// normalized as normalizeTP would.
func decTP(d *Dec) topicPartitions {
	n := d.ArrayLen(20)
	if n <= 0 {
		return nil
	}
	out := make(topicPartitions, n)
	for i := 0; i < n; i++ {
		t := d.UUID()
		ps := d.Int32s()
		if len(ps) > 0 {
			out[t] = sortedDistinct(ps)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sortedDistinct returns ps sorted without duplicates, in place (ps is the decoder's own copy).
func sortedDistinct(ps []int32) []int32 {
	for i := 1; i < len(ps); i++ {
		if ps[i] <= ps[i-1] {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			w := 1
			for _, p := range ps[1:] {
				if p != ps[w-1] {
					ps[w] = p
					w++
				}
			}
			return ps[:w]
		}
	}
	return ps
}

func cgTargetMemberValue(a topicPartitions) []byte {
	e := Enc{}
	e.Int16(0)
	encTP(&e, a)
	return e.B
}

func cgCurrentValue(c *consumerCurrent) []byte {
	e := Enc{}
	e.Int16(cgCurrentVersion(c))
	e.Int32(c.epoch)
	e.Int32(c.prevEpoch)
	e.Int8(int8(c.state))
	encTP(&e, c.assigned)
	encTP(&e, c.pending)
	encAssignmentEpochs(&e, c) // value version 1 only
	return e.B
}

func cgRegexValue(r *consumerRegex) []byte {
	e := Enc{}
	e.Int16(0)
	e.Strings(r.topics)
	e.Int64(r.version)
	e.Int64(r.timestamp)
	return e.B
}

func checkVersion(d *Dec, max int16, what string) (int16, error) {
	v := d.Int16()
	if d.Err() != nil {
		return 0, d.Err()
	}
	if v < 0 || v > max {
		return 0, fmt.Errorf("%w: %s value version %d", ErrCorruptRecord, what, v)
	}
	return v, nil
}

// cgForReplay returns the consumer group a record belongs to, creating it lazily (records of one
// group may load in any order). A classic group with the id (a simple group created by offset
// commits, or an empty one replaced on join) is replaced. create=false (tombstones) never
// creates. nil means the id belongs to another group type: the record is ignored.
func cgForReplay(st *State, id string, create bool) *ConsumerGroup {
	switch g := st.Groups[id].(type) {
	case *ConsumerGroup:
		return g
	case nil:
	case *ClassicGroup:
		if !create {
			return nil
		}
	default:
		return nil
	}
	if !create {
		return nil
	}
	g := newConsumerGroup(id)
	st.Groups[id] = g
	return g
}

// cgMaybeDrop removes a group none of whose records is left.
func cgMaybeDrop(st *State, g *ConsumerGroup) {
	if !g.hasMetadata && !g.hasTargetMeta && len(g.members) == 0 && len(g.currents) == 0 &&
		len(g.targets) == 0 && len(g.regexes) == 0 {
		if st.Groups[g.id] == Group(g) {
			st.removeGroup(g.id)
		}
	}
}

// cgReplayGroup parses a consumer group record key (group id and extra ∈ {0, 1} more strings)
// without allocating and returns the group the record belongs to with the extra string's bytes
// (aliasing key); a nil group with a nil error means the record is ignored.
func cgReplayGroup(st *State, key, value []byte, extra int) (*ConsumerGroup, []byte, error) {
	d := Dec{B: key[2:]}
	id := d.StringBytes()
	var sub []byte
	if extra > 0 {
		sub = d.StringBytes()
	}
	if err := d.Done(); err != nil {
		return nil, nil, err
	}
	if g, ok := st.Groups[string(id)].(*ConsumerGroup); ok {
		return g, sub, nil
	}
	return cgForReplay(st, string(id), value != nil), sub, nil
}

// memberID returns the group's own string for a member id read from a record key (the member
// metadata's id when the member is known), so that the member, target and current maps share
// one string per member.
func (g *ConsumerGroup) memberID(b []byte) string {
	if m := g.members[string(b)]; m != nil {
		return m.id
	}
	return string(b)
}

// cgDropEntry applies the tombstone of a keyed record: it deletes k from m and drops the group if
// none of its records is left.
func cgDropEntry[V any](st *State, g *ConsumerGroup, m map[string]V, k string) {
	delete(m, k)
	cgMaybeDrop(st, g)
}

// decodeValue decodes a record value: it checks the leading version against [0, max] (what names
// the record in the error), lets dec read the fields and requires every byte to be read. Errors
// wrap ErrCorruptRecord or the decoder's failure; dec's results must not be used on error.
func decodeValue(value []byte, max int16, what string, dec func(d *Dec, version int16)) error {
	d := Dec{B: value}
	v, err := checkVersion(&d, max, what)
	if err != nil {
		return err
	}
	dec(&d, v)
	return d.Done()
}

// replayCGKeyed replays a record keyed by group id and one more string (member id, regex) whose
// value lives in one map of the group: a tombstone deletes the entry, a value (version at most
// max) is decoded by dec and stored.
func replayCGKeyed[V any](st *State, key, value []byte, max int16, what string,
	entries func(*ConsumerGroup) *map[string]V, dec func(d *Dec, version int16) V,
	keyOf func(g *ConsumerGroup, b []byte) string, stored func(g *ConsumerGroup, k string, v V)) error {
	g, sub, err := cgReplayGroup(st, key, value, 1)
	if g == nil || err != nil {
		return err
	}
	if value == nil {
		cgDropEntry(st, g, *entries(g), string(sub))
		return nil
	}
	var v V
	if err := decodeValue(value, max, what, func(d *Dec, version int16) { v = dec(d, version) }); err != nil {
		return err
	}
	k := keyOf(g, sub)
	initMap(entries(g))[k] = v
	if stored != nil {
		stored(g, k, v)
	}
	return nil
}

func replayCGMetadata(st *State, key, value []byte) error {
	g, _, err := cgReplayGroup(st, key, value, 0)
	if g == nil || err != nil {
		return err
	}
	if value == nil {
		g.hasMetadata, g.epoch, g.metadataHash = false, 0, 0
		cgMaybeDrop(st, g)
		return nil
	}
	var epoch int32
	var hash int64
	if err := decodeValue(value, cgMetadataVersion, "ConsumerGroupMetadata", func(d *Dec, v int16) {
		epoch = d.Int32()
		if v >= 1 {
			hash = d.Int64()
		}
	}); err != nil {
		return err
	}
	g.hasMetadata, g.epoch, g.metadataHash = true, epoch, hash
	return nil
}

func replayCGMember(st *State, key, value []byte) error {
	g, sub, err := cgReplayGroup(st, key, value, 1)
	if g == nil || err != nil {
		return err
	}
	mid := g.memberID(sub)
	if old := g.members[mid]; old != nil && value == nil {
		g.refMember(old, -1)
	}
	if old := g.members[mid]; old != nil && old.instanceID != nil && g.static[*old.instanceID] == mid {
		delete(g.static, *old.instanceID)
	}
	if value == nil {
		cgDropEntry(st, g, g.members, mid)
		return nil
	}
	m := &consumerMember{}
	if err := decodeValue(value, 1, "ConsumerGroupMemberMetadata", func(d *Dec, ver int16) {
		d.StringBytes() // the member id again: the key's is used
		m.instanceID = d.NullableString()
		m.rackID = d.NullableString()
		m.clientID = d.String()
		m.clientHost = d.String()
		m.subscribedNames = d.Strings()
		m.subscribedRegex = d.String()
		m.serverAssignor = d.String()
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
		return err
	}
	m.id = mid
	m.subscribedNames = g.sharedNames(m.subscribedNames, g.members[mid])
	if old := g.members[mid]; old != nil {
		g.refMember(old, -1)
	}
	g.refMember(m, 1)
	initMap(&g.members)[mid] = m
	if m.instanceID != nil {
		initMap(&g.static)[*m.instanceID] = mid
	}
	return nil
}

func replayCGTargetMeta(st *State, key, value []byte) error {
	g, _, err := cgReplayGroup(st, key, value, 0)
	if g == nil || err != nil {
		return err
	}
	if value == nil {
		g.hasTargetMeta, g.assignmentEpoch = false, 0
		cgMaybeDrop(st, g)
		return nil
	}
	var epoch int32
	if err := decodeValue(value, 0, "ConsumerGroupTargetAssignmentMetadata", func(d *Dec, _ int16) {
		epoch = d.Int32()
	}); err != nil {
		return err
	}
	g.hasTargetMeta, g.assignmentEpoch = true, epoch
	return nil
}

func replayCGTargetMember(st *State, key, value []byte) error {
	return replayCGKeyed(st, key, value, 0, "ConsumerGroupTargetAssignmentMember",
		func(g *ConsumerGroup) *map[string]topicPartitions { return &g.targets },
		func(d *Dec, _ int16) topicPartitions { return decTP(d) },
		(*ConsumerGroup).memberID,
		func(g *ConsumerGroup, mid string, a topicPartitions) {
			// A member that owns exactly its target keeps one map for both (assignments
			// stored in a group are never modified in place, only replaced).
			if c := g.currents[mid]; c != nil && equalTP(c.assigned, a) {
				g.targets[mid] = c.assigned // g.targets exists: the entry was just stored
			}
		})
}

func replayCGCurrent(st *State, key, value []byte) error {
	g, sub, err := cgReplayGroup(st, key, value, 1)
	if g == nil || err != nil {
		return err
	}
	mid := g.memberID(sub)
	if old := g.currents[mid]; old != nil {
		g.unindex(mid, old.assigned)
		g.unindex(mid, old.pending)
	}
	if value == nil {
		cgDropEntry(st, g, g.currents, mid)
		return nil
	}
	c := &consumerCurrent{}
	if err := decodeValue(value, 1, "ConsumerGroupCurrentMemberAssignment", func(d *Dec, version int16) {
		c.epoch = d.Int32()
		c.prevEpoch = d.Int32()
		c.state = ConsumerMemberState(d.Int8())
		c.assigned = decTP(d)
		c.pending = decTP(d)
		if version >= 1 {
			c.epochs = decAssignmentEpochs(d)
		}
	}); err != nil {
		return err
	}
	if t, ok := g.targets[mid]; ok && equalTP(t, c.assigned) {
		c.assigned = t // one map for target and current (see replayCGTargetMember)
	}
	initMap(&g.currents)[mid] = c
	g.index(mid, c.assigned)
	g.index(mid, c.pending)
	return nil
}

func replayCGRegex(st *State, key, value []byte) error {
	if value == nil { // the resolved topics of a regex are part of the subscribed set
		if g, _, err := cgReplayGroup(st, key, nil, 1); err == nil && g != nil {
			g.subsVersion++
		}
	}
	return replayCGKeyed(st, key, value, 0, "ConsumerGroupRegularExpression",
		func(g *ConsumerGroup) *map[string]*consumerRegex { return &g.regexes },
		func(d *Dec, _ int16) *consumerRegex {
			r := &consumerRegex{}
			r.topics = d.Strings()
			r.version = d.Int64()
			r.timestamp = d.Int64()
			sort.Strings(r.topics)
			return r
		},
		func(_ *ConsumerGroup, b []byte) string { return string(b) },
		func(g *ConsumerGroup, _ string, _ *consumerRegex) { g.subsVersion++ })
}

// partitionOwners is one topic's partition → owning member index: a slice indexed by partition
// (16 B per partition, no map overhead; partitions are dense from 0) with a map for the odd
// partition number outside [0, maxDenseOwnerPartition) that a malformed record could carry.
type partitionOwners struct {
	dense  []string
	n      int // non-empty entries of dense
	sparse map[int32]string
}

const maxDenseOwnerPartition = 1 << 20

func (o *partitionOwners) set(p int32, mid string) {
	if p < 0 || p >= maxDenseOwnerPartition {
		initMap(&o.sparse)[p] = mid
		return
	}
	if int(p) >= len(o.dense) {
		o.dense = slices.Grow(o.dense, int(p)+1-len(o.dense))[:int(p)+1]
	}
	if o.dense[p] == "" {
		o.n++
	}
	o.dense[p] = mid
}

// clear removes p's owner if it is mid.
func (o *partitionOwners) clear(p int32, mid string) {
	if p < 0 || p >= maxDenseOwnerPartition {
		if o.sparse[p] == mid {
			delete(o.sparse, p)
		}
		return
	}
	if int(p) < len(o.dense) && o.dense[p] == mid && mid != "" {
		o.dense[p] = ""
		o.n--
	}
}

func (o *partitionOwners) get(p int32) string {
	if o == nil {
		return ""
	}
	if p >= 0 && int(p) < len(o.dense) {
		return o.dense[p]
	}
	return o.sparse[p]
}

func (o *partitionOwners) empty() bool { return o.n == 0 && len(o.sparse) == 0 }

func (g *ConsumerGroup) index(mid string, a topicPartitions) {
	for t, ps := range a {
		o := g.owners[t]
		if o == nil {
			o = &partitionOwners{}
			initMap(&g.owners)[t] = o
		}
		for _, p := range ps {
			o.set(p, mid)
		}
	}
}

func (g *ConsumerGroup) unindex(mid string, a topicPartitions) {
	for t, ps := range a {
		o := g.owners[t]
		if o == nil {
			continue
		}
		for _, p := range ps {
			o.clear(p, mid)
		}
		if o.empty() {
			delete(g.owners, t)
		}
	}
}

// owner returns the member owning a partition ("" = free).
func (g *ConsumerGroup) owner(t [16]byte, p int32) string { return g.owners[t].get(p) }

// --- writers: every durable change goes through st.Write ---

func (g *ConsumerGroup) writeMetadata(st *State, epoch int32, hash int64) {
	st.Write(Record{Key: cgMetadataKey(g.id), Value: cgMetadataValue(epoch, hash)})
}

func (g *ConsumerGroup) writeMember(st *State, m *consumerMember) {
	st.Write(Record{Key: cgMemberKey(g.id, m.id), Value: cgMemberValue(m)})
}

func (g *ConsumerGroup) writeTargetMember(st *State, mid string, a topicPartitions) {
	st.Write(Record{Key: cgTargetMemberKey(g.id, mid), Value: cgTargetMemberValue(a)})
}

func (g *ConsumerGroup) writeTargetMeta(st *State, epoch int32) {
	st.Write(Record{Key: cgTargetMetaKey(g.id), Value: cgTargetMetaValue(epoch)})
}

func (g *ConsumerGroup) writeCurrent(st *State, mid string, c *consumerCurrent) {
	st.Write(Record{Key: cgCurrentKey(g.id, mid), Value: cgCurrentValue(c)})
}

func (g *ConsumerGroup) writeRegex(st *State, re string, r *consumerRegex) {
	st.Write(Record{Key: cgRegexKey(g.id, re), Value: cgRegexValue(r)})
}

// writeMemberTombstones removes a member in Kafka's order: current assignment, target
// assignment, member metadata.
func (g *ConsumerGroup) writeMemberTombstones(st *State, mid string) {
	st.Write(Record{Key: cgCurrentKey(g.id, mid)})
	st.Write(Record{Key: cgTargetMemberKey(g.id, mid)})
	st.Write(Record{Key: cgMemberKey(g.id, mid)})
}
