package coordinator

import (
	"bytes"
	"sort"
)

// tpKey is one partition of a topic (by topic id).
type tpKey struct {
	topic     [16]byte
	partition int32
}

// assignmentEpochs maps an assigned partition to its assignment epoch: the member epoch at which
// the member was given it (KIP-1251, Kafka 4.3+). It decides whether an offset commit with an
// older member epoch may commit the partition. The zero value is empty.
//
// Two forms with one meaning: a record's decoded epochs are kept compactly in sorted (24 B per
// partition; a stored member's epochs are always these), and epochs being built (set, restrict,
// merge) live in m. At most one of them is non-empty.
type assignmentEpochs struct {
	sorted []assignmentEpoch // by topic id, then partition; distinct
	m      map[tpKey]int32
}

// assignmentEpoch is one entry of assignmentEpochs.sorted.
type assignmentEpoch struct {
	tpKey
	epoch int32
}

func tpLess(a, b tpKey) bool {
	if c := bytes.Compare(a.topic[:], b.topic[:]); c != 0 {
		return c < 0
	}
	return a.partition < b.partition
}

// assignmentEpochsAt gives every partition of a the assignment epoch epoch.
func assignmentEpochsAt(a topicPartitions, epoch int32) assignmentEpochs {
	var out assignmentEpochs
	for t, ps := range a {
		for _, p := range ps {
			out.set(t, p, epoch)
		}
	}
	return out
}

// len is the number of partitions with a known assignment epoch.
func (m assignmentEpochs) len() int { return len(m.sorted) + len(m.m) }

// each calls fn for every entry (in no particular order).
func (m assignmentEpochs) each(fn func(k tpKey, epoch int32)) {
	for _, e := range m.sorted {
		fn(e.tpKey, e.epoch)
	}
	for k, v := range m.m {
		fn(k, v)
	}
}

func (m *assignmentEpochs) set(t [16]byte, p int32, epoch int32) {
	if m.m == nil {
		m.m = make(map[tpKey]int32, len(m.sorted)+1)
		for _, e := range m.sorted {
			m.m[e.tpKey] = e.epoch
		}
		m.sorted = nil
	}
	m.m[tpKey{t, p}] = epoch
}

// get returns the assignment epoch of t/p and whether it is known.
func (m assignmentEpochs) get(t [16]byte, p int32) (int32, bool) {
	k := tpKey{t, p}
	if m.m != nil {
		e, ok := m.m[k]
		return e, ok
	}
	i := sort.Search(len(m.sorted), func(i int) bool { return !tpLess(m.sorted[i].tpKey, k) })
	if i < len(m.sorted) && m.sorted[i].tpKey == k {
		return m.sorted[i].epoch, true
	}
	return 0, false
}

// restrict returns the entries of the partitions in a (a new value; empty when none).
func (m assignmentEpochs) restrict(a topicPartitions) assignmentEpochs {
	var out assignmentEpochs
	for t, ps := range a {
		for _, p := range ps {
			if e, ok := m.get(t, p); ok {
				out.set(t, p, e)
			}
		}
	}
	return out
}

// merge adds o's entries to m (a new value; empty when both are empty).
func (m assignmentEpochs) merge(o assignmentEpochs) assignmentEpochs {
	var out assignmentEpochs
	for _, src := range []assignmentEpochs{m, o} {
		src.each(func(k tpKey, v int32) { out.set(k.topic, k.partition, v) })
	}
	return out
}

func (m assignmentEpochs) equal(o assignmentEpochs) bool {
	if m.len() != o.len() {
		return false
	}
	eq := true
	m.each(func(k tpKey, v int32) {
		if ov, ok := o.get(k.topic, k.partition); !ok || ov != v {
			eq = false
		}
	})
	return eq
}

// sortedEntries lists the entries by topic id then partition.
func (m assignmentEpochs) sortedEntries() []assignmentEpoch {
	if m.m == nil {
		return m.sorted
	}
	out := make([]assignmentEpoch, 0, len(m.m))
	for k, v := range m.m {
		out = append(out, assignmentEpoch{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return tpLess(out[i].tpKey, out[j].tpKey) })
	return out
}

// cgCurrentVersion is the ConsumerGroupCurrentMemberAssignment value version to write: 1 when
// the member has assignment epochs (appended after the partitions pending revocation), else 0
// (the layout before KIP-1251).
func cgCurrentVersion(c *consumerCurrent) int16 {
	if c.epochs.len() > 0 {
		return 1
	}
	return 0
}

// encAssignmentEpochs appends value version 1's field AssignmentEpochs:
// [TopicId uuid, Partition int32, Epoch int32] sorted by topic id and partition. Nothing for
// version 0.
func encAssignmentEpochs(e *Enc, c *consumerCurrent) {
	if cgCurrentVersion(c) == 0 {
		return
	}
	es := c.epochs.sortedEntries()
	e.ArrayLen(len(es))
	for _, x := range es {
		e.UUID(x.topic)
		e.Int32(x.partition)
		e.Int32(x.epoch)
	}
}

// decAssignmentEpochs reads value version 1's AssignmentEpochs field.
func decAssignmentEpochs(d *Dec) assignmentEpochs {
	n := d.ArrayLen(24)
	if n <= 0 {
		return assignmentEpochs{}
	}
	out := make([]assignmentEpoch, 0, n)
	ordered := true
	for i := 0; i < n && d.Err() == nil; i++ {
		e := assignmentEpoch{tpKey: tpKey{d.UUID(), d.Int32()}}
		e.epoch = d.Int32()
		if len(out) > 0 && !tpLess(out[len(out)-1].tpKey, e.tpKey) {
			ordered = false
		}
		out = append(out, e)
	}
	if !ordered { // not written by encAssignmentEpochs: the last entry of a partition wins
		var m assignmentEpochs
		for _, e := range out {
			m.set(e.topic, e.partition, e.epoch)
		}
		return assignmentEpochs{sorted: m.sortedEntries()}
	}
	return assignmentEpochs{sorted: out}
}
