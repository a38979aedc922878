package data

import (
	"encoding/binary"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// retentionLimits are one topic's effective retention.ms and retention.bytes
// (-1 = unlimited) and whether retention applies at all (cleanup.policy
// includes "delete").
type retentionLimits struct {
	ms, bytes int64
	delete    bool
}

func retentionOf(t *topic) retentionLimits {
	lc := t.logConfig()
	return retentionLimits{ms: lc.retentionMs, bytes: lc.retentionBytes, delete: lc.delete}
}

// retentionLoop enforces retention every RetentionCheckInterval until Close.
func (p *Plane) retentionLoop() {
	defer close(p.retentionDone)
	tick := time.NewTicker(p.cfg.RetentionCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-p.closing:
			return
		case <-tick.C:
			p.EnforceRetention()
		}
	}
}

// EnforceRetention applies every topic's retention now (Config.Now) and
// returns the number of batches deleted. Kafka's rules at batch rather than
// segment granularity: from the log start, whole batches whose max timestamp
// is more than retention.ms old are deleted, stopping at the first younger
// one; then, while the partition's stored bytes exceed retention.bytes by at
// least the next batch's size, that batch is deleted. The log start offset
// advances past the deleted batches (fetches below it get
// OFFSET_OUT_OF_RANGE). Topics whose cleanup.policy lacks "delete" are
// skipped (the log cleaner compacts them). Retention works on batches, not
// segments: a batch goes as soon as it is past the limit, where Kafka waits
// for its whole segment to be; every batch may go, the log end offset is
// kept.
// A batch whose max timestamp is negative (no timestamps) stops time-based
// deletion there. Retention never passes the last stable offset (an open
// transaction's batches stay until its marker).
// It runs in the background every log.retention.check.interval.ms, and not
// at all while the store failed (it takes no writes).
func (p *Plane) EnforceRetention() int {
	if p.storeFailed() {
		return 0
	}
	now := p.cfg.Now().UnixMilli()
	deleted := 0
	for _, t := range p.sortedTopics() {
		r := retentionOf(t)
		if !r.delete || (r.ms < 0 && r.bytes < 0) {
			continue
		}
		p.mu.RLock()
		parts := t.parts
		p.mu.RUnlock()
		for _, part := range parts {
			n, err := p.retainPartition(t, part, r, now)
			if err != nil {
				p.log.Error("retention", "topic", t.name, "partition", part.index, "err", err)
			}
			if n > 0 {
				p.log.Info("retention deleted batches", "topic", t.name, "partition", part.index, "batches", n)
			}
			deleted += n
		}
	}
	return deleted
}

// retainPartition deletes part's batches beyond r and returns how many.
func (p *Plane) retainPartition(t *topic, part *partition, r retentionLimits, nowMs int64) (int, error) {
	// Retention stops at the last stable offset: the batches of an open transaction stay
	// until it is decided. Plan without the partition lock: batches below it do not change
	// (only DeleteRecords and this loop remove batches, re-checked below).
	_, _, hw := part.stableOffsets()
	var sizes []int
	var ends []int64 // one past each batch's last offset
	var expired int  // leading batches past retention.ms
	var total int64
	timeDone := r.ms < 0
	err := p.scanBatches(t.id, part.index, hw, func(v []byte, h batchHeader) bool {
		if !timeDone {
			// A batch without timestamps (max < 0) is kept: Kafka would
			// fall back to the segment file's mtime, which muster lacks.
			if h.MaxTimestamp >= 0 && nowMs-h.MaxTimestamp > r.ms {
				expired++
			} else {
				timeDone = true
			}
		}
		if r.bytes < 0 && timeDone {
			return false
		}
		sizes = append(sizes, len(v))
		ends = append(ends, h.lastOffset()+1)
		total += int64(len(v))
		return true
	})
	if err != nil {
		return 0, err
	}
	drop := expired
	if r.bytes >= 0 {
		rest := total
		for i := 0; i < drop; i++ {
			rest -= int64(sizes[i])
		}
		for drop < len(sizes) && rest-int64(sizes[drop]) >= r.bytes {
			rest -= int64(sizes[drop])
			drop++
		}
	}
	if drop == 0 {
		return 0, nil
	}
	moved, err := p.advanceLogStart(t, part, ends[drop-1])
	if !moved {
		return 0, err
	}
	return drop, err
}

// advanceLogStart deletes part's batches below newStart (a batch boundary)
// and moves the log start offset there unless it is already further
// (moved is false then).
func (p *Plane) advanceLogStart(t *topic, part *partition, newStart int64) (moved bool, err error) {
	t.life.RLock()
	defer t.life.RUnlock()
	if t.deleted {
		return false, nil
	}
	part.logMu.Lock()
	defer part.logMu.Unlock()
	part.mu.Lock()
	defer part.mu.Unlock()
	if newStart <= part.logStart || newStart > part.hw {
		return false, nil
	}
	if err := p.commitLogStart(t, part, newStart, newStart, diskguard.Retention); err != nil {
		return false, err
	}
	return true, nil
}

// commitLogStart durably deletes part's batches below cut and the sealed
// segments wholly below newStart, moves the log start offset to newStart and
// updates the partition (logMu and mu held). w is DeleteRecords or Retention:
// both are taken while the disk is short of space, and the deleted range is
// then compacted at once to give the space back.
func (p *Plane) commitLogStart(t *topic, part *partition, cut, newStart int64, w diskguard.Write) error {
	n, segKeys := part.segmentsBelow(newStart)
	b := p.db.NewBatch()
	_ = b.DeleteRange(logKey(t.id, part.index, 0), logKey(t.id, part.index, cut), nil)
	for _, k := range segKeys {
		_ = b.Delete(k, nil)
	}
	_ = b.Set(logStartKey(t.id, part.index), binary.BigEndian.AppendUint64(nil, uint64(newStart)), nil)
	// Aborted transactions whose marker is below the new start leave the index (Kafka drops
	// a segment's transaction index with the segment).
	_ = b.DeleteRange(partPrefix(kindAbortedTxn, t.id, part.index),
		binary.BigEndian.AppendUint64(partPrefix(kindAbortedTxn, t.id, part.index), uint64(newStart)), nil)
	err := p.commit(w, func() error { return b.Commit(pebble.Sync) })
	_ = b.Close()
	if err != nil {
		return err
	}
	p.cfg.Guard.Reclaim(logKey(t.id, part.index, 0), logKey(t.id, part.index, cut))
	part.logStart = newStart
	part.trimAbortedLocked()
	part.dropSegments(n, p.cfg.Now().UnixMilli())
	return nil
}
