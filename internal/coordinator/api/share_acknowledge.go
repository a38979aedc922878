package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ShareAcknowledge serves ShareAcknowledge v1–v2 (KIP-932, KIP-1222; Kafka's
// KafkaApis.handleShareAcknowledgeRequest): the acknowledgements are applied on the group's
// shard and durable before the answer. The share session's epoch must match (0 is
// INVALID_SHARE_SESSION_EPOCH: sessions open with ShareFetch); -1 closes the session after the
// acknowledgements and releases what the member still holds on its partitions, taking those
// deliveries back. Per-partition errors: UNKNOWN_TOPIC_ID, INVALID_REQUEST for malformed
// batches, INVALID_RECORD_STATE for records the member does not hold.
func (s *Service) ShareAcknowledge(ctx context.Context, meta coordinator.Meta, req *kmsg.ShareAcknowledgeRequest) *kmsg.ShareAcknowledgeResponse {
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	resp.AcquisitionLockTimeoutMillis = int32(s.Cfg.Share.RecordLockDuration / time.Millisecond)
	fail := func(err error) *kmsg.ShareAcknowledgeResponse {
		resp.ErrorCode, resp.ErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
		return resp
	}
	group, member := strOf(req.GroupID), strOf(req.MemberID)
	switch {
	case !s.Cfg.Share.Enabled:
		return fail(kerr.UnsupportedVersion)
	case group == "":
		return fail(coordinator.Errf(kerr.InvalidRequest, "GroupId can't be empty."))
	case member == "" || len(member) > maxShareMemberIDLength:
		return fail(coordinator.Errf(kerr.InvalidRequest, "Invalid member id %q.", member))
	}
	renew := req.Version >= 2 && req.IsRenewAck
	var acks []ackIn
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			a := ackIn{id: coordinator.SharePartitionID{TopicID: t.TopicID, Partition: p.Partition}}
			for _, b := range p.AcknowledgementBatches {
				a.batches = append(a.batches, coordinator.ShareAckBatch{First: b.FirstOffset, Last: b.LastOffset, Types: b.AcknowledgeTypes})
			}
			acks = append(acks, a)
		}
	}
	okAcks, failedAcks := s.splitAcks(acks, renew)
	key := shareSessionKey{group: group, member: member}
	sreq := &coordinator.ShareRequest{Group: group, Member: member, Acks: okAcks}
	switch req.ShareSessionEpoch {
	case 0:
		return fail(kerr.InvalidShareSessionEpoch)
	case -1:
		sess := s.closeShareSession(key)
		if sess == nil {
			return fail(kerr.ShareSessionNotFound)
		}
		sreq.Release, sreq.UndoDelivery = sess.parts, true
	default:
		if _, _, err := s.useShareSession(key, req.ShareSessionEpoch, nil, nil); err != nil {
			return fail(err)
		}
	}
	res, err := do(ctx, s, group, meta, coordinator.Share(sreq))
	if err != nil {
		return fail(err)
	}
	if req.Version >= 2 {
		resp.AcquisitionLockTimeoutMillis = int32(res.LockDuration / time.Millisecond)
	}
	add := func(id coordinator.SharePartitionID, err error) {
		ti := -1
		for i := range resp.Topics {
			if resp.Topics[i].TopicID == id.TopicID {
				ti = i
			}
		}
		if ti < 0 {
			t := kmsg.NewShareAcknowledgeResponseTopic()
			t.TopicID = id.TopicID
			resp.Topics = append(resp.Topics, t)
			ti = len(resp.Topics) - 1
		}
		p := kmsg.NewShareAcknowledgeResponseTopicPartition()
		p.Partition = id.Partition
		p.ErrorCode, p.ErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
		resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, p)
	}
	for _, r := range res.Acks {
		add(r.SharePartitionID, r.Err)
	}
	for _, a := range acks {
		if err, ok := failedAcks[a.id]; ok {
			add(a.id, err)
		}
	}
	return resp
}
