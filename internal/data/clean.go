package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/spaolacci/murmur3"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// errCleaningAborted stops a cleaning whose log changed under it (DeleteRecords or retention
// moved the log start, the topic was deleted, the plane is closing); what was committed stays
// valid and the next round starts again from the checkpoint.
var errCleaningAborted = errors.New("data: log cleaning aborted")

// cleanChunkBytes bounds the bytes one cleaner commit rewrites: a segment group is committed in
// several Pebble batches, each atomic, so a crash leaves every batch either as it was or
// rewritten, never half-written.
var cleanChunkBytes = 4 << 20

// testHookCleanCommit, when set, runs before each cleaner commit; an error aborts the cleaning
// there (tests model a crash with it).
var testHookCleanCommit func() error

// keyHash identifies a record key in the offset map (128 bits, as Kafka's SkimpyOffsetMap uses
// an MD5 of the key).
type keyHash [2]uint64

func hashKey(k []byte) keyHash {
	h1, h2 := murmur3.Sum128(k)
	return keyHash{h1, h2}
}

// offsetMap is the cleaner's key → latest offset map over the dirty section (Kafka's
// OffsetMap), bounded by its share of log.cleaner.dedupe.buffer.size.
type offsetMap struct {
	m      map[keyHash]int64
	limit  int
	latest int64 // the last offset the map covers
}

func (m *offsetMap) full() bool { return len(m.m) >= m.limit }

// cleanStats are one cleaning's counts (Kafka's CleanerStats).
type cleanStats struct {
	bytesRead, bytesWritten     int64
	recordsRead, recordsWritten int64
	batchesRemoved              int64
}

// cleanJob is one partition chosen for cleaning, with the state it was chosen in (Kafka's
// LogToClean).
type cleanJob struct {
	t    *topic
	part *partition
	lc   *logConfig
	// firstDirty is the first offset not yet cleaned; firstUncleanable the first offset this
	// round may not clean (the active segment, the high watermark, min.compaction.lag.ms), always
	// a segment base.
	firstDirty, firstUncleanable int64
	cleanBytes, cleanableBytes   int64
	ratio                        float64
	needNow                      bool // max.compaction.lag.ms passed for some dirty segment
	logStart                     int64
	segs                         []segment
	// producers maps each producer with state in the partition to the last offset of its last
	// batch: that batch is kept (possibly emptied) so its sequence survives.
	producers map[int64]int64
	// aborted are the partition's aborted transactions: their batches are removed, and the
	// cleaning round tracks which transactions still have batches (Kafka's
	// CleanedTransactionMetadata) to know when a marker may go.
	aborted []abortedTxn
	txn     cleanedTxns
}

// cleanedTxns is the transaction state of one cleaning pass over the log, in offset order
// (Kafka's CleanedTransactionMetadata): the producers whose current committed or aborted
// transaction had a batch since its start. A marker whose transaction has no batch left may
// go once its delete horizon passed.
type cleanedTxns struct {
	committed map[int64]bool
	aborted   map[int64]bool
}

// onBatch records a transactional data batch and reports whether it is aborted.
func (c *cleanedTxns) onBatch(j *cleanJob, h batchHeader) bool {
	if h.Attributes&attrTransactional == 0 || h.ProducerID < 0 {
		return false
	}
	if c.committed == nil {
		c.committed, c.aborted = map[int64]bool{}, map[int64]bool{}
	}
	if abortedContains(j.aborted, h.ProducerID, h.BaseOffset) {
		c.aborted[h.ProducerID] = true
		return true
	}
	c.committed[h.ProducerID] = true
	return false
}

// onMarker records a control batch and reports whether it may be discarded: its transaction
// left no batch in the log (an empty control batch was cleaned already).
func (c *cleanedTxns) onMarker(v []byte, h batchHeader) bool {
	typ, ok := markerType(v, h)
	if !ok {
		return true
	}
	var seen bool
	switch typ {
	case 0: // ABORT
		seen = c.aborted[h.ProducerID]
		delete(c.aborted, h.ProducerID)
	case 1: // COMMIT
		seen = c.committed[h.ProducerID]
		delete(c.committed, h.ProducerID)
	default:
		return false
	}
	return !seen
}

