package data

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// Produce appends each partition's record batch and answers with its base
// offset. Partitions are appended concurrently; each append commits its own
// Pebble batch (Sync unless acks=0) so concurrent produces group-commit.
//
// Per partition: the batch must be exactly one valid magic-2 batch
// (CORRUPT_MESSAGE, INVALID_RECORD, UNSUPPORTED_FOR_MESSAGE_FORMAT), at most
// max.message.bytes (MESSAGE_TOO_LARGE), every record keyed when the topic is
// compacted (INVALID_RECORD with Kafka's record error); unknown topics are auto-created when
// auto.create.topics.enable (else UNKNOWN_TOPIC_OR_PARTITION; v13+ by topic
// ID: UNKNOWN_TOPIC_ID); idempotent batches follow Kafka's sequence rules
// (a duplicate answers NONE with the original base offset). Acks other than
// -1, 0, 1 → INVALID_REQUIRED_ACKS. An internal topic (__consumer_offsets) is
// written by its coordinator only: INVALID_TOPIC_EXCEPTION (Kafka's
// ReplicaManager.appendToLocalLog). Transactional batches follow
// txn_produce.go (the request needs a transactional id, the partition must be
// in the producer's ongoing transaction). While the disk is short of space or
// the store failed (diskguard), every partition answers KAFKA_STORAGE_ERROR, a
// retriable error, with the reason in ErrorMessage (v8+), and nothing is
// written. acks=0 returns nil: no response.
func (p *Plane) Produce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	byID := req.Version >= 13
	txn, reqErr := p.verifyTransactional(ctx, req)
	var wg, ordered sync.WaitGroup
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var (
			t     *topic
			parts []*partition
			terr  *kerr.Error
		)
		switch {
		case req.Acks != -1 && req.Acks != 0 && req.Acks != 1:
			terr = kerr.InvalidRequiredAcks
		case reqErr != nil:
			terr = reqErr
		case byID:
			if t, parts = p.lookupID(rt.TopicID); t == nil {
				terr = kerr.UnknownTopicID
			}
		default:
			var aerr *apiError
			if t, parts, aerr = p.autoCreate(rt.Topic, true); aerr != nil {
				terr = aerr.code
			}
		}
		if terr == nil && t.internal {
			terr = kerr.InvalidTopicException // Kafka: "Cannot append to internal topic"
		}
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for i, rp := range rt.Partitions {
			sp := &st.Partitions[i]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset = -1
			switch {
			case terr != nil:
				sp.ErrorCode = terr.Code
				continue
			case rp.Partition < 0 || int(rp.Partition) >= len(parts):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			if err := p.cfg.Guard.Refuse(diskguard.Produce); err != nil {
				sp.ErrorCode = kerr.KafkaStorageError.Code
				msg := err.Error()
				sp.ErrorMessage = &msg
				continue
			}
			ta := txn.lookup(t, rp.Partition)
			if ta != nil && ta.err != nil {
				sp.ErrorCode = ta.err.Code
				continue
			}
			wg.Add(1)
			ordered.Add(1)
			go func(t *topic, part *partition, records []byte) {
				defer wg.Done()
				p.appendOne(t, part, records, req.Acks != 0, ta, sp, ordered.Done)
			}(t, parts[rp.Partition], rp.Records)
		}
		resp.Topics = append(resp.Topics, st)
	}
	ordered.Wait()
	if seq, ok := ctx.Value(sequencedKey{}).(func()); ok {
		seq() // every batch has its offsets and its place in the WAL: the next may start
	}
	wg.Wait()
	if req.Acks == 0 {
		return nil
	}
	return resp
}

// WithSequenced returns ctx carrying fn, which Produce calls once the batches of the request
// have their offsets and their places in the store's write-ahead log, before it waits for them
// to be durable: the server then starts the connection's next ordered request (a pipelining
// producer's next batch), whose appends come after these, while these are synced.
func WithSequenced(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, sequencedKey{}, fn)
}

