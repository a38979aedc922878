package data

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
)

// What KIP-932 share fetches need of a partition log (Kafka's ReplicaManager as
// SharePartitionManager and DelayedShareFetch use it): its offsets, its stored batches over an
// offset range, a wake-up when its high watermark moves, and the offset of a timestamp (the
// share.auto.offset.reset=by_duration start). Partitions are named by topic id.

// part finds a partition by topic id: UNKNOWN_TOPIC_ID for an unknown topic,
// UNKNOWN_TOPIC_OR_PARTITION for an index out of range.
func (p *Plane) partByID(id [16]byte, index int32) (*topic, *partition, error) {
	t, parts := p.lookupID(id)
	if t == nil {
		return nil, nil, kerr.UnknownTopicID
	}
	if index < 0 || int(index) >= len(parts) {
		return nil, nil, kerr.UnknownTopicOrPartition
	}
	return t, parts[index], nil
}

// PartitionOffsets returns a partition's log start offset and high watermark.
func (p *Plane) PartitionOffsets(id [16]byte, index int32) (logStart, hw int64, err error) {
	_, part, err := p.partByID(id, index)
	if err != nil {
		return 0, 0, err
	}
	logStart, hw = part.offsets()
	return logStart, hw, nil
}

// ReadRange returns the stored batches of a partition that hold offsets in [from, to] (the batch
// containing from first), below the high watermark, at most maxBytes unless the first batch alone
// is larger (it is returned whole, as KIP-74 returns the first batch of a fetch).
func (p *Plane) ReadRange(id [16]byte, index int32, from, to int64, maxBytes int) ([]byte, error) {
	_, part, err := p.partByID(id, index)
	if err != nil {
		return nil, err
	}
	_, hw := part.offsets()
	if to >= hw {
		to = hw - 1
	}
	if from > to {
		return nil, nil
	}
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: partPrefix(kindLog, id, index), UpperBound: logKey(id, index, to+1)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	// A share fetch usually starts at a batch's base offset (records are acquired in order):
	// try that first, as a forward seek is cheaper than a backward one.
	ok := it.SeekGE(logKey(id, index, from))
	aligned := false
	if ok {
		h, hok := readBatchHeader(it.Value())
		aligned = hok && h.BaseOffset == from
	}
	if !aligned {
		ok = it.SeekLT(logKey(id, index, from+1))
		if ok {
			if h, hok := readBatchHeader(it.Value()); !hok || h.lastOffset() < from {
				ok = it.Next()
			}
		} else {
			ok = it.SeekGE(logKey(id, index, from))
		}
	}
	var out []byte
	for ; ok; ok = it.Next() {
		v := it.Value()
		if len(out) > 0 && len(out)+len(v) > maxBytes {
			break
		}
		out = append(out, v...)
	}
	return out, it.Error()
}

// WatchPartition makes ch receive (without blocking) whenever the partition's high watermark
// moves; cancel stops it. A partition that does not exist is never watched (cancel is a no-op).
func (p *Plane) WatchPartition(id [16]byte, index int32, ch chan struct{}) (cancel func()) {
	_, part, err := p.partByID(id, index)
	if err != nil {
		return func() {}
	}
	part.addWaiter(ch)
	return func() { part.removeWaiter(ch) }
}

// OffsetForTimestamp returns the first offset whose record's timestamp is at or after ts (the
// high watermark when there is none), as ListOffsets does.
func (p *Plane) OffsetForTimestamp(id [16]byte, index int32, ts int64) (int64, error) {
	t, part, err := p.partByID(id, index)
	if err != nil {
		return 0, err
	}
	logStart, hw := part.offsets()
	off, _, err := p.offsetForTimestamp(t, part, logStart, hw, ts)
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return hw, nil
	}
	return off, nil
}
