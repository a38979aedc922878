package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// Group administration and discovery: FindCoordinator needs DESCRIBE on the group (or on the
// transactional id), DescribeGroups DESCRIBE, DeleteGroups DELETE, and ListGroups lists only
// what the caller may DESCRIBE (KafkaApis.getCoordinator, handleDescribeGroupsRequest,
// handleDeleteGroupsRequest, handleListGroupsRequest).

// authorizeFindCoordinator: per key, DESCRIBE on the group (key type 0) or on the
// transactional id (key type 1); a denied key answers GROUP_AUTHORIZATION_FAILED or
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED with no node (id -1, no host, port -1), the same for a
// group that exists and one that does not. An answered coordinator is this broker as the
// listener the request came in on advertises it (another cluster node: as the broker maps it).
func (s *Service) authorizeFindCoordinator(ctx context.Context, r Req, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	denied := func(key string) *kerr.Error {
		switch req.CoordinatorType {
		case 0:
			if !r.Check.Allowed(security.OpDescribe, security.Group, key) {
				return kerr.GroupAuthorizationFailed
			}
		case 1:
			if !r.Check.Allowed(security.OpDescribe, security.TransactionalID, key) {
				return kerr.TransactionalIDAuthorizationFailed
			}
		}
		return nil
	}
	if req.Version < 4 {
		if err := denied(req.CoordinatorKey); err != nil {
			// FindCoordinatorRequest.getErrorResponse: Kafka's message of the error, no node.
			msg := "Group authorization failed."
			if err == kerr.TransactionalIDAuthorizationFailed {
				msg = "Transactional Id authorization failed."
			}
			resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode, resp.ErrorMessage = err.Code, &msg
			resp.NodeID, resp.Host, resp.Port = -1, "", -1
			return resp
		}
		resp := s.FindCoordinator(ctx, r.Meta, req)
		if resp.ErrorCode == 0 && r.Host != "" && resp.NodeID == s.Self.NodeID {
			resp.Host, resp.Port = r.Host, r.Port
		}
		return resp
	}
	errs := make([]*kerr.Error, len(req.CoordinatorKeys))
	sub := *req
	sub.CoordinatorKeys = nil
	for i, k := range req.CoordinatorKeys {
		if errs[i] = denied(k); errs[i] == nil {
			sub.CoordinatorKeys = append(sub.CoordinatorKeys, k)
		}
	}
	var got []kmsg.FindCoordinatorResponseCoordinator
	if len(sub.CoordinatorKeys) > 0 {
		got = s.FindCoordinator(ctx, r.Meta, &sub).Coordinators
	}
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	j := 0
	for i, k := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port = k, -1, "", -1
		switch {
		case errs[i] != nil:
			c.ErrorCode = errs[i].Code
		case j < len(got):
			c = got[j]
			j++
			if c.ErrorCode == 0 && r.Host != "" && c.NodeID == s.Self.NodeID {
				c.Host, c.Port = r.Host, r.Port
			}
		default:
			c.ErrorCode = kerr.UnknownServerError.Code
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp
}

// authorizeDescribeGroups: DESCRIBE on each group; denied groups come first in the answer,
// each {GROUP_AUTHORIZATION_FAILED, state "", no members}, then the described ones in request
// order. v3+ IncludeAuthorizedOperations sets the KIP-430 bitfield of each described group.
func (s *Service) authorizeDescribeGroups(ctx context.Context, r Req, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	sub := *req
	sub.Groups = nil
	for _, id := range req.Groups {
		if r.Check.Allowed(security.OpDescribe, security.Group, id) {
			sub.Groups = append(sub.Groups, id)
			continue
		}
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group, g.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
		g.Members = []kmsg.DescribeGroupsResponseGroupMember{}
		resp.Groups = append(resp.Groups, g)
	}
	if len(sub.Groups) > 0 {
		described := s.DescribeGroups(ctx, r.Meta, &sub).Groups
		if req.Version >= 3 && req.IncludeAuthorizedOperations {
			for i := range described {
				if described[i].ErrorCode == 0 {
					described[i].AuthorizedOperations = r.Check.Operations(true, security.Group, described[i].Group)
				}
			}
		}
		resp.Groups = append(resp.Groups, described...)
	}
	return resp
}

// authorizeListGroups: with DESCRIBE on the cluster every group is listed, otherwise only the
// groups the caller may DESCRIBE (KIP-231); never an error, and the filter is silent.
func (s *Service) authorizeListGroups(ctx context.Context, r Req, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := s.ListGroups(ctx, r.Meta, req)
	if r.open() {
		return resp
	}
	visible := r.Check.ListGroupsFilter()
	kept := resp.Groups[:0]
	for _, g := range resp.Groups {
		if visible(g.Group) {
			kept = append(kept, g)
		}
	}
	resp.Groups = kept
	return resp
}

// authorizeDeleteGroups: duplicates are removed, then DELETE on each group; the authorized
// groups are deleted (and only their KIP-1331 topology descriptions) and answered first, the
// denied ones follow with GROUP_AUTHORIZATION_FAILED.
func (s *Service) authorizeDeleteGroups(ctx context.Context, r Req, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	seen := make(map[string]bool, len(req.Groups))
	sub := *req
	sub.Groups = nil
	var denied []string
	for _, id := range req.Groups {
		if seen[id] {
			continue
		}
		seen[id] = true
		if r.Check.Allowed(security.OpDelete, security.Group, id) {
			sub.Groups = append(sub.Groups, id)
		} else {
			denied = append(denied, id)
		}
	}
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	if len(sub.Groups) > 0 {
		resp.Groups = s.DeleteGroups(ctx, r.Meta, &sub).Groups
	}
	for _, id := range denied {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group, g.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
