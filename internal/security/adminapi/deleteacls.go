package adminapi

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DeleteACLs serves DeleteAcls v1–v3: CLUSTER ALTER, then per filter the bindings it removed.
// A filter with an UNKNOWN field gets INVALID_REQUEST; the valid ones are applied in one
// durable write.
func (h *Handlers) DeleteACLs(c security.Check, req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	fill := func(e *kerr.Error, msg string) *kmsg.DeleteACLsResponse {
		for range req.Filters {
			r := kmsg.NewDeleteACLsResponseResult()
			r.ErrorCode, r.ErrorMessage = errMsg(e, msg)
			resp.Results = append(resp.Results, r)
		}
		return resp
	}
	if h.ACLs == nil {
		return fill(kerr.SecurityDisabled, securityDisabled)
	}
	if !c.Cluster(security.OpAlter) {
		return fill(kerr.ClusterAuthorizationFailed, "")
	}
	results := make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	var filters []security.Filter
	var at []int
	for i, rf := range req.Filters {
		results[i] = kmsg.NewDeleteACLsResponseResult()
		f := security.Filter{ResourceType: rf.ResourceType, ResourceName: rf.ResourceName, PatternType: rf.ResourcePatternType,
			Principal: rf.Principal, Host: rf.Host, Operation: rf.Operation, Permission: rf.PermissionType}
		if err := f.Validate(); err != nil {
			results[i].ErrorCode, results[i].ErrorMessage = kerr.InvalidRequest.Code, str(err.Error())
			continue
		}
		filters = append(filters, f)
		at = append(at, i)
	}
	deleted, err := h.ACLs.DeleteACLs(filters)
	for j, i := range at {
		if err != nil {
			results[i].ErrorCode, results[i].ErrorMessage = kerr.UnknownServerError.Code, str(err.Error())
			continue
		}
		for _, b := range deleted[j] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = b.ResourceType, b.ResourceName, b.PatternType
			m.Principal, m.Host, m.Operation, m.PermissionType = b.Principal, b.Host, b.Operation, b.Permission
			results[i].MatchingACLs = append(results[i].MatchingACLs, m)
		}
	}
	resp.Results = results
	return resp
}
