package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// Transactions in the data plane (KIP-98): a transactional producer's first batch in a
// partition opens a transaction there (Kafka's ProducerStateEntry.currentTxnFirstOffset); the
// coordinator's COMMIT or ABORT marker (a control batch, which takes an offset) closes it. The
// last stable offset (LSO) is the first offset of the earliest open transaction, capped by the
// high watermark; read_committed fetches stop there. Aborted transactions are indexed (Kafka's
// TransactionIndex) so read_committed consumers can drop their records.
//
// Durable state, written in the Pebble batch of the append that changes it:
//
//	'd' 'o' topicID partition pid            → first offset (8) epoch (2): an open transaction,
//	                                           set with its first batch, deleted with its marker
//	'd' 'a' topicID partition last pid       → first offset (8): an aborted transaction, set with
//	                                           its ABORT marker (last = the marker's offset),
//	                                           deleted when the log start passes it
//	'd' 'e' topicID partition pid            → epoch (2) coordinator epoch (4) kind (1) time (8):
//	                                           the producer's last marker, which fences older
//	                                           epochs (a timed-out producer's late batches)

// openTxn is a producer's open transaction in a partition.
type openTxn struct {
	first int64
	epoch int16
	// closing is set while its marker's append is in flight: new batches of the producer open
	// a new transaction, but the LSO stays at first until the marker is durable.
	closing bool
}

// abortedTxn is one aborted transaction (Kafka's AbortedTxn): the producer and the offsets of
// its first batch and its ABORT marker.
type abortedTxn struct {
	pid         int64
	first, last int64
}

// recomputeUnstable sets firstUnstable from openTxns (p.mu held).
func (p *partition) recomputeUnstable() {
	p.firstUnstable = -1
	for _, t := range p.openTxns {
		if p.firstUnstable < 0 || t.first < p.firstUnstable {
			p.firstUnstable = t.first
		}
	}
}

// lsoLocked is the last stable offset (p.mu held): the first offset of the earliest open
// transaction, at most the high watermark and at least the log start (Kafka's
// UnifiedLog.lastStableOffset with maybeIncrementFirstUnstableOffset's clamp).
func (p *partition) lsoLocked() int64 {
	lso := p.hw
	if p.firstUnstable >= 0 && p.firstUnstable < lso {
		lso = max(p.firstUnstable, p.logStart)
	}
	return lso
}

// stableOffsets returns the log start offset, high watermark and last stable offset.
func (p *partition) stableOffsets() (logStart, hw, lso int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logStart, p.hw, p.lsoLocked()
}

// abortedIn returns the aborted transactions a read_committed fetch of [from, upper) must
// report: those whose marker is at or after from and whose first offset is below upper
// (Kafka's LocalLog.collectAbortedTransactions).
func (p *partition) abortedIn(from, upper int64) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	i := sort.Search(len(p.aborted), func(i int) bool { return p.aborted[i].last >= from })
	for ; i < len(p.aborted); i++ {
		a := p.aborted[i]
		if a.first < upper {
			at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			at.ProducerID, at.FirstOffset = a.pid, a.first
			out = append(out, at)
		}
	}
	return out
}

// abortedContains reports whether the batch of pid at offset belongs to one of the aborted
// transactions of list (ordered by marker offset).
func abortedContains(list []abortedTxn, pid, offset int64) bool {
	i := sort.Search(len(list), func(i int) bool { return list[i].last >= offset })
	for ; i < len(list); i++ {
		if a := list[i]; a.pid == pid && a.first <= offset {
			return true
		}
	}
	return false
}

// trimAbortedLocked drops the aborted transactions wholly below the log start (p.mu held).
func (p *partition) trimAbortedLocked() {
	n := 0
	for n < len(p.aborted) && p.aborted[n].last < p.logStart {
		n++
	}
	if n > 0 {
		p.aborted = append(p.aborted[:0:0], p.aborted[n:]...)
	}
}

