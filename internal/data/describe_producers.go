package data

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeProducers answers DescribeProducers v0 (KIP-664, Kafka's
// ReplicaManager.activeProducerState): per partition, the producers with state there (sorted by
// id) with their epoch, last sequence (-1 when only a marker is known), last append time,
// coordinator epoch of their last marker (-1: none) and the first offset of their open
// transaction (-1: none). Errors: UNKNOWN_TOPIC_OR_PARTITION.
func (p *Plane) DescribeProducers(ctx context.Context, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		_, parts := p.lookup(rt.Topic)
		for _, idx := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = idx
			if idx < 0 || int(idx) >= len(parts) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				sp.ActiveProducers = parts[idx].activeProducers()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// ProducerInfo is one producer's state in a partition (DescribeProducers).
type ProducerInfo = kmsg.DescribeProducersResponseTopicPartitionActiveProducer

func (p *partition) activeProducers() []ProducerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ProducerInfo, 0, len(p.producers))
	for pid, ps := range p.producers {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch = pid, int32(ps.epoch)
		ap.LastSequence, ap.LastTimestamp = -1, ps.lastAppend
		if n := len(ps.batches); n > 0 {
			ap.LastSequence = ps.batches[n-1].lastSeq
		}
		ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = ps.coordEpoch, -1
		if ot := p.openTxns[pid]; ot != nil && !ot.closing {
			ap.CurrentTxnStartOffset = ot.first
		}
		out = append(out, ap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// PartitionTxnStats is a partition's transaction view for metrics: its high watermark, last
// stable offset and open transactions.
type PartitionTxnStats struct {
	Topic          string
	Partition      int32
	HighWatermark  int64
	LastStable     int64
	OpenTxns       int
	OldestOpenTxn  int64 // first offset of the earliest open transaction; -1: none
	AbortedIndexed int
}

// TxnStats reads every partition's PartitionTxnStats (partitions without transactions have
// LastStable = HighWatermark and OpenTxns = 0).
func (p *Plane) TxnStats() []PartitionTxnStats {
	var out []PartitionTxnStats
	for _, t := range p.sortedTopics() {
		p.mu.RLock()
		parts := t.parts
		p.mu.RUnlock()
		for _, part := range parts {
			part.mu.Lock()
			out = append(out, PartitionTxnStats{Topic: t.name, Partition: part.index, HighWatermark: part.hw,
				LastStable: part.lsoLocked(), OpenTxns: len(part.openTxns), OldestOpenTxn: part.firstUnstable,
				AbortedIndexed: len(part.aborted)})
			part.mu.Unlock()
		}
	}
	return out
}
