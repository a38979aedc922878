package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// segment is one log segment (Kafka's LogSegment): the batches from base up to the next
// segment's base. muster stores batches one key each, so a segment is only a range of offsets
// with statistics; the log cleaner compacts whole sealed segments and never the active one (the
// last), and segment.bytes / segment.ms decide when the active segment is sealed (rolled).
//
// A sealed segment is stored under 'd' 'm' topicID partition base with its statistics (written
// in the same Pebble batch as the append that rolled it, rewritten by the cleaner when it merges
// segments); the active segment is not stored: on Open it starts at the last sealed segment's
// end and its statistics are recomputed from its batches.
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
// segment. It returns the sealed segment's key and value for the append's Pebble batch (nil
// when no roll happened).
func (p *partition) maybeRoll(lc *logConfig, size, maxTs int64, lastDelta int32, nowMs int64) (key, val []byte) {
	act := p.active()
	base := p.next
	if act.bytes > 0 {
		waited := nowMs - act.createdMs
		if act.rollTs >= 0 {
			waited = maxTs - act.rollTs
		}
		if act.bytes > lc.segmentBytes-size || waited > lc.segmentMs || base+int64(lastDelta)-act.base > math.MaxInt32 {
			act.next = base
			key, val = segmentKey(p.topicID, p.index, act.base), act.encode()
			p.segs = append(p.segs, newActiveSegment(base, nowMs))
			act = p.active()
		}
	}
	act.addBatch(size, maxTs)
	return key, val
}

// segmentsBelow returns how many leading sealed segments lie wholly below offset and the keys
// to delete for them (p.mu held).
func (p *partition) segmentsBelow(offset int64) (n int, keys [][]byte) {
	for n < len(p.segs)-1 && p.segs[n+1].base <= offset {
		keys = append(keys, segmentKey(p.topicID, p.index, p.segs[n].base))
		n++
	}
	return n, keys
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

// loadSegments rebuilds part's segments after its offsets were loaded: the sealed segments from
// their keys (dropping those wholly below the log start) and the active segment's statistics
// from its batches. A log written before segments existed is one active segment.
func (p *Plane) loadSegments(part *partition, nowMs int64) error {
	prefix := partPrefix(kindSegment, part.topicID, part.index)
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	var stale [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			stale = append(stale, append([]byte(nil), k...))
			continue
		}
		base := int64(binary.BigEndian.Uint64(k[len(prefix):]))
		s, ok := decodeSegment(base, it.Value())
		if !ok || s.next <= part.logStart || s.next > part.next {
			stale = append(stale, append([]byte(nil), k...))
			continue
		}
		if n := len(part.segs); n > 0 && part.segs[n-1].next > base {
			stale = append(stale, append([]byte(nil), k...)) // overlaps its predecessor
			continue
		}
		part.segs = append(part.segs, s)
	}
	if err := it.Close(); err != nil {
		return err
	}
	activeBase := part.logStart
	if n := len(part.segs); n > 0 {
		activeBase = part.segs[n-1].next
	} else if h, ok, err := p.firstBatch(part); err != nil {
		return err
	} else if ok {
		activeBase = min(h.BaseOffset, part.logStart)
	}
	act := newActiveSegment(activeBase, nowMs)
	err = p.scanRange(part.topicID, part.index, activeBase, part.next, func(v []byte, h batchHeader) bool {
		act.addBatch(int64(len(v)), h.MaxTimestamp)
		return true
	})
	if err != nil {
		return err
	}
	part.segs = append(part.segs, act)
	if len(stale) > 0 {
		b := p.db.NewBatch()
		for _, k := range stale {
			_ = b.Delete(k, nil)
		}
		err := p.commit(diskguard.Retention, func() error { return b.Commit(pebble.Sync) })
		_ = b.Close()
		switch {
		case errors.Is(err, diskguard.ErrRefused) || errors.Is(err, diskguard.ErrStoreFailed):
			p.log.Warn("data: stale segment records kept (dropped at a later start)", "err", err)
		case err != nil:
			return fmt.Errorf("data: drop stale segments: %w", err)
		}
	}
	return nil
}

// firstBatch returns the header of part's first stored batch.
func (p *Plane) firstBatch(part *partition) (batchHeader, bool, error) {
	prefix := partPrefix(kindLog, part.topicID, part.index)
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return batchHeader{}, false, err
	}
	defer it.Close()
	if !it.First() {
		return batchHeader{}, false, it.Error()
	}
	h, ok := readBatchHeader(it.Value())
	return h, ok, nil
}

// scanRange calls fn for every stored batch of a partition whose base offset is in [from, to),
// in order, until fn returns false.
func (p *Plane) scanRange(id [16]byte, index int32, from, to int64, fn func(v []byte, h batchHeader) bool) error {
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: logKey(id, index, max(from, 0)), UpperBound: logKey(id, index, to)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		h, hok := readBatchHeader(it.Value())
		if !hok {
			continue
		}
		if !fn(it.Value(), h) {
			break
		}
	}
	return it.Error()
}
