package data

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rejectTimestamps applies Kafka's LogValidator.validateTimestamp to a produced batch: on a
// CreateTime topic every record whose timestamp (other than -1, none) lies more than
// message.timestamp.before.max.ms before now or message.timestamp.after.max.ms after it is an
// error; on a LogAppendTime topic a batch the producer marked LogAppendTime is. Any such record
// rejects the whole batch with INVALID_TIMESTAMP and one record error per offending record
// (LogValidator.processRecordErrors). It reports whether the batch was rejected.
func rejectTimestamps(sp *kmsg.ProduceResponseTopicPartition, records []byte, h batchHeader, lc *logConfig, now int64) bool {
	var bad []int32
	var msgs []string
	if lc.logAppendTime {
		if h.Attributes&attrLogAppendTime == 0 {
			return false
		}
		for i := int32(0); i < h.NumRecords; i++ {
			bad = append(bad, i)
			msgs = append(msgs, "Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.")
		}
	} else {
		lo, hi := satSub(now, lc.timestampBeforeMs), satAdd(now, lc.timestampAfterMs)
		// The common case decodes nothing: no lower bound (the default) and the batch's max
		// timestamp in range.
		if lc.timestampBeforeMs == math.MaxInt64 && h.MaxTimestamp <= hi {
			return false
		}
		recs, err := decompress(h.Attributes&attrCompressionMask, records[batchHeaderSize:h.size()], maxDecompressedBatch)
		if err != nil {
			return false
		}
		i := int32(0)
		_ = readRecords(recs, h.NumRecords, func(r *rawRecord) bool {
			ts := h.FirstTimestamp + r.tsDelta
			if h.Attributes&attrLogAppendTime != 0 {
				ts = h.MaxTimestamp
			}
			if ts != -1 && (ts < lo || ts > hi) {
				bad = append(bad, i)
				msgs = append(msgs, fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
					ts, r.offsetDelta, lo, hi))
			}
			i++
			return true
		})
	}
	if len(bad) == 0 {
		return false
	}
	for n, i := range bad {
		re := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		m := msgs[n]
		re.RelativeOffset, re.ErrorMessage = i, &m
		sp.ErrorRecords = append(sp.ErrorRecords, re)
	}
	summary := "One or more records have been rejected due to invalid timestamp"
	sp.ErrorCode = kerr.InvalidTimestamp.Code
	sp.ErrorMessage = &summary
	return true
}

func satSub(a, b int64) int64 {
	if b > 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
