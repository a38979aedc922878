package data

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch returns whole stored batches from each partition's FetchOffset
// (starting with the batch containing it) up to the high watermark, or for
// IsolationLevel 1 (read_committed) up to the last stable offset with the
// aborted transactions of the returned range (txn.go).
//
// Sizes follow KIP-74: PartitionMaxBytes bounds each partition and MaxBytes
// (v3+) the response, but the first batch of the first partition with data is
// returned even when larger. When fewer than MinBytes are available the fetch
// waits up to MaxWaitMillis, woken by produces to the requested partitions
// (or ctx cancellation, which returns what is available).
//
// Errors per partition: UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID (v13+),
// OFFSET_OUT_OF_RANGE outside [log start, high watermark], UNKNOWN_LEADER_EPOCH
// for CurrentLeaderEpoch > 0. Fetch sessions (v7+) are declined: SessionID 0
// in every response. As in Kafka's FetchManager.newContext, a full request
// (SessionEpoch 0, or -1 to close) is served whatever SessionID it names (that
// session is closed); an incremental one (any other epoch) names a session
// that does not exist: FETCH_SESSION_ID_NOT_FOUND.
func (p *Plane) Fetch(ctx context.Context, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if req.Version >= 7 && req.SessionEpoch != 0 && req.SessionEpoch != -1 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp
	}
	wake := make(chan struct{}, 1)
	var (
		registered []*partition
		timer      *time.Timer
	)
	defer func() {
		for _, part := range registered {
			part.removeWaiter(wake)
		}
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		resp.Topics = resp.Topics[:0]
		total, hasErr, parts := p.fetchOnce(req, resp)
		if hasErr || int64(total) >= int64(req.MinBytes) || req.MaxWaitMillis <= 0 || ctx.Err() != nil {
			return resp
		}
		if registered == nil {
			for _, part := range parts {
				part.addWaiter(wake)
			}
			registered = append([]*partition{}, parts...)
			timer = time.NewTimer(time.Duration(req.MaxWaitMillis) * time.Millisecond)
			continue // re-read: a produce may have landed before we registered
		}
		select {
		case <-wake:
		case <-timer.C:
			return resp
		case <-ctx.Done():
			return resp
		}
	}
}

// fetchOnce fills resp from the current logs and returns the record bytes
// returned, whether any partition had an error, and the partitions read.
func (p *Plane) fetchOnce(req *kmsg.FetchRequest, resp *kmsg.FetchResponse) (total int, hasErr bool, read []*partition) {
	maxBytes := int(req.MaxBytes)
	if req.Version < 3 || maxBytes <= 0 {
		maxBytes = int(^uint(0) >> 1)
	}
	byID := req.Version >= 13
	readCommitted := req.IsolationLevel == 1
	first := true // KIP-74: the first batch of the first non-empty partition is always returned
	for _, rt := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var t *topic
		var parts []*partition
		missing := kerr.UnknownTopicOrPartition
		if byID {
			t, parts = p.lookupID(rt.TopicID)
			missing = kerr.UnknownTopicID
		} else {
			t, parts = p.lookup(rt.Topic)
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.RecordBatches = []byte{} // empty, not null: librdkafka rejects a -1 size
			switch {
			case t == nil:
				sp.ErrorCode = missing.Code
			case rp.Partition < 0 || int(rp.Partition) >= len(parts):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
			if sp.ErrorCode != 0 {
				hasErr = true
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			part := parts[rp.Partition]
			read = append(read, part)
			logStart, hw, lso, epoch, led := part.leaderState()
			if kerrCode := leaderCheck(led, epoch, rp.CurrentLeaderEpoch, req.Version >= 9); kerrCode != nil {
				sp.ErrorCode = kerrCode.Code
				hasErr = true
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hw, lso, logStart
			if rp.FetchOffset < logStart || rp.FetchOffset > hw {
				sp.ErrorCode = kerr.OffsetOutOfRange.Code
				hasErr = true
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			// read_committed (KIP-98) reads up to the last stable offset and reports the
			// aborted transactions of what it returns; read_uncommitted reads up to the high
			// watermark, aborted records included, and reports none (null).
			upper := hw
			if readCommitted {
				upper = lso
				sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			}
			limit := min(int(rp.PartitionMaxBytes), maxBytes-total)
			if limit < 0 {
				limit = 0
			}
			if rp.FetchOffset < upper && (limit > 0 || first) {
				recs, end, err := p.readBatches(t.id, part.index, rp.FetchOffset, upper, limit, first)
				if err != nil {
					p.log.Error("fetch read", "topic", t.name, "partition", part.index, "err", err)
					sp.ErrorCode = kerr.KafkaStorageError.Code
					hasErr = true
				} else if len(recs) > 0 {
					sp.RecordBatches = recs
					total += len(recs)
					first = false
					if readCommitted {
						sp.AbortedTransactions = part.abortedIn(rp.FetchOffset, end)
					}
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return total, hasErr, read
}

// readBatches returns the stored batches of one partition from the batch
// containing offset up to (not including) hw, at most limit bytes unless
// atLeastOne and the first batch alone exceeds it, and one past the last
// offset returned.
func (p *Plane) readBatches(id [16]byte, index int32, offset, hw int64, limit int, atLeastOne bool) ([]byte, int64, error) {
	var out []byte
	end := offset
	err := p.st.Read(PartitionID{id, index}, offset, hw, func(v []byte) bool {
		if len(out)+len(v) > limit && !(atLeastOne && len(out) == 0) {
			return false
		}
		out = append(out, v...)
		if h, hok := readBatchHeader(v); hok {
			end = h.lastOffset() + 1
		}
		return true
	})
	return out, end, err
}
