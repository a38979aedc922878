package data

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
)

// GroupMetadataTopic is Kafka's __consumer_offsets (Topic.GROUP_METADATA_TOPIC_NAME): one
// partition per group coordinator shard, holding the coordinator's records in Kafka's own
// record format, appended by the coordinator store as it commits them (AppendGroupMetadata).
const GroupMetadataTopic = "__consumer_offsets"

// Kafka's internal topics (Topic.INTERNAL_TOPICS): listed with IsInternal, never created by a
// client (Metadata auto-creation, CreateTopics) and never written, deleted, resized or trimmed
// by one (ReplicaManager.appendToLocalLog and deleteRecordsOnLocalLog answer
// INVALID_TOPIC_EXCEPTION; muster refuses DeleteTopics and CreatePartitions the same way, since
// the partition count is the coordinator's shard count). __transaction_state and
// __share_group_state will exist once their coordinators do.
var kafkaInternalTopics = map[string]bool{
	GroupMetadataTopic:    true,
	"__transaction_state": true,
	"__share_group_state": true,
}

// IsInternalTopic reports whether name is one of Kafka's internal topics.
func IsInternalTopic(name string) bool { return kafkaInternalTopics[name] }

// groupMetadataTopicConfigs are the configs Kafka gives __consumer_offsets
// (GroupCoordinatorService.groupMetadataTopicConfigs): compacted, written uncompressed
// (offsets.topic.compression.codec 0) in segments of offsets.topic.segment.bytes.
func groupMetadataTopicConfigs(segmentBytes int64) map[string]*string {
	s := func(v string) *string { return &v }
	return map[string]*string{
		"cleanup.policy":   s("compact"),
		"compression.type": s("producer"),
		"segment.bytes":    s(strconv.FormatInt(segmentBytes, 10)),
	}
}

// EnsureGroupMetadataTopic creates __consumer_offsets with one partition per coordinator shard
// unless it exists with that many. A topic of the name with another partition count is what a
// client's Metadata request auto-created before the topic was internal; it holds no coordinator
// record, so it is replaced. created reports a new (empty) topic, which the caller fills with
// the coordinator's current records.
//
// codec is offsets.topic.compression.codec: the compression of the record batches written to
// the topic (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func (p *Plane) EnsureGroupMetadataTopic(partitions int32, segmentBytes int64, codec int16) (created bool, err error) {
	if codec < codecNone || codec > codecZstd {
		return false, fmt.Errorf("data: offsets.topic.compression.codec %d: not a compression codec", codec)
	}
	p.groupMetadataCodec.Store(int32(codec))
	if t, parts := p.lookup(GroupMetadataTopic); t != nil {
		if int32(len(parts)) == partitions {
			return false, nil
		}
		p.log.Warn("replacing __consumer_offsets: it was created as an ordinary topic; the internal topic has one partition per coordinator shard",
			"partitions", len(parts), "shards", partitions)
		if aerr := p.deleteTopic(t); aerr != nil {
			return false, fmt.Errorf("data: replacing %s: %w", GroupMetadataTopic, aerr)
		}
	}
	spec, aerr := p.checkCreate(GroupMetadataTopic, partitions, groupMetadataTopicConfigs(segmentBytes))
	if aerr != nil {
		return false, fmt.Errorf("data: creating %s: %w", GroupMetadataTopic, aerr)
	}
	if _, aerr := p.createTopic(spec, false); aerr != nil {
		return false, fmt.Errorf("data: creating %s: %w", GroupMetadataTopic, aerr)
	}
	return true, nil
}

// Record is one record appended to an internal topic: a key and a value (nil = tombstone).
type Record struct{ Key, Value []byte }

// AppendGroupMetadata adds recs to partition partition of __consumer_offsets as one record
// batch inside b, the Pebble batch that commits them in the coordinator store, so the topic and
// the store never disagree. The batch's offsets are reserved now; done must be called once b's
// commit has returned, with whether it succeeded (a failed commit leaves a gap of offsets, as a
// failed produce does). Without the topic (or with no records) nothing is added.
func (p *Plane) AppendGroupMetadata(partition int32, recs []Record, b *pebble.Batch) (done func(committed bool)) {
	nop := func(bool) {}
	if len(recs) == 0 {
		return nop
	}
	t, parts := p.lookup(GroupMetadataTopic)
	if t == nil || partition < 0 || int(partition) >= len(parts) {
		return nop
	}
	part := parts[partition]
	now := p.cfg.Now().UnixMilli()
	codec := int16(p.groupMetadataCodec.Load())
	var batch []byte
	size := coordinatorBatchSize(recs)
	if codec != codecNone {
		batch = coordinatorBatch(nil, recs, now, codec)
		size = len(batch)
	}
	t.life.RLock()
	if t.deleted {
		t.life.RUnlock()
		return nop
	}
	part.mu.Lock()
	seal, sealed := part.maybeRoll(t.logConfig(), int64(size), now, int32(len(recs)-1), now)
	base, pa := part.begin(int64(len(recs)))
	part.mu.Unlock()
	key := logKey(t.id, part.index, base)
	if batch != nil {
		binary.BigEndian.PutUint64(batch[offBaseOffset:], uint64(base)) // outside the CRC
		_ = b.Set(key, batch, nil)
	} else {
		// Uncompressed (Kafka's default): the batch is built in the Pebble batch's own buffer.
		op := b.SetDeferred(len(key), size)
		copy(op.Key, key)
		coordinatorBatch(op.Value[:0], recs, now, codecNone)
		binary.BigEndian.PutUint64(op.Value[offBaseOffset:], uint64(base))
		_ = op.Finish()
	}
	if sealed {
		_ = b.Set(stateKey(nil, PartitionID{t.id, part.index}, seal.Kind, seal.Key), seal.Value, nil)
	}
	return func(committed bool) {
		part.finish(pa, !committed, false)
		t.life.RUnlock()
	}
}