// cleanPartition compacts j's log with Kafka's Cleaner rules: build the key → offset map over
// the dirty section [firstDirty, firstUncleanable), then rewrite every segment below the
// mapped end, grouped up to segment.bytes, keeping a record only if it is the latest of its key
// (and, for a tombstone, its delete horizon has not passed). Offsets never change: batches keep
// their base offset and last offset delta; a batch emptied of records is deleted unless it is a
// producer's last batch or the last batch of the round, which stay as empty batches. The first
// cleaning that keeps a tombstone stamps its batch's delete horizon (now + delete.retention.ms).
// The checkpoint moves to the end of the mapped range.
func (p *Plane) cleanPartition(j *cleanJob, nowMs int64, mapLimit int) (cleanStats, error) {
	var st cleanStats
	om := &offsetMap{m: make(map[keyHash]int64), limit: max(mapLimit, 1), latest: -1}
	if err := p.buildOffsetMap(j, om); err != nil {
		return st, err
	}
	end := om.latest + 1
	if end <= j.firstDirty {
		return st, nil
	}
	for _, g := range groupSegments(j.segs, end, j.lc.segmentBytes) {
		if err := p.cleanGroup(j, g, om, nowMs, &st); err != nil {
			return st, err
		}
	}
	b := p.db.NewBatch()
	_ = b.Set(cleanerCheckpointKey(j.t.id, j.part.index), binary.BigEndian.AppendUint64(nil, uint64(end)), nil)
	err := p.commitClean(j, b, pebble.Sync)
	_ = b.Close()
	if err != nil {
		return st, err
	}
	j.part.mu.Lock()
	j.part.firstDirty = end
	j.part.mu.Unlock()
	return st, nil
}

// buildOffsetMap maps each key of the dirty section to its latest offset, segment by segment
// until the map is full (Kafka's buildOffsetMap): om.latest ends at the last offset covered.
func (p *Plane) buildOffsetMap(j *cleanJob, om *offsetMap) error {
	segs := j.segs
	start := segmentContaining(segs, j.firstDirty)
	for i := start; i < len(segs) && segs[i].base < j.firstUncleanable; i++ {
		segEnd := j.firstUncleanable
		if i+1 < len(segs) {
			segEnd = min(segs[i+1].base, segEnd)
		}
		full := false
		var ferr error
		err := p.scanRange(j.t.id, j.part.index, segs[i].base, segEnd, func(v []byte, h batchHeader) bool {
			aborted := h.Attributes&attrTransactional != 0 && h.ProducerID >= 0 && abortedContains(j.aborted, h.ProducerID, h.BaseOffset)
			if h.Attributes&attrControl == 0 && !aborted { // aborted records never enter the map
				recs, err := decompress(h.Attributes&attrCompressionMask, v[batchHeaderSize:h.size()], maxDecompressedBatch)
				if err != nil {
					ferr = fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
					return false
				}
				err = readRecords(recs, h.NumRecords, func(r *rawRecord) bool {
					off := h.BaseOffset + int64(r.offsetDelta)
					if r.key != nil && off >= j.firstDirty {
						if om.full() {
							full = true
							return false
						}
						om.m[hashKey(r.key)] = off
					}
					return true
				})
				if err != nil {
					ferr = fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
					return false
				}
				if full {
					return false
				}
			}
			if h.lastOffset() >= j.firstDirty {
				om.latest = max(om.latest, h.lastOffset())
			}
			return true
		})
		if err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		if full {
			return nil
		}
		om.latest = max(om.latest, segEnd-1) // a gap at the segment's end is covered too
		select {
		case <-p.closing:
			return errCleaningAborted
		default:
		}
	}
	return nil
}

// segGroup is a run of segments cleaned into one (Kafka's groupSegmentsBySize).
type segGroup struct{ first, last int } // indexes into cleanJob.segs, inclusive

// groupSegments groups the segments that start below end into runs of at most maxBytes (the
// pre-cleaning sizes) whose offsets span at most 2^31, so cleaning does not leave ever smaller
// segments behind.
func groupSegments(segs []segment, end, maxBytes int64) []segGroup {
	var out []segGroup
	for i := 0; i < len(segs)-1 && segs[i].base < end; {
		g := segGroup{first: i, last: i}
		size := segs[i].bytes
		for g.last+1 < len(segs)-1 && segs[g.last+1].base < end &&
			size+segs[g.last+1].bytes <= maxBytes &&
			segs[g.last+1].next-1-segs[i].base <= math.MaxInt32 {
			g.last++
			size += segs[g.last].bytes
		}
		out = append(out, g)
		i = g.last + 1
	}
	return out
}