// txnGuard is the verification guard of pid in p: the number of markers appended for it.
func (p *partition) txnGuard(pid int64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.producers[pid]; ps != nil {
		return ps.markers
	}
	return 0
}

func encodeOpenTxn(first int64, epoch int16) []byte {
	v := binary.BigEndian.AppendUint64(nil, uint64(first))
	return binary.BigEndian.AppendUint16(v, uint16(epoch))
}

func encodeProducerEpoch(epoch int16, coordEpoch int32, kind markerKind, ms int64) []byte {
	v := binary.BigEndian.AppendUint16(nil, uint16(epoch))
	v = binary.BigEndian.AppendUint32(v, uint32(coordEpoch))
	v = append(v, byte(kind))
	return binary.BigEndian.AppendUint64(v, uint64(ms))
}

// controlBatch builds the control batch of a transaction marker (Kafka's
// MemoryRecords.withEndTransactionMarker): one record whose key is ControlRecordKey (version 0,
// type 0 = ABORT, 1 = COMMIT) and whose value is EndTxnMarker (version 0, coordinator epoch),
// attributes control|transactional, base sequence -1.
func controlBatch(base int64, pid int64, epoch int16, coordEpoch int32, commit bool, nowMs int64) []byte {
	key := kmsg.NewControlRecordKey()
	if commit {
		key.Type = kmsg.ControlRecordKeyTypeCommit
	} else {
		key.Type = kmsg.ControlRecordKeyTypeAbort
	}
	val := kmsg.NewEndTxnMarker()
	val.CoordinatorEpoch = coordEpoch
	kb, vb := key.AppendTo(nil), val.AppendTo(nil)
	var body []byte
	body = append(body, 0)              // attributes
	body = binary.AppendVarint(body, 0) // timestamp delta
	body = binary.AppendVarint(body, 0) // offset delta
	body = binary.AppendVarint(body, int64(len(kb)))
	body = append(body, kb...)
	body = binary.AppendVarint(body, int64(len(vb)))
	body = append(body, vb...)
	body = binary.AppendVarint(body, 0) // headers
	rec := binary.AppendVarint(nil, int64(len(body)))
	rec = append(rec, body...)
	h := batchHeader{BaseOffset: base, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1}
	out := make([]byte, batchHeaderSize, batchHeaderSize+len(rec))
	writeBatchHeader(out, h, attrControl|attrTransactional, nowMs, nowMs, 1, len(rec))
	out = append(out, rec...)
	sealBatch(out)
	return out
}

// markerType reads the control record type of a control batch (0 abort, 1 commit); ok is
// false for an empty or undecodable control batch.
func markerType(v []byte, h batchHeader) (typ int16, ok bool) {
	if h.NumRecords < 1 {
		return 0, false
	}
	recs, err := decompress(h.Attributes&attrCompressionMask, v[batchHeaderSize:h.size()], maxDecompressedBatch)
	if err != nil {
		return 0, false
	}
	found := false
	_ = readRecords(recs, 1, func(r *rawRecord) bool {
		if len(r.key) >= 4 {
			typ, found = int16(binary.BigEndian.Uint16(r.key[2:])), true
		}
		return false
	})
	return typ, found
}

// AppendTxnMarker writes the COMMIT (commit) or ABORT marker of producer pid at epoch into a
// partition (Kafka's WriteTxnMarkers for a data partition: ProducerAppendInfo.appendEndTxnMarker)
// and answers once it is durable. The marker takes an offset; it closes the producer's open
// transaction there (an ABORT indexes it as aborted) and the last stable offset advances.
// Errors: UNKNOWN_TOPIC_OR_PARTITION; INVALID_PRODUCER_EPOCH when epoch is older than the
// producer's; TRANSACTION_COORDINATOR_FENCED when coordEpoch is older than the last marker's;
// KAFKA_STORAGE_ERROR. A re-sent marker (the same kind and epoch, with no transaction open) is
// acknowledged without a second append, so the coordinator's retries are idempotent.
func (p *Plane) AppendTxnMarker(topic string, partition int32, pid int64, epoch int16, coordEpoch int32, commit bool) *kerr.Error {
	t, parts := p.lookup(topic)
	if t == nil || partition < 0 || int(partition) >= len(parts) {
		return kerr.UnknownTopicOrPartition
	}
	return p.appendMarker(t, parts[partition], pid, epoch, coordEpoch, commit)
}

