package api

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
)

// ShareLog is the data plane as share fetches read it (Kafka's ReplicaManager as
// SharePartitionManager uses it); internal/data's Plane implements it.
type ShareLog interface {
	// PartitionOffsets returns the log start offset and high watermark; UNKNOWN_TOPIC_ID or
	// UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist.
	PartitionOffsets(topicID [16]byte, partition int32) (logStart, hw int64, err error)
	// ReadRange returns the stored batches holding offsets in [from, to], the first one whole
	// even beyond maxBytes.
	ReadRange(topicID [16]byte, partition int32, from, to int64, maxBytes int) ([]byte, error)
	// WatchPartition signals ch (without blocking) when the high watermark moves.
	WatchPartition(topicID [16]byte, partition int32, ch chan struct{}) (cancel func())
	// OffsetForTimestamp is the first offset whose record's timestamp is at or after ts.
	OffsetForTimestamp(topicID [16]byte, partition int32, ts int64) (int64, error)
}

// defaultShareMaxRecords is what a ShareFetch without MaxRecords acquires at most (kgo's
// default ShareMaxRecords).
const defaultShareMaxRecords = 500

// maxShareMemberIDLength: member ids are UUIDs; Kafka rejects longer ones on ShareFetch.
const maxShareMemberIDLength = 36

// ackIn is one partition's acknowledgement batches as a request carries them.
type ackIn struct {
	id      coordinator.SharePartitionID
	batches []coordinator.ShareAckBatch
}

// checkAcks validates acknowledgement batches as Kafka's KafkaApis and SharePartition do before
// touching any state: each batch's offsets in order, not overlapping the previous batch, one
// type for the batch or one per offset, each type known (RENEW only in a renew request). It
// returns INVALID_REQUEST, or nil.
func checkAcks(batches []coordinator.ShareAckBatch, renew bool) error {
	maxType := coordinator.AckReject
	if renew {
		maxType = coordinator.AckRenew
	}
	prev := int64(-1)
	for i := range batches {
		b := &batches[i]
		switch {
		case b.First > b.Last:
			return coordinator.Errf(kerr.InvalidRequest, "The first offset %d of an acknowledgement batch is past its last offset %d.", b.First, b.Last)
		case b.First <= prev:
			return coordinator.Errf(kerr.InvalidRequest, "Acknowledgement batches must be sorted and must not overlap.")
		case len(b.Types) == 0:
			return coordinator.Errf(kerr.InvalidRequest, "An acknowledgement batch must have acknowledge types.")
		case len(b.Types) > 1 && int64(len(b.Types)) != b.Last-b.First+1:
			return coordinator.Errf(kerr.InvalidRequest, "An acknowledgement batch must have one acknowledge type or one per offset.")
		}
		for _, t := range b.Types {
			if t < 0 || t > maxType {
				return coordinator.Errf(kerr.InvalidRequest, "Invalid acknowledge type: %d.", t)
			}
		}
		prev = b.Last
	}
	return nil
}

// splitAcks separates the partitions whose acknowledgements may go to the shard from those
// answered at once (an unknown topic, malformed batches, or every one while the store refuses
// writes: an acknowledgement is a write, writes.go).
func (s *Service) splitAcks(in []ackIn, renew bool) (ok []coordinator.ShareAckPartition, failed map[coordinator.SharePartitionID]error) {
	failed = map[coordinator.SharePartitionID]error{}
	if len(in) > 0 {
		if err := s.refuseWrite(); err != nil {
			for _, a := range in {
				failed[a.id] = err
			}
			return nil, failed
		}
	}
	im := s.image()
	for _, a := range in {
		var partitions int32 = -1
		if im != nil {
			name, known := im.TopicName(a.id.TopicID)
			if !known {
				failed[a.id] = kerr.UnknownTopicID
				continue
			}
			_, partitions, _ = im.TopicID(name)
		}
		if err := checkAcks(a.batches, renew); err != nil {
			failed[a.id] = err
			continue
		}
		// A partition the topic does not have, once its batches are well formed (Kafka's
		// KafkaApis.handleAcknowledgements checks the metadata cache after
		// validateAcknowledgementBatches).
		if partitions >= 0 && (a.id.Partition < 0 || a.id.Partition >= partitions) {
			failed[a.id] = kerr.UnknownTopicOrPartition
			continue
		}
		ok = append(ok, coordinator.ShareAckPartition{SharePartitionID: a.id, Batches: a.batches})
	}
	return ok, failed
}

// lastBatchOffset is the last offset of the last record batch in b (-1: none).
func lastBatchOffset(b []byte) int64 {
	last := int64(-1)
	for len(b) >= 27 {
		base := int64(binary.BigEndian.Uint64(b))
		n := int(int32(binary.BigEndian.Uint32(b[8:])))
		if n < 15 || 12+n > len(b) {
			break
		}
		last = base + int64(int32(binary.BigEndian.Uint32(b[23:])))
		b = b[12+n:]
	}
	return last
}

// splitRanges cuts acquired ranges into runs of at most n offsets (KIP-1206 BatchSize in the
// batch-optimized acquire mode).
func splitRanges(rs []coordinator.ShareRange, n int32) []coordinator.ShareRange {
	if n <= 0 {
		return rs
	}
	var out []coordinator.ShareRange
	for _, r := range rs {
		for f := r.First; f <= r.Last; f += int64(n) {
			out = append(out, coordinator.ShareRange{First: f, Last: min(f+int64(n)-1, r.Last), DeliveryCount: r.DeliveryCount})
		}
	}
	return out
}

// cutRanges splits ranges at end: those parts up to end, and those after it.
func cutRanges(rs []coordinator.ShareRange, end int64) (kept, rest []coordinator.ShareRange) {
	for _, r := range rs {
		switch {
		case r.Last <= end:
			kept = append(kept, r)
		case r.First > end:
			rest = append(rest, r)
		default:
			kept = append(kept, coordinator.ShareRange{First: r.First, Last: end, DeliveryCount: r.DeliveryCount})
			rest = append(rest, coordinator.ShareRange{First: end + 1, Last: r.Last, DeliveryCount: r.DeliveryCount})
		}
	}
	return kept, rest
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