// cleanGroup rewrites the batches of the segments of g and merges them into one segment.
func (p *Plane) cleanGroup(j *cleanJob, g segGroup, om *offsetMap, nowMs int64, st *cleanStats) error {
	first, last := j.segs[g.first], j.segs[g.last]
	merged := segment{base: first.base, next: last.next, rollTs: -1, largestTs: -1, createdMs: first.createdMs}
	b := p.db.NewBatch()
	defer func() { _ = b.Close() }()
	flush := func(final bool) error {
		if b.Empty() && !final {
			return nil
		}
		opts := pebble.NoSync
		if final {
			opts = pebble.Sync
		}
		err := p.commitClean(j, b, opts)
		b.Reset()
		return err
	}
	var ferr error
	err := p.scanRange(j.t.id, j.part.index, first.base, last.next, func(v []byte, h batchHeader) bool {
		st.bytesRead += int64(len(v))
		out, err := cleanBatch(j, v, h, om, nowMs, st)
		if err != nil {
			ferr = fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
			return false
		}
		key := logKey(j.t.id, j.part.index, h.BaseOffset)
		switch {
		case out == nil:
			_ = b.Delete(key, nil)
			st.batchesRemoved++
		default:
			if len(out) != len(v) || &out[0] != &v[0] {
				_ = b.Set(key, out, nil)
			}
			oh, _ := readBatchHeader(out)
			if merged.bytes == 0 {
				merged.rollTs = oh.MaxTimestamp
			}
			merged.bytes += int64(len(out))
			merged.largestTs = max(merged.largestTs, oh.MaxTimestamp)
			st.bytesWritten += int64(len(out))
		}
		if b.Len() >= cleanChunkBytes {
			if ferr = flush(false); ferr != nil {
				return false
			}
		}
		return true
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	for i := g.first + 1; i <= g.last; i++ {
		_ = b.Delete(segmentKey(j.t.id, j.part.index, j.segs[i].base), nil)
	}
	_ = b.Set(segmentKey(j.t.id, j.part.index, merged.base), merged.encode(), nil)
	if err := flush(true); err != nil {
		return err
	}
	j.part.mu.Lock()
	replaceSegments(j.part, first.base, last.base, merged)
	j.part.mu.Unlock()
	return nil
}

// replaceSegments replaces the sealed segments from base first to base last with merged (p.mu
// held), unless retention removed some of them meanwhile.
func replaceSegments(part *partition, first, last int64, merged segment) {
	i := segmentContaining(part.segs, first)
	if part.segs[i].base != first {
		return
	}
	k := i
	for k < len(part.segs)-1 && part.segs[k].base != last {
		k++
	}
	if part.segs[k].base != last || k == len(part.segs)-1 {
		return
	}
	segs := append(part.segs[:i:i], merged)
	part.segs = append(segs, part.segs[k+1:]...)
}

// commitClean commits a cleaner write if the log is still as the cleaning saw it: the topic
// exists and the log start has not moved (DeleteRecords and retention rewrite the same keys,
// serialized with the cleaner by the partition's logMu).
func (p *Plane) commitClean(j *cleanJob, b *pebble.Batch, opts *pebble.WriteOptions) error {
	j.t.life.RLock()
	defer j.t.life.RUnlock()
	if j.t.deleted {
		return errCleaningAborted
	}
	j.part.logMu.Lock()
	defer j.part.logMu.Unlock()
	j.part.mu.Lock()
	moved := j.part.logStart != j.logStart
	j.part.mu.Unlock()
	if moved {
		return errCleaningAborted
	}
	select {
	case <-p.closing:
		return errCleaningAborted
	default:
	}
	if testHookCleanCommit != nil {
		if err := testHookCleanCommit(); err != nil {
			return err
		}
	}
	if err := p.commit(diskguard.Compaction, func() error { return b.Commit(opts) }); err != nil {
		return err
	}
	pre := partPrefix(kindLog, j.part.topicID, j.part.index)
	p.cfg.Guard.Reclaim(pre, prefixEnd(pre)) // compacted at once while space is short
	return nil
}

// cleanBatch filters one stored batch (Kafka's LogCleaner.cleanInto with its RecordFilter and
// MemoryRecords.filterTo). It returns v itself when the batch stays unchanged, a rewritten or
// empty batch, or nil when the batch goes.
func cleanBatch(j *cleanJob, v []byte, h batchHeader, om *offsetMap, nowMs int64, st *cleanStats) ([]byte, error) {
	horizonSet := h.Attributes&attrDeleteHorizon != 0
	retainEmpty := false
	if h.ProducerID >= 0 {
		if lastOff, ok := j.producers[h.ProducerID]; ok && lastOff == h.lastOffset() {
			retainEmpty = true // the producer's last batch keeps its sequence
		}
	}
	if h.lastOffset()+1 == j.firstUncleanable {
		retainEmpty = true // the round's last batch keeps the log's end
	}
	if h.Attributes&attrControl != 0 {
		return cleanMarker(j, v, h, om, nowMs, retainEmpty)
	}
	if j.txn.onBatch(j, h) {
		// An aborted transaction's batch: its records go (Kafka discards the batch's records).
		st.recordsRead += int64(h.NumRecords)
		if retainEmpty {
			return emptyBatch(h), nil
		}
		return nil, nil
	}
	section := v[batchHeaderSize:h.size()]
	codec := h.Attributes & attrCompressionMask
	recs, err := decompress(codec, section, maxDecompressedBatch)
	if err != nil {
		return nil, err
	}
	logAppend := h.Attributes&attrLogAppendTime != 0
	var kept []keptRecord
	all, tombstones := true, false
	err = readRecords(recs, h.NumRecords, func(r *rawRecord) bool {
		st.recordsRead++
		off := h.BaseOffset + int64(r.offsetDelta)
		keep := off > om.latest // not mapped yet: not cleanable this round
		if !keep && r.key != nil {
			latest, ok := om.m[hashKey(r.key)]
			keep = (!ok || off >= latest) && (r.hasValue || !horizonSet || nowMs < h.FirstTimestamp)
		}
		if !keep {
			all = false
			return true
		}
		ts := h.FirstTimestamp + r.tsDelta
		if logAppend {
			ts = h.MaxTimestamp
		}
		kept = append(kept, keptRecord{r: *r, ts: ts})
		tombstones = tombstones || !r.hasValue
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(kept) == 0 {
		if retainEmpty {
			return emptyBatch(h), nil
		}
		return nil, nil
	}
	st.recordsWritten += int64(len(kept))
	needHorizon := tombstones && !horizonSet
	if all && !needHorizon {
		return v, nil
	}
	horizon := int64(-1)
	switch {
	case needHorizon:
		horizon = nowMs + j.lc.deleteRetentionMs
	case horizonSet:
		horizon = h.FirstTimestamp
	}
	return rebuildBatch(h, kept, horizon, codec == codecSnappy && isXerial(section))
}

// cleanMarker applies Kafka's rules to a transaction marker (LogCleaner.cleanInto's
// checkBatchRetention): a marker whose transaction still has batches in the log stays; one
// whose transaction left none is stamped with a delete horizon (now + delete.retention.ms) the
// first time, and removed once the horizon passed, unless it must stay as the round's last batch.
// Markers past the mapped range are not cleanable yet.
func cleanMarker(j *cleanJob, v []byte, h batchHeader, om *offsetMap, nowMs int64, retainEmpty bool) ([]byte, error) {
	discardable := j.txn.onMarker(v, h)
	if !discardable || h.BaseOffset > om.latest {
		return v, nil
	}
	if h.Attributes&attrDeleteHorizon != 0 {
		if nowMs < h.FirstTimestamp {
			return v, nil
		}
		if retainEmpty {
			return emptyBatch(h), nil
		}
		return nil, nil
	}
	var kept []keptRecord
	if h.NumRecords > 0 {
		err := readRecords(v[batchHeaderSize:h.size()], h.NumRecords, func(r *rawRecord) bool {
			kept = append(kept, keptRecord{r: *r, ts: h.FirstTimestamp + r.tsDelta})
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return rebuildBatch(h, kept, nowMs+j.lc.deleteRetentionMs, false)
}
