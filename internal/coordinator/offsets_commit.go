package coordinator

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit handles OffsetCommit v2–v9 (reference §5, Kafka's OffsetMetadataManager.commitOffset;
// the wire handler first answers partitions of unknown topics UNKNOWN_TOPIC_OR_PARTITION):
// group/member validation per group type, OFFSET_METADATA_TOO_LARGE per partition, commits
// outside any group create a "simple" group, v2–v4 retention sets an expire timestamp. v0–v1
// answer UNSUPPORTED_VERSION (KIP-896).
func OffsetCommit(req *kmsg.OffsetCommitRequest) func(st *State, c *Call) {
	return func(st *State, c *Call) {
		resp := offsetCommitResponse(req)
		err := validateOffsetCommit(st, req)
		perr, _ := err.(*PartitionErrors) // KIP-1251: only some partitions are rejected
		if err != nil && perr == nil {
			setAllCommitErrors(resp, err)
			st.Reply(c, resp)
			return
		}
		var expire time.Time
		if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
			expire = st.Now.Add(time.Duration(req.RetentionTimeMillis) * time.Millisecond)
		}
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
				if javaLength(md) > st.Cfg.OffsetMetadataMaxBytes {
					rp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
					continue
				}
				st.WriteOffset(req.Group, t.Topic, p.Partition, &OffsetValue{
					Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: md,
					CommitTime: st.Now, ExpireTime: expire,
				})
				st.Metrics.OffsetCommits++
			}
		}
		st.Reply(c, resp)
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

func offsetCommitResponse(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
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

func init() {
	RegisterHandler(8, func(s *Service, ctx context.Context, meta Meta, r kmsg.Request) kmsg.Response {
		req := r.(*kmsg.OffsetCommitRequest)
		if req.Version < 2 {
			resp := offsetCommitResponse(req)
			setAllCommitErrors(resp, kerr.UnsupportedVersion)
			return resp
		}
		known, unknown := splitUnknownPartitions(s.Cfg.Topics, req.Topics,
			func(t kmsg.OffsetCommitRequestTopic) (string, []kmsg.OffsetCommitRequestTopicPartition) {
				return t.Topic, t.Partitions
			},
			func(p kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition },
			func(t kmsg.OffsetCommitRequestTopic, ps []kmsg.OffsetCommitRequestTopicPartition) kmsg.OffsetCommitRequestTopic {
				t.Partitions = ps
				return t
			})
		sub := *req
		sub.Topics = known
		out := offsetCommitResponse(req)
		resp, err := s.do(ctx, req.Group, meta, OffsetCommit(&sub))
		codes := map[topicPartition]int16{}
		if err != nil {
			for _, t := range known {
				for _, p := range t.Partitions {
					codes[topicPartition{t.Topic, p.Partition}] = ErrorCode(err)
				}
			}
		} else {
			for _, t := range resp.(*kmsg.OffsetCommitResponse).Topics {
				for _, p := range t.Partitions {
					codes[topicPartition{t.Topic, p.Partition}] = p.ErrorCode
				}
			}
		}
		for tp := range unknown {
			codes[tp] = kerr.UnknownTopicOrPartition.Code
		}
		for i := range out.Topics {
			for j := range out.Topics[i].Partitions {
				rp := &out.Topics[i].Partitions[j]
				rp.ErrorCode = codes[topicPartition{out.Topics[i].Topic, rp.Partition}]
			}
		}
		return out
	})
}

type topicPartition struct {
	topic     string
	partition int32
}

// splitUnknownPartitions is KafkaApis' metadata check for OffsetCommit and OffsetDelete: a
// partition of a topic that does not exist (or beyond its partition count) answers
// UNKNOWN_TOPIC_OR_PARTITION and never reaches the coordinator. It returns the request topics
// reduced to known partitions (topics left without partitions are dropped) and the unknown set.
// split gives a request topic's name and partitions, partition a partition's index and
// withPartitions a copy of the topic with the given partitions. With no TopicSource (harness
// tests) every partition is known.
func splitUnknownPartitions[T, P any](src TopicSource, topics []T, split func(T) (string, []P),
	partition func(P) int32, withPartitions func(T, []P) T) ([]T, map[topicPartition]bool) {
	unknown := map[topicPartition]bool{}
	if src == nil {
		return topics, unknown
	}
	known := make([]T, 0, len(topics))
	for _, t := range topics {
		name, ps := split(t)
		_, n, ok := src.TopicID(name)
		var keep []P
		for _, p := range ps {
			if id := partition(p); !ok || id < 0 || id >= n {
				unknown[topicPartition{name, id}] = true
			} else {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			known = append(known, withPartitions(t, keep))
		}
	}
	return known, unknown
}
