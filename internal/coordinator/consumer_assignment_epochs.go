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
// older member epoch may commit the partition.
type assignmentEpochs map[tpKey]int32

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

func (m *assignmentEpochs) set(t [16]byte, p int32, epoch int32) {
	if *m == nil {
		*m = assignmentEpochs{}
	}
	(*m)[tpKey{t, p}] = epoch
}

// get returns the assignment epoch of t/p and whether it is known.
func (m assignmentEpochs) get(t [16]byte, p int32) (int32, bool) {
	e, ok := m[tpKey{t, p}]
	return e, ok
}

// restrict returns the entries of the partitions in a (a new map; nil when none).
func (m assignmentEpochs) restrict(a topicPartitions) assignmentEpochs {
	var out assignmentEpochs
	for t, ps := range a {
		for _, p := range ps {
			if e, ok := m[tpKey{t, p}]; ok {
				out.set(t, p, e)
			}
		}
	}
	return out
}

// merge adds o's entries to m (a new map; nil when both are empty).
func (m assignmentEpochs) merge(o assignmentEpochs) assignmentEpochs {
	var out assignmentEpochs
	for _, src := range []assignmentEpochs{m, o} {
		for k, v := range src {
			out.set(k.topic, k.partition, v)
		}
	}
	return out
}

func (m assignmentEpochs) equal(o assignmentEpochs) bool {
	if len(m) != len(o) {
		return false
	}
	for k, v := range m {
		if ov, ok := o[k]; !ok || ov != v {
			return false
		}
	}
	return true
}

// sortedKeys lists the partitions by topic id then partition.
func (m assignmentEpochs) sortedKeys() []tpKey {
	out := make([]tpKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if c := bytes.Compare(out[i].topic[:], out[j].topic[:]); c != 0 {
			return c < 0
		}
		return out[i].partition < out[j].partition
	})
	return out
}

// cgCurrentVersion is the ConsumerGroupCurrentMemberAssignment value version to write: 1 when
// the member has assignment epochs (appended after the partitions pending revocation), else 0
// (the layout before KIP-1251).
func cgCurrentVersion(c *consumerCurrent) int16 {
	if len(c.epochs) > 0 {
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
	keys := c.epochs.sortedKeys()
	e.ArrayLen(len(keys))
	for _, k := range keys {
		e.UUID(k.topic)
		e.Int32(k.partition)
		e.Int32(c.epochs[k])
	}
}

// decAssignmentEpochs reads value version 1's AssignmentEpochs field.
func decAssignmentEpochs(d *Dec) assignmentEpochs {
	n := d.ArrayLen(24)
	var out assignmentEpochs
	if n > 0 {
		out = make(assignmentEpochs, n)
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		t := d.UUID()
		p := d.Int32()
		out.set(t, p, d.Int32())
	}
	return out
}
