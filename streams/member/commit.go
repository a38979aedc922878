package member

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Offset is one offset to commit: the next record to process of a
// partition of a task's input topic.
type Offset struct {
	Topic     string
	Partition int32
	Offset    int64
	// LeaderEpoch is the leader epoch of the record before Offset; -1 if
	// unknown.
	LeaderEpoch int32
	Metadata    string
}

// offsetCommitV9 pins OffsetCommit to v9: the first version a KIP-848 /
// KIP-1071 member may use, and the last that names topics (v10 uses topic
// ids).
type offsetCommitV9 struct{ *kmsg.OffsetCommitRequest }

func (offsetCommitV9) MaxVersion() int16 { return 9 }

// CommitTaskOffsets commits offsets for the member's tasks with
// OffsetCommit v9, carrying the member id and member epoch (as
// GenerationIDOrMemberEpoch) so that a fenced or stale member is refused
// (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID). It may be called from OnRevoked
// (before the revoked tasks are acknowledged) or from any goroutine. The
// error joins every partition error as "topic[partition]: error".
func (m *Member) CommitTaskOffsets(ctx context.Context, offsets []Offset) error {
	if len(offsets) == 0 {
		return nil
	}
	select {
	case <-m.done:
		return ErrClosed
	default:
	}
	m.mu.Lock()
	memberID, epoch := m.snap.memberID, m.snap.epoch
	m.mu.Unlock()
	coord, err := m.coordinator(ctx)
	if err != nil {
		return fmt.Errorf("member: commit: find coordinator: %w", err)
	}
	sorted := slices.Clone(offsets)
	slices.SortStableFunc(sorted, func(a, b Offset) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = memberID
	req.Generation = epoch
	if m.cfg.InstanceID != "" {
		s := m.cfg.InstanceID
		req.InstanceID = &s
	}
	for _, o := range sorted {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != o.Topic {
			t := kmsg.NewOffsetCommitRequestTopic()
			t.Topic = o.Topic
			req.Topics = append(req.Topics, t)
		}
		t := &req.Topics[len(req.Topics)-1]
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = o.Partition, o.Offset, o.LeaderEpoch
		md := o.Metadata
		p.Metadata = &md
		t.Partitions = append(t.Partitions, p)
	}
	kresp, err := m.request(ctx, coord, offsetCommitV9{req})
	if err != nil {
		return fmt.Errorf("member: commit: %w", err)
	}
	resp := kresp.(*kmsg.OffsetCommitResponse)
	var errs []error
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", t.Topic, p.Partition, e))
			}
		}
	}
	return errors.Join(errs...)
}