func (p *Plane) appendMarker(t *topic, part *partition, pid int64, epoch int16, coordEpoch int32, commit bool) *kerr.Error {
	t.life.RLock()
	defer t.life.RUnlock()
	if t.deleted {
		return kerr.UnknownTopicOrPartition
	}
	kind := markerAbort
	if commit {
		kind = markerCommit
	}
	now := p.cfg.Now().UnixMilli()
	lc := t.logConfig()

	part.mu.Lock()
	ps := part.producers[pid]
	switch {
	case ps != nil && epoch < ps.epoch:
		part.mu.Unlock()
		return kerr.InvalidProducerEpoch
	case ps != nil && coordEpoch < ps.coordEpoch:
		part.mu.Unlock()
		return kerr.TransactionCoordinatorFenced
	}
	ot := part.openTxns[pid]
	if ot != nil && ot.closing {
		ot = nil
	}
	if ot == nil && ps != nil && ps.lastMarker == kind && ps.lastMarkerEpoch == epoch && ps.coordEpoch == coordEpoch {
		part.mu.Unlock()
		return nil // a re-sent marker: nothing is open, the same marker is in the log
	}
	if ps == nil {
		ps = newProducerState(epoch)
		part.producers[pid] = ps
	}
	var forgotten []int64
	if epoch > ps.epoch {
		for _, b := range ps.batches {
			forgotten = append(forgotten, b.base)
		}
		ps.batches = ps.batches[:0]
		ps.epoch = epoch
	}
	ps.coordEpoch, ps.lastMarker, ps.lastMarkerEpoch = coordEpoch, kind, epoch
	ps.markers++
	ps.lastAppend = max(ps.lastAppend, now)
	base := part.next
	batch := controlBatch(base, pid, epoch, coordEpoch, commit, now)
	sealKey, sealVal := part.maybeRoll(lc, int64(len(batch)), now, 0, now)
	_, pa := part.begin(1)
	if ot != nil {
		ot.closing = true
	}
	part.mu.Unlock()

	b := p.db.NewBatch()
	_ = b.Set(logKey(t.id, part.index, base), batch, nil)
	if sealKey != nil {
		_ = b.Set(sealKey, sealVal, nil)
	}
	_ = b.Set(producerEpochKey(t.id, part.index, pid), encodeProducerEpoch(epoch, coordEpoch, kind, now), nil)
	for _, fb := range forgotten {
		_ = b.Delete(producerBatchKey(t.id, part.index, pid, fb), nil)
	}
	if ot != nil {
		_ = b.Delete(openTxnKey(t.id, part.index, pid), nil)
		if !commit {
			_ = b.Set(abortedTxnKey(t.id, part.index, base, pid), binary.BigEndian.AppendUint64(nil, uint64(ot.first)), nil)
		}
	}
	err := p.commit(diskguard.TxnMarker, func() error { return b.Commit(pebble.Sync) })
	_ = b.Close()
	var failed *diskguard.CommitError
	stall := errors.As(err, &failed)

	part.mu.Lock()
	if ot != nil {
		if err != nil {
			ot.closing = false // the transaction stays open; the coordinator retries
		} else {
			if cur := part.openTxns[pid]; cur == ot {
				delete(part.openTxns, pid)
			}
			part.recomputeUnstable()
			if !commit {
				part.aborted = append(part.aborted, abortedTxn{pid: pid, first: ot.first, last: base})
			}
		}
	}
	if err != nil {
		ps.lastMarker = markerNone
	}
	part.mu.Unlock()
	part.finish(pa, err != nil, stall) // the high watermark passes the marker: long polls wake
	if err != nil {
		if !errors.Is(err, diskguard.ErrRefused) {
			p.log.Error("transaction marker commit", "topic", t.name, "partition", part.index, "err", err)
		}
		return kerr.KafkaStorageError
	}
	return nil
}

