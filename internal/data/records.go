package data

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// attrDeleteHorizon marks a batch whose first timestamp is the delete horizon of its tombstones
// (KIP-534, DefaultRecordBatch.DELETE_HORIZON_FLAG_MASK): set by the log cleaner the first time
// it rewrites a batch holding tombstones.
const attrDeleteHorizon = 0x40

var errBadRecord = errors.New("data: malformed record")

// rawRecord is one record of a batch, located in its (decompressed) records section without
// copying (Kafka's DefaultRecord layout: length, attributes, timestamp delta, offset delta,
// key, value, headers — all lengths varints).
type rawRecord struct {
	raw            []byte // the record with its length prefix
	body           []byte // raw without the length prefix
	tsDelta        int64
	tsStart, tsEnd int // the timestamp delta varint within body
	offsetDelta    int32
	key            []byte // nil when the key is null
	hasValue       bool   // false for a tombstone (null value)
	value          []byte // nil for a tombstone
}

// readRecords calls fn for each of the n records in recs (a decompressed records section) until
// fn returns false; a record that does not parse is an error.
func readRecords(recs []byte, n int32, fn func(r *rawRecord) bool) error {
	var r rawRecord
	for i := int32(0); i < n; i++ {
		length, used := binary.Varint(recs)
		if used <= 0 || length < 0 || int64(len(recs)-used) < length {
			return errBadRecord
		}
		r.raw = recs[:used+int(length)]
		r.body = recs[used : used+int(length)]
		recs = recs[used+int(length):]
		if err := r.parse(); err != nil {
			return err
		}
		if !fn(&r) {
			return nil
		}
	}
	return nil
}

func (r *rawRecord) parse() error {
	b := r.body
	if len(b) < 1 {
		return errBadRecord
	}
	pos := 1 // attributes
	ts, used := binary.Varint(b[pos:])
	if used <= 0 {
		return errBadRecord
	}
	r.tsDelta, r.tsStart, r.tsEnd = ts, pos, pos+used
	pos += used
	od, used := binary.Varint(b[pos:])
	if used <= 0 {
		return errBadRecord
	}
	r.offsetDelta = int32(od)
	pos += used
	kl, used := binary.Varint(b[pos:])
	if used <= 0 || kl < -1 || int64(len(b)-pos-used) < kl {
		return errBadRecord
	}
	pos += used
	r.key = nil
	if kl >= 0 {
		r.key = b[pos : pos+int(kl)]
		pos += int(kl)
	}
	vl, used := binary.Varint(b[pos:])
	if used <= 0 || vl < -1 || int64(len(b)-pos-used) < vl {
		return errBadRecord
	}
	r.hasValue = vl >= 0
	r.value = nil
	if r.hasValue {
		r.value = b[pos+used : pos+used+int(vl)]
	}
	return nil
}

// appendWithTimestampDelta appends r with its timestamp delta replaced by delta.
func (r *rawRecord) appendWithTimestampDelta(dst []byte, delta int64) []byte {
	if delta == r.tsDelta {
		return append(dst, r.raw...)
	}
	var ts [binary.MaxVarintLen64]byte
	tn := binary.PutVarint(ts[:], delta)
	bodyLen := len(r.body) - (r.tsEnd - r.tsStart) + tn
	dst = binary.AppendVarint(dst, int64(bodyLen))
	dst = append(dst, r.body[:r.tsStart]...)
	dst = append(dst, ts[:tn]...)
	return append(dst, r.body[r.tsEnd:]...)
}

// keptRecord is a record the cleaner keeps, with its absolute timestamp.
type keptRecord struct {
	r  rawRecord
	ts int64
}

// rebuildBatch writes the batch of h (magic 2) again holding only kept, as Kafka's
// MemoryRecords.buildRetainedRecordsInto does: the same base offset, last offset delta,
// producer id, epoch, base sequence, partition leader epoch, compression codec and timestamp
// type; the first timestamp is the delete horizon when horizon ≥ 0 (and the batch is flagged),
// else the first kept record's timestamp, the record timestamp deltas follow it; the maximum
// timestamp is recomputed (LogAppendTime keeps the batch's). xerial tells whether a snappy
// batch was xerial-framed.
func rebuildBatch(h batchHeader, kept []keptRecord, horizon int64, xerial bool) ([]byte, error) {
	logAppend := h.Attributes&attrLogAppendTime != 0
	base := horizon
	if base < 0 && len(kept) > 0 {
		base = kept[0].ts
	}
	maxTs := int64(-1)
	if logAppend {
		maxTs = h.MaxTimestamp
	}
	var recs []byte
	for i := range kept {
		k := &kept[i]
		recs = k.r.appendWithTimestampDelta(recs, k.ts-base)
		if !logAppend {
			maxTs = max(maxTs, k.ts)
		}
	}
	codec := h.Attributes & attrCompressionMask
	if codec != codecNone {
		var err error
		if recs, err = compress(codec, recs, xerial); err != nil {
			return nil, err
		}
	}
	attrs := h.Attributes &^ attrDeleteHorizon
	if horizon >= 0 {
		attrs |= attrDeleteHorizon
	}
	out := make([]byte, batchHeaderSize, batchHeaderSize+len(recs))
	writeBatchHeader(out, h, attrs, base, maxTs, int32(len(kept)), len(recs))
	out = append(out, recs...)
	sealBatch(out)
	return out, nil
}

// emptyBatch is the header-only batch Kafka's cleaner keeps when every record of a batch is
// removed but the batch must stay (DefaultRecordBatch.writeEmptyHeader): the last offset, the
// producer state and the maximum timestamp survive; no compression, no first timestamp.
func emptyBatch(h batchHeader) []byte {
	attrs := h.Attributes & (attrLogAppendTime | attrTransactional | attrControl)
	out := make([]byte, batchHeaderSize)
	writeBatchHeader(out, h, attrs, -1, h.MaxTimestamp, 0, 0)
	sealBatch(out)
	return out
}

func writeBatchHeader(out []byte, h batchHeader, attrs int16, firstTs, maxTs int64, numRecords int32, recsLen int) {
	be := binary.BigEndian
	be.PutUint64(out[offBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(out[offLength:], uint32(batchHeaderSize-12+recsLen))
	be.PutUint32(out[offLeaderEpoch:], 0)
	out[offMagic] = 2
	be.PutUint16(out[offAttributes:], uint16(attrs))
	be.PutUint32(out[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(out[offFirstTimestamp:], uint64(firstTs))
	be.PutUint64(out[offMaxTimestamp:], uint64(maxTs))
	be.PutUint64(out[offProducerID:], uint64(h.ProducerID))
	be.PutUint16(out[offProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(out[offBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(out[offNumRecords:], uint32(numRecords))
}

// sealBatch writes the CRC-32C of a complete batch.
func sealBatch(b []byte) {
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], crc32c))
}
