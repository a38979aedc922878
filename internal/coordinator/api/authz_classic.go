package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// The classic group protocol checks READ on the group (KafkaApis.handleJoinGroupRequest,
// handleSyncGroupRequest, handleHeartbeatRequest, handleLeaveGroupRequest): a denied caller
// gets GROUP_AUTHORIZATION_FAILED whether or not the group exists.

// authorizeJoinGroup: READ on the group. A JoinGroup that joins a consumer group (KIP-848
// migration) may refresh the group's regex subscriptions: they resolve with this caller's
// DESCRIBE rights on topics.
func (s *Service) authorizeJoinGroup(ctx context.Context, r Req, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	if err := r.Check.Group(req.Group); err != nil {
		// JoinGroupRequest.getErrorResponse: no member id, generation -1.
		resp := coordinator.JoinGroupError(req, err)
		resp.MemberID = ""
		return resp
	}
	return s.JoinGroup(ctx, r.withTopicFilter(), req)
}

// authorizeSyncGroup: from v5 a request without ProtocolType or ProtocolName is answered
// INCONSISTENT_GROUP_PROTOCOL before the ACL check (as KafkaApis orders them), then READ on the
// group.
func (s *Service) authorizeSyncGroup(ctx context.Context, r Req, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	if req.Version >= 5 && (req.ProtocolType == nil || req.Protocol == nil) {
		return coordinator.SyncGroupError(req, kerr.InconsistentGroupProtocol)
	}
	if err := r.Check.Group(req.Group); err != nil {
		return coordinator.SyncGroupError(req, err)
	}
	return s.SyncGroup(ctx, r.Meta, req)
}

// authorizeHeartbeat: READ on the group.
func (s *Service) authorizeHeartbeat(ctx context.Context, r Req, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	if err := r.Check.Group(req.Group); err != nil {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	return s.Heartbeat(ctx, r.Meta, req)
}

// authorizeLeaveGroup: READ on the group; a denied request answers the error alone, without
// its members.
func (s *Service) authorizeLeaveGroup(ctx context.Context, r Req, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	if err := r.Check.Group(req.Group); err != nil {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = coordinator.ErrorCode(err)
		return resp
	}
	return s.LeaveGroup(ctx, r.Meta, req)
}