// loadTxnState rebuilds the transaction state of every partition from the 'd' 'o', 'd' 'a'
// and 'd' 'e' keys (after the producers' batches are loaded); keys of deleted partitions and
// aborted entries below the log start are dropped.
func (p *Plane) loadTxnState() error {
	var stale [][]byte
	scan := func(kind byte, keyLen, valLen int, fn func(part *partition, k, v []byte) bool) error {
		prefix := []byte{keyPrefix, kind}
		it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		if err != nil {
			return err
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			if len(k) != keyLen || len(v) != valLen {
				stale = append(stale, append([]byte(nil), k...))
				continue
			}
			id := [16]byte(k[2:18])
			idx := int32(binary.BigEndian.Uint32(k[18:]))
			_, parts := p.lookupID(id)
			if idx < 0 || int(idx) >= len(parts) || !fn(parts[idx], k[22:], v) {
				stale = append(stale, append([]byte(nil), k...))
			}
		}
		return it.Error()
	}
	err := scan(kindOpenTxn, 2+16+4+8, 10, func(part *partition, k, v []byte) bool {
		pid := int64(binary.BigEndian.Uint64(k))
		first := int64(binary.BigEndian.Uint64(v))
		part.openTxns[pid] = &openTxn{first: first, epoch: int16(binary.BigEndian.Uint16(v[8:]))}
		return true
	})
	if err == nil {
		err = scan(kindAbortedTxn, 2+16+4+16, 8, func(part *partition, k, v []byte) bool {
			last := int64(binary.BigEndian.Uint64(k))
			if last < part.logStart {
				return false
			}
			part.aborted = append(part.aborted, abortedTxn{pid: int64(binary.BigEndian.Uint64(k[8:])),
				first: int64(binary.BigEndian.Uint64(v)), last: last})
			return true
		})
	}
	nowMs := p.cfg.Now().UnixMilli()
	expirationMs := p.producerIDExpiration().Milliseconds()
	if err == nil {
		err = scan(kindProducerEpoch, 2+16+4+8, 15, func(part *partition, k, v []byte) bool {
			pid := int64(binary.BigEndian.Uint64(k))
			epoch := int16(binary.BigEndian.Uint16(v))
			ms := int64(binary.BigEndian.Uint64(v[7:]))
			ps := part.producers[pid]
			_, open := part.openTxns[pid]
			if ps == nil && !open && nowMs-ms >= expirationMs {
				return false // expired while the broker was down
			}
			if ps == nil {
				ps = newProducerState(epoch)
				part.producers[pid] = ps
			}
			if epoch > ps.epoch {
				for _, b := range ps.batches {
					stale = append(stale, producerBatchKey(part.topicID, part.index, pid, b.base))
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
		return fmt.Errorf("data: load transactions: %w", err)
	}
	for _, t := range p.sortedTopics() {
		for _, part := range t.parts {
			part.recomputeUnstable()
			sort.Slice(part.aborted, func(i, j int) bool { return part.aborted[i].last < part.aborted[j].last })
		}
	}
	if len(stale) > 0 {
		b := p.db.NewBatch()
		for _, k := range stale {
			_ = b.Delete(k, nil)
		}
		err := p.commit(diskguard.Retention, func() error { return b.Commit(pebble.Sync) })
		_ = b.Close()
		if err != nil {
			return fmt.Errorf("data: drop stale transaction state: %w", err)
		}
	}
	return nil
}
