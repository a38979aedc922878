package data

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// Special ListOffsets timestamps (Kafka's ListOffsetsRequest constants).
const (
	tsLatest              = -1
	tsEarliest            = -2
	tsMaxTimestamp        = -3 // KIP-734, v7+
	tsEarliestLocal       = -4 // KIP-405, v8+
	tsLatestTiered        = -5 // KIP-1005, v9+
	tsEarliestPendingUpld = -6 // KIP-1023, v11+
)

// timestampMinVersion is the first ListOffsets version that defines each special timestamp
// (Kafka's ReplicaManager.timestampMinSupportedVersion).
var timestampMinVersion = map[int64]int16{
	tsLatest:              1,
	tsEarliest:            1,
	tsMaxTimestamp:        7,
	tsEarliestLocal:       8,
	tsLatestTiered:        9,
	tsEarliestPendingUpld: 11,
}

// timestampUnsupported is Kafka's ReplicaManager.isListOffsetsTimestampUnsupported: a negative
// timestamp that is no special value, or one the request's version does not define yet.
func timestampUnsupported(ts int64, version int16) bool {
	if ts >= 0 {
		return false
	}
	min, ok := timestampMinVersion[ts]
	return !ok || version < min
}

// ListOffsets answers per partition: earliest (-2, and earliest-local -4) →
// log start offset; latest (-1) → high watermark (the last stable offset for
// read_committed, whose answers all stop there); max-timestamp (-3) → the first record with
// the largest timestamp; latest-tiered (-5) and earliest-pending-upload (-6)
// → offset -1 (no tiered storage: Kafka's UnifiedLog answers so for a topic
// without remote storage); a timestamp ≥ 0 → the first record at or after the
// log start offset whose timestamp is ≥ it, or offset -1 when none.
// Compressed batches are decompressed to find the record, as Kafka does;
// only a batch whose records cannot be decoded is approximated by the batch
// (base offset, or last offset for -3). v10's TimeoutMillis bounds remote
// storage lookups, which muster never makes.
// Errors, in Kafka's order: INVALID_REQUEST for a partition listed twice,
// UNSUPPORTED_VERSION for a special timestamp the version does not define
// (-3 needs v7, -4 v8, -5 v9, -6 v11; any other negative value is never
// defined), UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_LEADER_EPOCH (epoch > 0).
func (p *Plane) ListOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	type tp struct {
		topic     string
		partition int32
	}
	seen := make(map[tp]int)
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[tp{rt.Topic, rp.Partition}]++
		}
	}
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		t, parts := p.lookup(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			switch {
			case seen[tp{rt.Topic, rp.Partition}] > 1:
				sp.ErrorCode = kerr.InvalidRequest.Code
			case timestampUnsupported(rp.Timestamp, req.Version):
				sp.ErrorCode = kerr.UnsupportedVersion.Code
			case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(parts):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				part := parts[rp.Partition]
				_, _, _, epoch, led := part.leaderState()
				if code := leaderCheck(led, epoch, rp.CurrentLeaderEpoch, req.Version >= 4); code != nil {
					sp.ErrorCode = code.Code
					break
				}
				off, ts, err := p.listOffset(t, part, rp.Timestamp, req.Version >= 2 && req.IsolationLevel == 1)
				if err != nil {
					p.log.Error("list offsets", "topic", t.name, "err", err)
					sp.ErrorCode = kerr.KafkaStorageError.Code
					break
				}
				sp.Offset, sp.Timestamp = off, ts
				if off >= 0 {
					sp.LeaderEpoch = epoch
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// listOffset answers one partition. read_committed (isolation level 1) bounds every answer by
// the last stable offset instead of the high watermark, as Kafka's
// ReplicaManager.fetchOffsetForTimestamp does: latest is the LSO, and a record found at or past
// it is not found.
func (p *Plane) listOffset(t *topic, part *partition, ts int64, readCommitted bool) (offset, timestamp int64, err error) {
	logStart, hw, lso := part.stableOffsets()
	if readCommitted {
		hw = lso
	}
	switch ts {
	case tsLatest:
		return hw, -1, nil
	case tsEarliest, tsEarliestLocal:
		return logStart, -1, nil
	case tsMaxTimestamp:
		return p.maxTimestampOffset(t, part, hw)
	}
	if ts < 0 {
		return -1, -1, nil
	}
	return p.offsetForTimestamp(t, part, logStart, hw, ts)
}

// scanBatches calls fn for every stored batch of part below hw, in order.
func (p *Plane) scanBatches(id [16]byte, index int32, hw int64, fn func(v []byte, h batchHeader) bool) error {
	return p.st.Read(PartitionID{id, index}, 0, hw, func(v []byte) bool {
		h, hok := readBatchHeader(v)
		if !hok {
			return true
		}
		return fn(v, h)
	})
}

// offsetForTimestamp finds the first record at or after logStart (records
// of a batch that DeleteRecords cut into are skipped, as Kafka does) whose
// timestamp is ≥ target.
func (p *Plane) offsetForTimestamp(t *topic, part *partition, logStart, hw, target int64) (int64, int64, error) {
	off, ts := int64(-1), int64(-1)
	err := p.scanBatches(t.id, part.index, hw, func(v []byte, h batchHeader) bool {
		if h.MaxTimestamp < target || h.lastOffset() < logStart {
			return true
		}
		found := false
		decoded := recordOffsets(v, h, func(o, rts int64) bool {
			if rts >= target && o >= logStart {
				off, ts, found = o, rts, true
				return false
			}
			return true
		})
		switch {
		case found:
			return false
		case decoded:
			return true // no record of this batch qualifies (all before logStart)
		}
		// Undecodable records: approximate by the batch.
		off, ts = max(h.BaseOffset, logStart), h.MaxTimestamp
		return false
	})
	return off, ts, err
}

func (p *Plane) maxTimestampOffset(t *topic, part *partition, hw int64) (int64, int64, error) {
	off, ts := int64(-1), int64(-1)
	err := p.scanBatches(t.id, part.index, hw, func(v []byte, h batchHeader) bool {
		if h.MaxTimestamp <= ts {
			return true
		}
		ts, off = h.MaxTimestamp, h.lastOffset()
		recordOffsets(v, h, func(o, rts int64) bool {
			if rts == h.MaxTimestamp {
				off = o
				return false
			}
			return true
		})
		return true
	})
	return off, ts, err
}

// OffsetForLeaderEpoch answers with the end offset (high watermark) of leader
// epoch 0, the only epoch; a requested epoch > 0 is unknown to this log
// (epoch -1, offset -1, as Kafka answers for an epoch past the latest), and so
// is the undefined epoch -1.
// Errors: UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_LEADER_EPOCH (current epoch > 0).
func (p *Plane) OffsetForLeaderEpoch(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		_, parts := p.lookup(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			switch {
			case rp.Partition < 0 || int(rp.Partition) >= len(parts):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				_, hw, _, epoch, led := parts[rp.Partition].leaderState()
				if code := leaderCheck(led, epoch, rp.CurrentLeaderEpoch, req.Version >= 2); code != nil {
					sp.ErrorCode = code.Code
				} else if rp.LeaderEpoch == -1 {
					// An undefined epoch has no end offset: epoch -1, offset -1 (Kafka's
					// LeaderEpochFileCache.endOffsetFor).
				} else if rp.LeaderEpoch <= epoch {
					// The log is never truncated (no acknowledged record is lost when the
					// leader moves): every earlier epoch ends where the log ends.
					sp.LeaderEpoch, sp.EndOffset = max(rp.LeaderEpoch, 0), hw
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// DeleteRecords advances each partition's log start offset to Offset (-1 =
// the high watermark) and deletes the batches wholly below it; the batch
// containing the new start is kept (fetches skip its earlier records client
// side, as in Kafka). LowWatermark is the resulting log start offset.
// Errors: INVALID_TOPIC_EXCEPTION for an internal topic (Kafka's
// ReplicaManager.deleteRecordsOnLocalLog), UNKNOWN_TOPIC_OR_PARTITION,
// OFFSET_OUT_OF_RANGE (offset > HW or < -1), POLICY_VIOLATION when the topic's cleanup.policy lacks "delete" (Kafka's
// Partition.deleteRecordsOnLeader).
func (p *Plane) DeleteRecords(ctx context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		t, parts := p.lookup(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			switch {
			case t != nil && t.internal:
				sp.ErrorCode = kerr.InvalidTopicException.Code // Kafka: "Cannot delete records of internal topic"
			case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(parts):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				lw, code := p.deleteRecords(t, parts[rp.Partition], rp.Offset)
				sp.LowWatermark = lw
				if code != nil {
					sp.ErrorCode = code.Code
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (p *Plane) deleteRecords(t *topic, part *partition, offset int64) (int64, *kerr.Error) {
	t.life.RLock()
	defer t.life.RUnlock()
	if t.deleted {
		return -1, kerr.UnknownTopicOrPartition
	}
	if !t.logConfig().delete {
		return -1, kerr.PolicyViolation
	}
	part.logMu.Lock()
	defer part.logMu.Unlock()
	part.mu.Lock()
	defer part.mu.Unlock()
	if !part.led {
		return -1, kerr.NotLeaderForPartition
	}
	if offset == -1 {
		offset = part.hw
	}
	if offset < 0 || offset > part.hw {
		return -1, kerr.OffsetOutOfRange
	}
	if offset <= part.logStart {
		return part.logStart, nil
	}
	// Keep the batch containing offset: delete batches below its base.
	cut := offset
	err := p.st.Read(PartitionID{t.id, part.index}, offset, offset+1, func(v []byte) bool {
		if h, ok := readBatchHeader(v); ok && h.BaseOffset <= offset && h.lastOffset() >= offset {
			cut = h.BaseOffset
		}
		return false
	})
	if err != nil {
		return -1, kerr.KafkaStorageError
	}
	if err := p.commitLogStart(t, part, cut, offset, diskguard.DeleteRecords); err != nil {
		if !errors.Is(err, diskguard.ErrRefused) && !errors.Is(err, ErrFenced) {
			p.log.Error("delete records", "topic", t.name, "err", err)
		}
		go p.writeFailed(part, part.epoch, err) // part.mu is held
		return -1, p.writeError(err)
	}
	return offset, nil
}