// coordinatorBatch appends to dst[:0] recs as one magic-2 record batch (Kafka's
// DefaultRecordBatch) at base offset 0, every record with timestamp ts and no headers, no
// producer id, its records section compressed with codec: how Kafka's coordinator runtime writes
// its records (CoordinatorRuntime, with offsets.topic.compression.codec). A codec that fails
// leaves the batch uncompressed. Uncompressed, the batch is coordinatorBatchSize(recs) bytes
// (with that capacity in dst nothing is allocated).
func coordinatorBatch(dst []byte, recs []Record, ts int64, codec int16) []byte {
	out := dst[:0]
	if cap(out) < batchHeaderSize {
		out = make([]byte, 0, coordinatorBatchSize(recs))
	}
	out = out[:batchHeaderSize]
	for i, r := range recs {
		out = binary.AppendVarint(out, int64(recordBodyLen(i, r)))
		out = append(out, 0)                     // attributes
		out = binary.AppendVarint(out, 0)        // timestamp delta
		out = binary.AppendVarint(out, int64(i)) // offset delta
		out = binary.AppendVarint(out, int64(len(r.Key)))
		out = append(out, r.Key...)
		if r.Value == nil {
			out = binary.AppendVarint(out, -1)
		} else {
			out = binary.AppendVarint(out, int64(len(r.Value)))
			out = append(out, r.Value...)
		}
		out = binary.AppendVarint(out, 0) // headers
	}
	attrs := int16(0)
	if codec != codecNone {
		if c, err := compress(codec, out[batchHeaderSize:], false); err == nil {
			out = append(out[:batchHeaderSize], c...)
			attrs = codec
		}
	}
	h := batchHeader{LastOffsetDelta: int32(len(recs) - 1), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	writeBatchHeader(out, h, attrs, ts, ts, int32(len(recs)), len(out)-batchHeaderSize)
	sealBatch(out)
	return out
}

// coordinatorBatchSize is the size of recs as an uncompressed batch.
func coordinatorBatchSize(recs []Record) int {
	size := batchHeaderSize
	for i, r := range recs {
		n := recordBodyLen(i, r)
		size += recVarintLen(int64(n)) + n
	}
	return size
}

// recordBodyLen is the length of record i after its length prefix.
func recordBodyLen(i int, r Record) int {
	n := 1 + recVarintLen(0) + recVarintLen(int64(i)) + recVarintLen(int64(len(r.Key))) + len(r.Key) + recVarintLen(0)
	if r.Value == nil {
		return n + recVarintLen(-1)
	}
	return n + recVarintLen(int64(len(r.Value))) + len(r.Value)
}

func recVarintLen(v int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], v)
}

// internalTopicError is the answer to a client writing, deleting or resizing an internal topic.
func internalTopicError(format, name string) *apiError {
	return errf(kerr.InvalidTopicException, format, name)
}

// GroupMetadataEnd is the offset the next batch appended to partition partition of
// __consumer_offsets gets (0 without the topic).
func (p *Plane) GroupMetadataEnd(partition int32) int64 {
	t, parts := p.lookup(GroupMetadataTopic)
	if t == nil || partition < 0 || int(partition) >= len(parts) {
		return 0
	}
	part := parts[partition]
	part.mu.Lock()
	defer part.mu.Unlock()
	return part.next
}

// ReadGroupMetadata calls fn with every record stored in partition partition of
// __consumer_offsets from offset from on, in offset order: its key and value (nil for a
// tombstone), valid only during the call. The coordinator store reads back what it appended
// since its last checkpoint (store.MirrorLog); batches it appended whose commit failed may be
// there too (a failed store), as they are in the store itself.
func (p *Plane) ReadGroupMetadata(ctx context.Context, partition int32, from int64, fn func(key, value []byte) error) error {
	t, parts := p.lookup(GroupMetadataTopic)
	if t == nil || partition < 0 || int(partition) >= len(parts) {
		return nil
	}
	var ferr error
	err := p.st.Read(PartitionID{t.id, partition}, from, math.MaxInt64, func(v []byte) bool {
		if ferr = ctx.Err(); ferr != nil {
			return false
		}
		h, hok := readBatchHeader(v)
		if !hok || h.Attributes&attrControl != 0 || h.size() > len(v) || h.lastOffset() < from {
			return true
		}
		recs, err := decompress(h.Attributes&attrCompressionMask, v[batchHeaderSize:h.size()], maxDecompressedBatch)
		if err != nil {
			ferr = fmt.Errorf("data: %s-%d at %d: %w", GroupMetadataTopic, partition, h.BaseOffset, err)
			return false
		}
		if err := readRecords(recs, h.NumRecords, func(r *rawRecord) bool {
			if h.BaseOffset+int64(r.offsetDelta) >= from {
				ferr = fn(r.key, r.value)
			}
			return ferr == nil
		}); err != nil && ferr == nil {
			ferr = fmt.Errorf("data: %s-%d at %d: %w", GroupMetadataTopic, partition, h.BaseOffset, err)
		}
		return ferr == nil
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// SetGroupMetadataCleanFloor tells the log cleaner not to compact __consumer_offsets at or above
// floor(partition): the coordinator store reads the records it appended after its last
// checkpoint back from the topic (store.MirrorLog), every one of them, tombstones included.
func (p *Plane) SetGroupMetadataCleanFloor(floor func(partition int32) int64) {
	p.groupMetadataFloor.Store(&floor)
}
