package data

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record batch (magic 2) header offsets, per Kafka's DefaultRecordBatch.
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57
	batchHeaderSize    = 61

	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// batchHeader is the decoded fixed header of one stored or produced batch.
type batchHeader struct {
	BaseOffset      int64
	Length          int32 // bytes after the length field
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	NumRecords      int32
}

func (h batchHeader) size() int         { return int(h.Length) + 12 }
func (h batchHeader) lastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// readBatchHeader decodes the header of the batch at the start of b without
// validating it. ok is false when b is shorter than a header or than the batch
// length it announces.
func readBatchHeader(b []byte) (h batchHeader, ok bool) {
	if len(b) < batchHeaderSize {
		return h, false
	}
	be := binary.BigEndian
	h = batchHeader{
		BaseOffset:      int64(be.Uint64(b[offBaseOffset:])),
		Length:          int32(be.Uint32(b[offLength:])),
		Attributes:      int16(be.Uint16(b[offAttributes:])),
		LastOffsetDelta: int32(be.Uint32(b[offLastOffsetDelta:])),
		FirstTimestamp:  int64(be.Uint64(b[offFirstTimestamp:])),
		MaxTimestamp:    int64(be.Uint64(b[offMaxTimestamp:])),
		ProducerID:      int64(be.Uint64(b[offProducerID:])),
		ProducerEpoch:   int16(be.Uint16(b[offProducerEpoch:])),
		BaseSequence:    int32(be.Uint32(b[offBaseSequence:])),
		NumRecords:      int32(be.Uint32(b[offNumRecords:])),
	}
	if h.Length < batchHeaderSize-12 || int64(len(b)) < int64(h.Length)+12 {
		return h, false
	}
	return h, true
}

// validateProduceBatch checks that records holds exactly one magic-2 record
// batch with a correct CRC-32C (Kafka's LogValidator rules that matter for a
// broker that stores batches as sent). Errors: CORRUPT_MESSAGE for a short,
// mis-sized or mis-checksummed batch; INVALID_RECORD for no batch, magic 0/1
// message sets, several batches, control batches or inconsistent record counts; UNSUPPORTED_COMPRESSION_TYPE for codecs > zstd.
func validateProduceBatch(records []byte) (batchHeader, *kerr.Error) {
	if len(records) == 0 {
		return batchHeader{}, kerr.InvalidRecord // Kafka: "must have at least one record batch"
	}
	if len(records) <= offMagic {
		return batchHeader{}, kerr.CorruptMessage
	}
	if magic := records[offMagic]; magic != 2 {
		if magic < 2 {
			// Produce v3+ carries only magic-2 batches (ProduceRequest.validateRecords, which
			// KafkaApis.handleProduceRequest answers with INVALID_RECORD).
			return batchHeader{}, kerr.InvalidRecord
		}
		return batchHeader{}, kerr.CorruptMessage
	}
	h, ok := readBatchHeader(records)
	if !ok {
		return h, kerr.CorruptMessage
	}
	if h.size() != len(records) {
		if h.size() < len(records) {
			return h, kerr.InvalidRecord // Kafka: exactly one batch per partition for v3+
		}
		return h, kerr.CorruptMessage
	}
	want := binary.BigEndian.Uint32(records[offCRC:])
	if crc32.Checksum(records[offAttributes:], crc32c) != want {
		return h, kerr.CorruptMessage
	}
	if h.Attributes&attrCompressionMask > 4 {
		return h, kerr.UnsupportedCompressionType
	}
	if h.Attributes&attrControl != 0 {
		return h, kerr.InvalidRecord
	}
	if h.NumRecords <= 0 || h.LastOffsetDelta != h.NumRecords-1 {
		return h, kerr.InvalidRecord
	}
	return h, nil
}

// setLogAppendTime marks b's timestamps as LogAppendTime with max timestamp
// ms and recomputes the CRC (Kafka sets only the attribute and max timestamp).
func setLogAppendTime(b []byte, ms int64) {
	be := binary.BigEndian
	attrs := be.Uint16(b[offAttributes:]) | attrLogAppendTime
	be.PutUint16(b[offAttributes:], attrs)
	be.PutUint64(b[offMaxTimestamp:], uint64(ms))
	be.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], crc32c))
}

// recordOffsets calls fn(offset, timestamp) for each record of a stored
// batch, in order, until fn returns false. Compressed batches are
// decompressed first (bounded by maxDecompressedBatch). It returns false when
// the records cannot be decoded (callers then fall back to batch-level data).
// With LogAppendTime every record's timestamp is the batch's max timestamp.
func recordOffsets(b []byte, h batchHeader, fn func(offset, ts int64) bool) bool {
	rest, err := decompress(h.Attributes&attrCompressionMask, b[batchHeaderSize:h.size()], maxDecompressedBatch)
	if err != nil {
		return false
	}
	logAppend := h.Attributes&attrLogAppendTime != 0
	for i := int32(0); i < h.NumRecords; i++ {
		n, used := binary.Varint(rest)
		if used <= 0 || n < 0 || int64(len(rest)-used) < n {
			return false
		}
		var r kmsg.Record
		if err := r.UnsafeReadFrom(rest[:used+int(n)]); err != nil {
			return false
		}
		rest = rest[used+int(n):]
		ts := h.FirstTimestamp + r.TimestampDelta64
		if logAppend {
			ts = h.MaxTimestamp
		}
		if !fn(h.BaseOffset+int64(r.OffsetDelta), ts) {
			return true
		}
	}
	return true
}
