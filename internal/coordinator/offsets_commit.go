package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit handles OffsetCommit v2–v9 (Kafka's OffsetMetadataManager.commitOffset;
// the wire handler first answers partitions of unknown topics UNKNOWN_TOPIC_OR_PARTITION):
// group/member validation per group type, OFFSET_METADATA_TOO_LARGE per partition, commits
// outside any group create a "simple" group, v2–v4 retention sets an expire timestamp. v0–v1
// answer UNSUPPORTED_VERSION (KIP-896).
func OffsetCommit(req *kmsg.OffsetCommitRequest) func(st *State, c *Call[*kmsg.OffsetCommitResponse]) {
	return func(st *State, c *Call[*kmsg.OffsetCommitResponse]) {
		resp := offsetCommitResponse(req)
		err := validateOffsetCommit(st, req)
		perr, _ := err.(*PartitionErrors) // KIP-1251: only some partitions are rejected
		if err != nil && perr == nil {
			setAllCommitErrors(resp, err)
			c.Reply(st, resp)
			return
		}
		var expire int64 // ms; 0: none
		if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
			expire = st.Now.Add(time.Duration(req.RetentionTimeMillis) * time.Millisecond).UnixMilli()
		}
		now := st.Now.UnixMilli()
		n, size := 0, 0
		for _, t := range req.Topics {
			n += len(t.Partitions)
			for _, p := range t.Partitions {
				if p.Metadata != nil {
					size += offsetRecordMax(req.Group, t.Topic, *p.Metadata)
				} else {
					size += offsetRecordMax(req.Group, t.Topic, "")
				}
			}
		}
		st.growRecords(n)
		arena := make([]byte, 0, size)
		for ti, t := range req.Topics {
			for pi, p := range t.Partitions {
				rp := &resp.Topics[ti].Partitions[pi]
				if code := perr.Code(t.Topic, p.Partition); code != 0 {
					rp.ErrorCode = code
					continue
				}
				md := ""
				if p.Metadata != nil {
					md = *p.Metadata
				}
				if javaLength(md) > st.Cfg.Offsets.MetadataMaxBytes {
					rp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
					continue
				}
				st.writeOffsetIn(&arena, req.Group, t.Topic, p.Partition, &OffsetValue{
					Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: md,
					CommitMs: now, ExpireMs: expire,
				})
				// A plain commit after a transactional one wins (Kafka: the later record).
				st.supersedePending(req.Group, t.Topic, p.Partition, -1)
				st.Metrics.OffsetCommits++
			}
		}
		c.Reply(st, resp)
	}
}

// javaLength is Java's String.length(): UTF-16 code units, what Kafka compares with
// offset.metadata.max.bytes (a character outside the BMP counts 2).
func javaLength(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func validateOffsetCommit(st *State, req *kmsg.OffsetCommitRequest) error {
	if req.Version < 2 {
		return kerr.UnsupportedVersion
	}
	g, ok := st.Groups[req.Group]
	if !ok {
		if req.Generation < 0 {
			return nil // a simple group is created by the first record's replay
		}
		if req.Version >= 9 {
			return kerr.GroupIDNotFound
		}
		return kerr.IllegalGeneration
	}
	return g.ValidateOffsetCommit(st, &CommitIdentity{
		MemberID: req.MemberID, InstanceID: req.InstanceID, GenerationOrEpoch: req.Generation,
		APIVersion: req.Version,
		Partitions: commitPartitions(req.Topics, func(t kmsg.OffsetCommitRequestTopic) (string, []int32) {
			ps := make([]int32, len(t.Partitions))
			for i, p := range t.Partitions {
				ps[i] = p.Partition
			}
			return t.Topic, ps
		}),
	})
}

// OffsetCommitResponse is the response to req with every partition answered NONE (or err's
// code, when err is non-nil).
func OffsetCommitResponse(req *kmsg.OffsetCommitRequest, err error) *kmsg.OffsetCommitResponse {
	resp := offsetCommitResponse(req)
	if err != nil {
		setAllCommitErrors(resp, err)
	}
	return resp
}

func offsetCommitResponse(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	resp.Topics = make([]kmsg.OffsetCommitResponseTopic, len(req.Topics))
	for i, t := range req.Topics {
		rt := &resp.Topics[i]
		rt.Default()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.OffsetCommitResponseTopicPartition, len(t.Partitions))
		for j, p := range t.Partitions {
			rp := &rt.Partitions[j]
			rp.Default()
			rp.Partition = p.Partition
		}
	}
	return resp
}

func setAllCommitErrors(resp *kmsg.OffsetCommitResponse, err error) {
	code := ErrorCode(err)
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			resp.Topics[i].Partitions[j].ErrorCode = code
		}
	}
}

type topicPartition struct {
	topic     string
	partition int32
}