type sequencedKey struct{}

// appendOne validates and appends one batch to part, filling sp. ta is the verification of a
// transactional batch (nil for any other). ordered is called once the batch has its offsets and
// its place in the WAL (or will not be appended), before the wait for its WAL sync (acks=all).
func (p *Plane) appendOne(t *topic, part *partition, records []byte, sync bool, ta *txnAppend, sp *kmsg.ProduceResponseTopicPartition, ordered func()) {
	orderedOnce := false
	begun := func() {
		if !orderedOnce {
			orderedOnce = true
			ordered()
		}
	}
	defer begun()
	h, kerrCode := validateProduceBatch(records)
	if kerrCode != nil {
		sp.ErrorCode = kerrCode.Code
		return
	}
	lc := t.logConfig()
	if len(records) > lc.maxMessageBytes {
		sp.ErrorCode = kerr.MessageTooLarge.Code
		return
	}
	transactional := h.Attributes&attrTransactional != 0
	if transactional && (ta == nil || h.ProducerID < 0) {
		// A transactional batch without a producer id, or one the verification did not see
		// (its topic did not exist when the request arrived, so it was never added).
		if h.ProducerID < 0 {
			sp.ErrorCode = kerr.InvalidRecord.Code
		} else {
			sp.ErrorCode = kerr.InvalidTxnState.Code
		}
		return
	}
	if lc.compact {
		if idx := keylessRecords(records, h); len(idx) > 0 {
			rejectKeyless(sp, idx, t.name, part.index)
			return
		}
	}
	now := p.cfg.Now().UnixMilli()
	if rejectTimestamps(sp, records, h, lc, now) {
		return
	}

	t.life.RLock()
	defer t.life.RUnlock()
	if t.deleted {
		sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return
	}

	part.mu.Lock()
	if !part.led {
		part.mu.Unlock()
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		return
	}
	opened := false
	idempotent := h.ProducerID >= 0
	var ps *producerState
	if idempotent {
		ps = part.producers[h.ProducerID]
		if code := checkTxnAppend(part, ps, h, transactional, ta); code != nil {
			part.mu.Unlock()
			sp.ErrorCode = code.Code
			return
		}
		dup, serr := ps.check(h)
		if serr != nil {
			part.mu.Unlock()
			sp.ErrorCode = serr.Code
			return
		}
		if dup != nil {
			base, pending := dup.base, dup.pending
			logStart := part.logStart
			part.mu.Unlock()
			if pending != nil {
				<-pending.ch // answer only once the original is durable
				if pending.failed {
					sp.ErrorCode = p.writeError(nil).Code
					return
				}
			}
			sp.BaseOffset, sp.LogStartOffset = base, logStart
			if lc.logAppendTime {
				sp.LogAppendTime = now
			}
			return
		}
	}
	maxTs := h.MaxTimestamp
	if lc.logAppendTime {
		maxTs = now
	}
	w := &LogWrite{Part: PartitionID{t.id, part.index}, Epoch: part.epoch, Op: diskguard.Produce, NoSync: !sync}
	if seal, ok := part.maybeRoll(lc, int64(len(records)), maxTs, h.LastOffsetDelta, now); ok {
		w.set(seal.Kind, seal.Key, seal.Value)
	}
	base, pa := part.begin(int64(h.LastOffsetDelta) + 1)
	if idempotent {
		if ps == nil {
			ps = newProducerState(h.ProducerEpoch)
			part.producers[h.ProducerID] = ps
		}
		w.set(stateProducer, producerStateKey(h.ProducerID, base),
			encodeProducerBatch(h.ProducerEpoch, h.BaseSequence, h.LastOffsetDelta, now))
		for _, fb := range ps.record(h, base, pa, now) {
			w.set(stateProducer, producerStateKey(h.ProducerID, fb), nil)
		}
	}
	if transactional && part.beginTxn(h.ProducerID, h.ProducerEpoch, base) {
		opened = true
		w.set(stateOpenTxn, pidStateKey(h.ProducerID), encodeOpenTxn(base, h.ProducerEpoch))
	}
	w.State = append(w.State, part.expireProducers(now, p.producerIDExpiration().Milliseconds())...)
	logStart := part.logStart
	part.mu.Unlock()

	// The stored batch is the records as sent, with the base offset and the partition leader
	// epoch rewritten and LogAppendTime stamped when the topic says so.
	sb := StoredBatch{Base: base, Last: base + int64(h.LastOffsetDelta), MaxTimestamp: maxTs, Data: records, Stamp: true}
	if lc.logAppendTime {
		sb.LogAppendTime = now
	}
	w.addBatch(sb)
	wait := p.st.Write(w)
	begun() // ordered after every earlier write of the partition: the next request may append
	err := wait()
	if err == nil && idempotent {
		part.mu.Lock()
		for i := range ps.batches {
			if ps.batches[i].pending == pa {
				ps.batches[i].pending = nil
			}
		}
		part.mu.Unlock()
	}
	if err != nil && opened {
		part.abandonTxn(h.ProducerID, base)
	}
	// A refused commit wrote nothing: its offsets stay assigned (a gap, as
	// after compaction). A commit that failed inside the store may be visible
	// in Pebble's memtable until a restart; the high watermark stops before it
	// so that no fetch serves what was never acknowledged (the store takes no
	// more writes until a restart, which recovers exactly what is on disk).
	// In cluster mode the partition loads again from the store instead.
	part.finish(pa, err != nil, p.stalls(err))
	if err != nil {
		p.writeFailed(part, w.Epoch, err)
		if !errors.Is(err, diskguard.ErrRefused) && !errors.Is(err, ErrFenced) {
			p.log.Error("produce commit", "topic", t.name, "partition", part.index, "err", err)
		}
		sp.ErrorCode = p.writeError(err).Code
		msg := err.Error()
		sp.ErrorMessage = &msg
		return
	}
	sp.BaseOffset, sp.LogStartOffset = base, logStart
	sp.LogAppendTime = -1
	if lc.logAppendTime {
		sp.LogAppendTime = now
	}
}

