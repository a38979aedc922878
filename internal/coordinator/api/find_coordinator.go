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
// node (Kafka's Node.noNode: id -1, no host, port -1). In cluster mode a key whose shard is
// served by another node is answered with that node (from the Directory), and one whose shard
// no node holds now COORDINATOR_NOT_AVAILABLE, so the client retries.
func (s *Service) FindCoordinator(_ context.Context, _ coordinator.Meta, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	none := Endpoint{NodeID: -1, Port: -1}
	answer := func(key string) (Endpoint, int16, *string) {
		if req.CoordinatorType == 1 {
			return s.findTxn(key)
		}
		group, code, msg := s.findKey(req, key)
		if code != 0 {
			return none, code, msg
		}
		shard := coordinator.ShardFor(group, s.RT.Shards())
		if s.Directory != nil && !s.RT.Owned(shard) {
			if e, ok := s.Directory.Coordinator(shard); ok {
				return e, 0, nil
			}
			msg := "no node holds the lease of the group's coordinator shard now"
			return none, kerr.CoordinatorNotAvailable.Code, &msg
		}
		if !s.RT.Ready() && !s.RT.Active(shard) {
			return none, kerr.CoordinatorLoadInProgress.Code, nil
		}
		return s.Self, 0, nil
	}
	if req.Version >= 4 {
		for _, k := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key = k
			var e Endpoint
			e, c.ErrorCode, c.ErrorMessage = answer(k)
			c.NodeID, c.Host, c.Port = e.NodeID, e.Host, e.Port
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	var e Endpoint
	e, resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorKey)
	resp.NodeID, resp.Host, resp.Port = e.NodeID, e.Host, e.Port
	return resp
}

// findTxn answers a transactional id (key type 1): this node when its transaction coordinator
// shard serves here, in cluster mode the node holding the shard's lease.
func (s *Service) findTxn(key string) (Endpoint, int16, *string) {
	none := Endpoint{NodeID: -1, Port: -1}
	if s.Transactions == nil {
		msg := "muster has no transaction coordinator here"
		return none, kerr.CoordinatorNotAvailable.Code, &msg
	}
	if key == "" {
		msg := "empty transactional id"
		return none, kerr.InvalidRequest.Code, &msg
	}
	if s.TxnDirectory != nil {
		if ts, ok := s.Transactions.(TxnShards); ok {
			if shard, here := ts.TxnShard(key); !here {
				if e, ok := s.TxnDirectory.Coordinator(shard); ok {
					return e, 0, nil
				}
				msg := "no node holds the lease of the transactional id's coordinator shard now"
				return none, kerr.CoordinatorNotAvailable.Code, &msg
			}
		}
	}
	if code := s.Transactions.Locate(key); code != 0 {
		return none, code, nil
	}
	return s.Self, 0, nil
}

// findKey checks a group or share key and returns the group whose shard coordinates it, or the
// error of a type or key muster does not coordinate.
func (s *Service) findKey(req *kmsg.FindCoordinatorRequest, key string) (string, int16, *string) {
	switch req.CoordinatorType {
	case 0:
	case 2:
		// KIP-932: the share coordinator of a share-partition key "group:topicId:partition"
		// is the shard of its group, which keeps the share-partition's state.
		if req.Version < 6 {
			msg := "share coordinator keys need FindCoordinator v6"
			return "", kerr.InvalidRequest.Code, &msg
		}
		group, ok := shareCoordinatorKey(key)
		if !ok || !s.Cfg.Share.Enabled {
			msg := "Invalid share coordinator key " + key + "."
			return "", kerr.InvalidRequest.Code, &msg
		}
		key = group
	default:
		msg := "unknown coordinator type in FindCoordinator request"
		return "", kerr.InvalidRequest.Code, &msg
	}
	return key, 0, nil
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
