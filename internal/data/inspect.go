package data

import (
	"github.com/cockroachdb/pebble/v2"
)

// BatchTimestamp returns the timestamp (Unix ms) of the stored batch that holds offset, or of
// the first batch after it when compaction removed the offset: the batch's first timestamp, or
// its append time with LogAppendTime. Lag monitoring takes it as the age of the first
// unconsumed record without decoding records. ok is false for an unknown partition, an offset
// at or past the high watermark or below the log start, or a batch without timestamps.
func (p *Plane) BatchTimestamp(topicName string, partition int32, offset int64) (int64, bool) {
	t, parts := p.lookup(topicName)
	if t == nil || partition < 0 || int(partition) >= len(parts) {
		return 0, false
	}
	logStart, hw := parts[partition].offsets()
	if offset >= hw || offset < logStart {
		return 0, false
	}
	prefix := partPrefix(kindLog, t.id, partition)
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: logKey(t.id, partition, hw)})
	if err != nil {
		return 0, false
	}
	defer it.Close()
	ok := it.SeekLT(logKey(t.id, partition, offset+1))
	if ok {
		if h, hok := readBatchHeader(it.Value()); !hok || h.lastOffset() < offset {
			ok = it.Next()
		}
	} else {
		ok = it.First()
	}
	if !ok {
		return 0, false
	}
	h, hok := readBatchHeader(it.Value())
	if !hok {
		return 0, false
	}
	ts := h.FirstTimestamp
	if h.Attributes&attrLogAppendTime != 0 {
		ts = h.MaxTimestamp
	}
	return ts, ts >= 0
}

// PartitionStats is one partition as the console shows it.
type PartitionStats struct {
	Partition     int32
	LogStart      int64
	HighWatermark int64
	// Bytes is the stored size of the partition's batches (an overestimate after retention or
	// DeleteRecords cut into a segment, until the cleaner rewrites it).
	Bytes    int64
	Segments int
}

// TopicStats returns the partitions of a topic with their offsets and sizes.
func (p *Plane) TopicStats(topicName string) ([]PartitionStats, bool) {
	t, parts := p.lookup(topicName)
	if t == nil {
		return nil, false
	}
	out := make([]PartitionStats, len(parts))
	for i, part := range parts {
		part.mu.Lock()
		st := PartitionStats{Partition: int32(i), LogStart: part.logStart, HighWatermark: part.hw, Segments: len(part.segs)}
		for _, s := range part.segs {
			st.Bytes += s.bytes
		}
		part.mu.Unlock()
		out[i] = st
	}
	return out, true
}
