package adminapi

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// CreateACLs serves CreateAcls v1–v3: CLUSTER ALTER, then one result per creation in request
// order; an invalid binding gets INVALID_REQUEST, the others are created (idempotently) in one
// durable write.
func (h *Handlers) CreateACLs(c security.Check, req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	fill := func(e *kerr.Error, msg string) {
		for range req.Creations {
			r := kmsg.NewCreateACLsResponseResult()
			r.ErrorCode, r.ErrorMessage = errMsg(e, msg)
			resp.Results = append(resp.Results, r)
		}
	}
	if h.ACLs == nil {
		fill(kerr.SecurityDisabled, securityDisabled)
		return resp
	}
	if !c.Cluster(security.OpAlter) {
		fill(kerr.ClusterAuthorizationFailed, "")
		return resp
	}
	bs := make([]security.Binding, len(req.Creations))
	for i, cr := range req.Creations {
		bs[i] = security.Binding{ResourceType: cr.ResourceType, ResourceName: cr.ResourceName, PatternType: cr.ResourcePatternType,
			Principal: cr.Principal, Host: cr.Host, Operation: cr.Operation, Permission: cr.PermissionType}
	}
	for _, err := range h.ACLs.CreateACLs(bs) {
		r := kmsg.NewCreateACLsResponseResult()
		var inv *security.InvalidACLError
		switch {
		case err == nil:
		case errors.As(err, &inv):
			r.ErrorCode, r.ErrorMessage = kerr.InvalidRequest.Code, str(inv.Error())
		default:
			r.ErrorCode, r.ErrorMessage = kerr.UnknownServerError.Code, str(err.Error())
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
