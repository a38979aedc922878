package data

import (
	"encoding/binary"
	"math"
)

// segment is one log segment (Kafka's LogSegment): the batches from base up to the next
// segment's base. muster stores batches one key each, so a segment is only a range of offsets
// with statistics; the log cleaner compacts whole sealed segments and never the active one (the
// last), and segment.bytes / segment.ms decide when the active segment is sealed (rolled).
//
// A sealed segment is a state key of the partition (base → its statistics; Pebble: 'd' 'm'
// topicID partition base), written with the append that rolled it and rewritten by the cleaner
// when it merges segments; the active segment is not stored: on load it starts at the last
// sealed segment's end and its statistics are recomputed from its batches (LogStore.Stats).
type segment struct {
	base int64
	// next is one past the segment's offsets once it is sealed (the next segment's base).
	next int64
	// bytes is the stored size of the segment's batches. Retention or DeleteRecords cutting
	// into a segment leaves it an overestimate until the cleaner rewrites the segment.
	bytes int64
	// rollTs is the max timestamp of the segment's first batch (-1: none), Kafka's
	// rollingBasedTimestamp: segment.ms counts from it.
	rollTs int64
	// largestTs is the largest max timestamp of its batches (-1: none); min.compaction.lag.ms
	// keeps a segment uncleaned while it is recent.
	largestTs int64
	// createdMs is when the segment was created (or loaded): segment.ms counts from it when the
	// batches carry no timestamps.
	createdMs int64
}

const segmentValueLen = 40

func (s *segment) encode() []byte {
	v := make([]byte, segmentValueLen)
	be := binary.BigEndian
	be.PutUint64(v[0:], uint64(s.next))
	be.PutUint64(v[8:], uint64(s.bytes))
	be.PutUint64(v[16:], uint64(s.rollTs))
	be.PutUint64(v[24:], uint64(s.largestTs))
	be.PutUint64(v[32:], uint64(s.createdMs))
	return v
}

func decodeSegment(base int64, v []byte) (segment, bool) {
	if len(v) != segmentValueLen {
		return segment{}, false
	}
	be := binary.BigEndian
	s := segment{
		base:      base,
		next:      int64(be.Uint64(v[0:])),
		bytes:     int64(be.Uint64(v[8:])),
		rollTs:    int64(be.Uint64(v[16:])),
		largestTs: int64(be.Uint64(v[24:])),
		createdMs: int64(be.Uint64(v[32:])),
	}
	return s, s.next > base
}

func newActiveSegment(base, nowMs int64) segment {
	return segment{base: base, rollTs: -1, largestTs: -1, createdMs: nowMs}
}

// addBatch accounts one batch appended to s.
func (s *segment) addBatch(size, maxTs int64) {
	if s.bytes == 0 {
		s.rollTs = maxTs
	}
	s.bytes += size
	s.largestTs = max(s.largestTs, maxTs)
}

// active returns the active segment (p.mu held).
func (p *partition) active() *segment { return &p.segs[len(p.segs)-1] }

// maybeRoll applies Kafka's roll rules (LogSegment.shouldRoll) before a batch of size bytes,
// maximum timestamp maxTs and lastOffsetDelta lastDelta is appended at p.next (p.mu held): a
// non-empty active segment is sealed when the batch would take it past segment.bytes, when the
// batch's timestamp is segment.ms (for compacted topics at most max.compaction.lag.ms) past the
// segment's first batch (or, without timestamps, the segment is that old), or when its offsets
// would not fit the segment's 32-bit relative offsets. It then accounts the batch to the active
// segment. It returns the sealed segment's state key for the append's write (ok false when no
// roll happened).
func (p *partition) maybeRoll(lc *logConfig, size, maxTs int64, lastDelta int32, nowMs int64) (seal StateOp, ok bool) {
	act := p.active()
	base := p.next
	if act.bytes > 0 {
		waited := nowMs - act.createdMs
		if act.rollTs >= 0 {
			waited = maxTs - act.rollTs
		}
		if act.bytes > lc.segmentBytes-size || waited > lc.segmentMs || base+int64(lastDelta)-act.base > math.MaxInt32 {
			act.next = base
			seal, ok = StateOp{Kind: stateSegment, Key: offsetStateKey(act.base), Value: act.encode()}, true
			p.segs = append(p.segs, newActiveSegment(base, nowMs))
			act = p.active()
		}
	}
	act.addBatch(size, maxTs)
	return seal, ok
}

// segmentsBelow returns how many leading sealed segments lie wholly below offset and the state
// deletions of their keys (p.mu held).
func (p *partition) segmentsBelow(offset int64) (n int, dels []StateOp) {
	for n < len(p.segs)-1 && p.segs[n+1].base <= offset {
		dels = append(dels, StateOp{Kind: stateSegment, Key: offsetStateKey(p.segs[n].base)})
		n++
	}
	return n, dels
}

// dropSegments removes the n leading sealed segments after their keys were deleted, and resets
// the active segment when the log start reached the log end (p.mu held).
func (p *partition) dropSegments(n int, nowMs int64) {
	if n > 0 {
		p.segs = append(p.segs[:0:0], p.segs[n:]...)
	}
	if p.logStart >= p.next && len(p.segs) == 1 {
		p.segs[0] = newActiveSegment(p.logStart, nowMs)
	}
}

// segmentContaining returns the index of the segment holding offset (the last one whose base is
// at most offset; 0 when offset precedes them all).
func segmentContaining(segs []segment, offset int64) int {
	i := 0
	for i+1 < len(segs) && segs[i+1].base <= offset {
		i++
	}
	return i
}

// scanRange calls fn for every stored batch of a partition whose base offset is in [from, to),
// in order, until fn returns false.
func (p *Plane) scanRange(id [16]byte, index int32, from, to int64, fn func(v []byte, h batchHeader) bool) error {
	return p.st.Read(PartitionID{id, index}, from, to, func(v []byte) bool {
		h, ok := readBatchHeader(v)
		if !ok || h.BaseOffset < from {
			return true
		}
		return fn(v, h)
	})
}
