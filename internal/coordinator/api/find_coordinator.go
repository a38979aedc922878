package api

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// FindCoordinator serves FindCoordinator v0–v6 for group keys (key type 0): on a single node
// every shard is this broker's; a shard still loading answers COORDINATOR_LOAD_IN_PROGRESS.
// Transaction keys (type 1) are answered by the transaction coordinator's Locate.
// Share keys (type 2, v6+, "group:topicId:partition", KIP-932) name the shard of the group, which
// keeps its share-partitions' state; a malformed key, and any other type, is INVALID_REQUEST, as
// Kafka's KafkaApis.getCoordinator answers. v4+ batches
// keys (CoordinatorKeys), older versions carry one key in top-level fields. An error carries no
// node (Kafka's Node.noNode: id -1, no host, port -1).
func (s *Service) FindCoordinator(_ context.Context, _ coordinator.Meta, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(key string) (int16, *string) {
		switch req.CoordinatorType {
		case 0:
		case 1:
			if s.Transactions == nil {
				msg := "muster has no transaction coordinator here"
				return kerr.CoordinatorNotAvailable.Code, &msg
			}
			if key == "" {
				msg := "empty transactional id"
				return kerr.InvalidRequest.Code, &msg
			}
			return s.Transactions.Locate(key), nil
		case 2:
			// KIP-932: the share coordinator of a share-partition key "group:topicId:partition"
			// is the shard of its group, which keeps the share-partition's state.
			if req.Version < 6 {
				msg := "share coordinator keys need FindCoordinator v6"
				return kerr.InvalidRequest.Code, &msg
			}
			group, ok := shareCoordinatorKey(key)
			if !ok || !s.Cfg.Share.Enabled {
				msg := "Invalid share coordinator key " + key + "."
				return kerr.InvalidRequest.Code, &msg
			}
			key = group
		default:
			msg := "unknown coordinator type in FindCoordinator request"
			return kerr.InvalidRequest.Code, &msg
		}
		if !s.RT.Ready() && !s.RT.Active(coordinator.ShardFor(key, s.RT.Shards())) {
			return kerr.CoordinatorLoadInProgress.Code, nil
		}
		return 0, nil
	}
	if req.Version >= 4 {
		for _, k := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key = k
			c.ErrorCode, c.ErrorMessage = answer(k)
			c.NodeID, c.Host, c.Port = s.node(c.ErrorCode)
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorKey)
	resp.NodeID, resp.Host, resp.Port = s.node(resp.ErrorCode)
	return resp
}

// node is the coordinator's endpoint: this broker, or none when the answer is an error.
func (s *Service) node(code int16) (int32, string, int32) {
	if code != 0 {
		return -1, "", -1
	}
	return s.Self.NodeID, s.Self.Host, s.Self.Port
}

// shareCoordinatorKey parses Kafka's SharePartitionKey "group:topicId:partition" (three tokens,
// a base64 topic id, a partition ≥ 0) and returns the group.
func shareCoordinatorKey(key string) (string, bool) {
	parts := strings.Split(key, ":")
	if len(parts) != 3 || parts[0] == "" {
		return "", false
	}
	if id, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil || len(id) != 16 {
		return "", false
	}
	if p, err := strconv.ParseInt(parts[2], 10, 32); err != nil || p < 0 {
		return "", false
	}
	return parts[0], true
}
