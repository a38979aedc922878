package txnapi

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// WriteTxnMarkers serves WriteTxnMarkers v0–v1 (Kafka's handleWriteTxnMarkersRequest, sent by
// transaction coordinators and by operators aborting a hanging transaction, KIP-664; the caller
// authorizes CLUSTER_ACTION): each marker is written into each of its partitions — a data
// partition through the data plane, a __consumer_offsets partition to its group coordinator
// shard — and each partition answers its own error (UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, ...). The transaction coordinator's
// own state is not changed.
func (s *Service) WriteTxnMarkers(ctx context.Context, meta coordinator.Meta, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(t.Partitions))
			var wg sync.WaitGroup
			for i, p := range t.Partitions {
				rt.Partitions[i] = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rt.Partitions[i].Partition = p
				wg.Add(1)
				go func(i int, p int32) {
					defer wg.Done()
					err := s.writeMarker(ctx, txn.TopicPartition{Topic: t.Topic, Partition: p}, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch)
					rt.Partitions[i].ErrorCode = codeOf(err)
				}(i, p)
			}
			wg.Wait()
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}
