package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/security"
)

// authorizeTxnOffsetCommit authorizes TxnOffsetCommit as KafkaApis.handleTxnOffsetCommitRequest
// does: WRITE on the transactional id (denied: TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every
// partition), then READ on the group (denied: GROUP_AUTHORIZATION_FAILED on every partition),
// then READ on each topic (denied: TOPIC_AUTHORIZATION_FAILED on its partitions, which never
// reach the shard). The unknown-topic check comes after authorization (TxnOffsetCommit).
func (s *Service) authorizeTxnOffsetCommit(ctx context.Context, r Req, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	if err := r.Check.Denied(security.OpWrite, security.TransactionalID, req.TransactionalID); err != nil {
		return coordinator.TxnOffsetCommitResponse(req, err)
	}
	if err := r.Check.Group(req.Group); err != nil {
		return coordinator.TxnOffsetCommitResponse(req, err)
	}
	if r.open() {
		return s.TxnOffsetCommit(ctx, r.Meta, req)
	}
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	allowed := r.topicsAllowed(security.OpRead, names)
	if allAllowed(allowed) {
		return s.TxnOffsetCommit(ctx, r.Meta, req)
	}
	sub := *req
	sub.Topics = nil
	for _, t := range req.Topics {
		if allowed[t.Topic] {
			sub.Topics = append(sub.Topics, t)
		}
	}
	codes := map[topicPartition]int16{}
	if len(sub.Topics) > 0 {
		got := s.TxnOffsetCommit(ctx, r.Meta, &sub)
		for _, t := range got.Topics {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
			}
		}
	}
	out := coordinator.TxnOffsetCommitResponse(req, nil)
	for i := range out.Topics {
		t := &out.Topics[i]
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			if !allowed[t.Topic] {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				continue
			}
			code, ok := codes[topicPartition{t.Topic, rp.Partition}]
			if !ok {
				code = deniedOr(false)
			}
			rp.ErrorCode = code
		}
	}
	return out
}
