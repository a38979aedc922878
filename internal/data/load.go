package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// loadPartition reads part's end state from the store: its log start and end offsets (the
// high watermark is the end: every stored batch is durable), its segments, the cleaner's
// checkpoint, the idempotent producers and the transactions. State keys that no longer
// describe the log (older producer epochs, expired producers, segments past the log) are
// deleted. A leader calls it before it takes writes, so no acknowledged record is lost and no
// offset is reused.
func (p *Plane) loadPartition(t *topic, part *partition) error {
	id := PartitionID{t.id, part.index}
	nowMs := p.cfg.Now().UnixMilli()
	err := p.st.State(id, stateLogStart, func(_, v []byte) error {
		if len(v) == 8 {
			part.logStart = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("data: load partition %d: %w", part.index, err)
	}
	first, end, any, err := p.st.Bounds(id)
	if err != nil {
		return fmt.Errorf("data: load partition %d: %w", part.index, err)
	}
	part.next = max(part.logStart, end)
	part.hw = part.next
	var stale []StateOp
	if stale, err = p.loadSegments(id, part, first, any, nowMs); err != nil {
		return fmt.Errorf("data: load partition %d segments: %w", part.index, err)
	}
	err = p.st.State(id, stateCleaner, func(_, v []byte) error {
		if len(v) == 8 {
			part.firstDirty = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("data: load partition %d cleaner checkpoint: %w", part.index, err)
	}
	if stale, err = p.loadProducers(id, part, nowMs, stale); err != nil {
		return fmt.Errorf("data: load producers: %w", err)
	}
	if stale, err = p.loadTxnState(id, part, nowMs, stale); err != nil {
		return fmt.Errorf("data: load transactions: %w", err)
	}
	if len(stale) == 0 {
		return nil
	}
	w := &LogWrite{Part: id, Epoch: part.epoch, Op: diskguard.Retention, State: stale}
	switch err := p.st.Write(w)(); {
	case errors.Is(err, diskguard.ErrRefused) || errors.Is(err, diskguard.ErrStoreFailed) || errors.Is(err, ErrFenced):
		p.log.Warn("data: stale partition state kept (dropped at a later load)", "topic", t.name, "partition", part.index, "err", err)
	case err != nil:
		return fmt.Errorf("data: drop stale state of partition %d: %w", part.index, err)
	}
	return nil
}

// loadSegments rebuilds part's segments after its offsets were loaded: the sealed segments
// from their keys (dropping those wholly below the log start) and the active segment's
// statistics from its batches. A log written before segments existed is one active segment.
// first is the base of the first stored batch (any: there is one).
func (p *Plane) loadSegments(id PartitionID, part *partition, first int64, any bool, nowMs int64) (stale []StateOp, err error) {
	part.segs = part.segs[:0]
	err = p.st.State(id, stateSegment, func(k, v []byte) error {
		if len(k) != 8 {
			stale = append(stale, StateOp{Kind: stateSegment, Key: append([]byte(nil), k...)})
			return nil
		}
		base := int64(binary.BigEndian.Uint64(k))
		s, ok := decodeSegment(base, v)
		if !ok || s.next <= part.logStart || s.next > part.next {
			stale = append(stale, StateOp{Kind: stateSegment, Key: append([]byte(nil), k...)})
			return nil
		}
		if n := len(part.segs); n > 0 && part.segs[n-1].next > base {
			stale = append(stale, StateOp{Kind: stateSegment, Key: append([]byte(nil), k...)}) // overlaps its predecessor
			return nil
		}
		part.segs = append(part.segs, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	activeBase := part.logStart
	if n := len(part.segs); n > 0 {
		activeBase = part.segs[n-1].next
	} else if any {
		activeBase = min(first, part.logStart)
	}
	act := newActiveSegment(activeBase, nowMs)
	bytes, firstTs, largestTs, err := p.st.Stats(id, activeBase, part.next)
	if err != nil {
		return nil, err
	}
	if bytes > 0 {
		act.bytes, act.rollTs, act.largestTs = bytes, firstTs, largestTs
	}
	part.segs = append(part.segs, act)
	return stale, nil
}

// loadProducers rebuilds part's idempotent-producer state from its producer keys: per producer
// the highest epoch's last five batches. Keys of older epochs, extra batches and producers that
// expired while the partition was not served are added to stale.
func (p *Plane) loadProducers(id PartitionID, part *partition, nowMs int64, stale []StateOp) ([]StateOp, error) {
	type entry struct {
		key      []byte
		epoch    int16
		appendMs int64
		b        producerBatch
	}
	expirationMs := p.producerIDExpiration().Milliseconds()
	var group []entry
	groupPID := int64(-1)
	drop := func(key []byte) { stale = append(stale, StateOp{Kind: stateProducer, Key: key}) }
	flush := func() {
		if len(group) == 0 {
			return
		}
		top := group[0].epoch
		for _, e := range group {
			top = max(top, e.epoch)
		}
		var keep []entry
		for _, e := range group {
			if e.epoch == top {
				keep = append(keep, e)
			} else {
				drop(e.key)
			}
		}
		if last := keep[len(keep)-1]; nowMs-last.appendMs >= expirationMs {
			for _, e := range keep {
				drop(e.key) // expired while the partition was not served
			}
			group = group[:0]
			return
		}
		if len(keep) > producerBatchesKept {
			for _, e := range keep[:len(keep)-producerBatchesKept] {
				drop(e.key)
			}
			keep = keep[len(keep)-producerBatchesKept:]
		}
		ps := newProducerState(top)
		for _, e := range keep {
			ps.batches = append(ps.batches, e.b)
			ps.lastAppend = max(ps.lastAppend, e.appendMs)
		}
		part.producers[groupPID] = ps
		group = group[:0]
	}
	err := p.st.State(id, stateProducer, func(k, v []byte) error {
		key := append([]byte(nil), k...)
		if len(k) != 16 || len(v) != 18 {
			drop(key)
			return nil
		}
		pid := int64(binary.BigEndian.Uint64(k))
		base := int64(binary.BigEndian.Uint64(k[8:]))
		if pid != groupPID {
			flush()
			groupPID = pid
		}
		epoch := int16(binary.BigEndian.Uint16(v[0:]))
		first := int32(binary.BigEndian.Uint32(v[2:]))
		delta := int32(binary.BigEndian.Uint32(v[6:]))
		appendMs := int64(binary.BigEndian.Uint64(v[10:]))
		group = append(group, entry{key: key, epoch: epoch, appendMs: appendMs, b: producerBatch{
			firstSeq: first, lastSeq: incSeq(first, delta), base: base, lastDelta: delta,
		}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush()
	return stale, nil
}

// loadTxnState rebuilds part's transactions from its open-transaction, aborted-transaction and
// marker keys (after its producers are loaded); aborted entries below the log start and markers
// of producers that expired meanwhile are added to stale.
func (p *Plane) loadTxnState(id PartitionID, part *partition, nowMs int64, stale []StateOp) ([]StateOp, error) {
	scan := func(kind byte, keyLen, valLen int, fn func(k, v []byte) bool) error {
		return p.st.State(id, kind, func(k, v []byte) error {
			if len(k) != keyLen || len(v) != valLen || !fn(k, v) {
				stale = append(stale, StateOp{Kind: kind, Key: append([]byte(nil), k...)})
			}
			return nil
		})
	}
	err := scan(stateOpenTxn, 8, 10, func(k, v []byte) bool {
		pid := int64(binary.BigEndian.Uint64(k))
		part.openTxns[pid] = &openTxn{first: int64(binary.BigEndian.Uint64(v)), epoch: int16(binary.BigEndian.Uint16(v[8:]))}
		return true
	})
	if err == nil {
		err = scan(stateAborted, 16, 8, func(k, v []byte) bool {
			last := int64(binary.BigEndian.Uint64(k))
			if last < part.logStart {
				return false
			}
			part.aborted = append(part.aborted, abortedTxn{pid: int64(binary.BigEndian.Uint64(k[8:])),
				first: int64(binary.BigEndian.Uint64(v)), last: last})
			return true
		})
	}
	expirationMs := p.producerIDExpiration().Milliseconds()
	if err == nil {
		err = scan(stateMarker, 8, 15, func(k, v []byte) bool {
			pid := int64(binary.BigEndian.Uint64(k))
			epoch := int16(binary.BigEndian.Uint16(v))
			ms := int64(binary.BigEndian.Uint64(v[7:]))
			ps := part.producers[pid]
			_, open := part.openTxns[pid]
			if ps == nil && !open && nowMs-ms >= expirationMs {
				return false // expired while the partition was not served
			}
			if ps == nil {
				ps = newProducerState(epoch)
				part.producers[pid] = ps
			}
			if epoch > ps.epoch {
				for _, b := range ps.batches {
					stale = append(stale, StateOp{Kind: stateProducer, Key: producerStateKey(pid, b.base)})
				}
				ps.batches, ps.epoch = nil, epoch
			}
			ps.coordEpoch = int32(binary.BigEndian.Uint32(v[2:]))
			ps.lastMarker, ps.lastMarkerEpoch = markerKind(v[6]), epoch
			ps.lastAppend = max(ps.lastAppend, ms)
			return true
		})
	}
	if err != nil {
		return nil, err
	}
	part.recomputeUnstable()
	sort.Slice(part.aborted, func(i, j int) bool { return part.aborted[i].last < part.aborted[j].last })
	return stale, nil
}
