package data

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producerBatchesKept is how many batches per (producer, partition) Kafka
// remembers for duplicate detection (max.in.flight for idempotence).
const producerBatchesKept = 5

// producerBatch is one remembered batch of an idempotent producer.
type producerBatch struct {
	firstSeq, lastSeq int32
	base              int64
	lastDelta         int32
	pending           *pendingAppend // nil when known durable
}

// producerState is an idempotent or transactional producer's state in one partition.
type producerState struct {
	epoch      int16
	batches    []producerBatch // oldest first
	lastAppend int64           // ms, for producer.id.expiration.ms

	// Transaction markers (txn.go): the coordinator epoch of the last marker (-1: none), the
	// kind of the last marker (for idempotent re-sends), and how many markers this process
	// appended for the producer (the verification guard of a transactional produce: a marker
	// between verification and append means the transaction ended meanwhile).
	coordEpoch      int32
	lastMarker      markerKind
	lastMarkerEpoch int16
	markers         uint64
}

// markerKind is the type of a producer's last transaction marker.
type markerKind int8

const (
	markerNone markerKind = iota
	markerAbort
	markerCommit
)

func newProducerState(epoch int16) *producerState {
	return &producerState{epoch: epoch, coordEpoch: -1}
}

// producerExpiryCheck is how often (ms) a partition looks for expired
// producers, on its next append (Kafka's producer.id.expiration.check.interval.ms).
const producerExpiryCheck = 10 * 60 * 1000

// incSeq adds delta to a sequence number, wrapping past MaxInt32 to 0 as
// Kafka's DefaultRecordBatch.incrementSequence does.
func incSeq(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// check applies Kafka's ProducerStateManager sequence rules to h. It returns
// the remembered batch when h is a duplicate of one (the caller answers with
// its base offset and no error). Errors: INVALID_PRODUCER_EPOCH for an older
// epoch, OUT_OF_ORDER_SEQUENCE_NUMBER for a gap or a new epoch not starting at
// sequence 0. A producer this partition has no state for may start anywhere; one it
// knows from a transaction marker only starts at 0.
func (ps *producerState) check(h batchHeader) (*producerBatch, *kerr.Error) {
	if ps == nil {
		return nil, nil
	}
	if h.ProducerEpoch < ps.epoch {
		// Also after a transaction marker raised the epoch (a fenced producer's late batch).
		return nil, kerr.InvalidProducerEpoch
	}
	if len(ps.batches) == 0 {
		// Known from a transaction marker only: an epoch and no sequence yet, so the next
		// batch starts at 0, at this epoch or a newer one (Kafka's
		// ProducerAppendInfo.checkSequence: only a producer with no epoch starts anywhere).
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber
		}
		return nil, nil
	}
	switch {
	case h.ProducerEpoch > ps.epoch:
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber
		}
		return nil, nil
	}
	last := incSeq(h.BaseSequence, h.LastOffsetDelta)
	for i := range ps.batches {
		if b := &ps.batches[i]; b.firstSeq == h.BaseSequence && b.lastSeq == last {
			return b, nil
		}
	}
	if latest := ps.batches[len(ps.batches)-1]; h.BaseSequence != incSeq(latest.lastSeq, 1) {
		return nil, kerr.OutOfOrderSequenceNumber
	}
	return nil, nil
}

// record remembers a new batch and returns the base offsets of forgotten
// batches, whose keys the caller deletes in the same Pebble batch.
func (ps *producerState) record(h batchHeader, base int64, pa *pendingAppend, nowMs int64) (forgotten []int64) {
	ps.lastAppend = max(ps.lastAppend, nowMs)
	if h.ProducerEpoch != ps.epoch {
		for _, b := range ps.batches {
			forgotten = append(forgotten, b.base)
		}
		ps.batches = ps.batches[:0]
		ps.epoch = h.ProducerEpoch
	}
	ps.batches = append(ps.batches, producerBatch{
		firstSeq:  h.BaseSequence,
		lastSeq:   incSeq(h.BaseSequence, h.LastOffsetDelta),
		base:      base,
		lastDelta: h.LastOffsetDelta,
		pending:   pa,
	})
	if len(ps.batches) > producerBatchesKept {
		forgotten = append(forgotten, ps.batches[0].base)
		ps.batches = append(ps.batches[:0], ps.batches[1:]...)
	}
	return forgotten
}

// encodeProducerBatch is the 'd' 'q' value: epoch(2) firstSeq(4)
// lastOffsetDelta(4) appendTimeMs(8).
func encodeProducerBatch(epoch int16, firstSeq, lastDelta int32, appendMs int64) []byte {
	v := make([]byte, 18)
	binary.BigEndian.PutUint16(v[0:], uint16(epoch))
	binary.BigEndian.PutUint32(v[2:], uint32(firstSeq))
	binary.BigEndian.PutUint32(v[6:], uint32(lastDelta))
	binary.BigEndian.PutUint64(v[10:], uint64(appendMs))
	return v
}

// expireProducers drops (part.mu held) the state of producers whose last
// append is older than the expiration and that have no append in flight,
// returning the deletions of their state keys. It runs at most every producerExpiryCheck.
func (part *partition) expireProducers(nowMs, expirationMs int64) (dels []StateOp) {
	if nowMs-part.lastExpiryCheck < producerExpiryCheck {
		return nil
	}
	part.lastExpiryCheck = nowMs
	for pid, ps := range part.producers {
		if nowMs-ps.lastAppend < expirationMs {
			continue
		}
		if _, open := part.openTxns[pid]; open {
			continue // Kafka never expires a producer with an ongoing transaction
		}
		busy := false
		for _, b := range ps.batches {
			busy = busy || b.pending != nil
		}
		if busy {
			continue
		}
		for _, b := range ps.batches {
			dels = append(dels, StateOp{Kind: stateProducer, Key: producerStateKey(pid, b.base)})
		}
		if ps.lastMarker != markerNone {
			dels = append(dels, StateOp{Kind: stateMarker, Key: pidStateKey(pid)})
		}
		delete(part.producers, pid)
	}
	return dels
}

// producerIDBlock is how many producer IDs one durable write reserves.
const producerIDBlock = 1000

// InitProducerID hands an idempotent (non-transactional) producer a new
// producer ID with epoch 0, as Kafka does for a null transactional ID (even
// when a v3+ request names its current ID and epoch). IDs are monotonic
// across restarts: the stored value is the end of the reserved block.
// Transactional IDs are not supported: INVALID_REQUEST.
func (p *Plane) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	pid, err := p.allocProducerID()
	if err != nil {
		p.log.Error("allocate producer id", "err", err)
		resp.ErrorCode = kerr.KafkaStorageError.Code
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = pid, 0
	return resp
}

// AllocProducerID hands out a new producer id (the transaction coordinator's too): monotonic
// across restarts, reserved in durable blocks.
func (p *Plane) AllocProducerID() (int64, error) { return p.allocProducerID() }

func (p *Plane) allocProducerID() (int64, error) {
	p.pidMu.Lock()
	defer p.pidMu.Unlock()
	if p.pidLimit == 0 || p.pidNext >= p.pidLimit {
		reserve := p.st.ReserveProducerIDs
		if blocks := p.cfg.ProducerIDBlocks; blocks != nil {
			reserve = blocks
		}
		first, err := reserve(producerIDBlock)
		if err != nil {
			return 0, err
		}
		p.pidNext, p.pidLimit = first, first+producerIDBlock
	}
	pid := p.pidNext
	p.pidNext++
	return pid, nil
}