// keylessRecords returns the indexes of the records without a key in a batch
// for a compacted topic (Kafka's LogValidator rejects them: such records could
// never be compacted). An undecodable batch is left to the cleaner.
func keylessRecords(records []byte, h batchHeader) []int32 {
	recs, err := decompress(h.Attributes&attrCompressionMask, records[batchHeaderSize:h.size()], maxDecompressedBatch)
	if err != nil {
		return nil
	}
	var out []int32
	i := int32(0)
	_ = readRecords(recs, h.NumRecords, func(r *rawRecord) bool {
		if r.key == nil {
			out = append(out, i)
		}
		i++
		return true
	})
	return out
}

// rejectKeyless fills sp with Kafka's INVALID_RECORD answer for keyless
// records in a compacted topic: one record error per record and the summary
// message of the first three.
func rejectKeyless(sp *kmsg.ProduceResponseTopicPartition, idx []int32, topic string, partition int32) {
	msg := fmt.Sprintf("Compacted topic cannot accept message without key in topic partition %s-%d.", topic, partition)
	var shown []string
	for n, i := range idx {
		re := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		m := msg
		re.RelativeOffset, re.ErrorMessage = i, &m
		sp.ErrorRecords = append(sp.ErrorRecords, re)
		if n < 3 {
			shown = append(shown, fmt.Sprintf("RecordError(batchIndex=%d, message='%s')", i, msg))
		}
	}
	summary := fmt.Sprintf("One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [%s]",
		len(idx), strings.Join(shown, ", "))
	sp.ErrorCode = kerr.InvalidRecord.Code
	sp.ErrorMessage = &summary
}
