package adminapi

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DescribeACLs serves DescribeAcls v1–v3: CLUSTER DESCRIBE, then the bindings the filter
// matches, grouped by resource pattern.
func (h *Handlers) DescribeACLs(c security.Check, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	switch {
	case h.ACLs == nil:
		resp.ErrorCode, resp.ErrorMessage = errMsg(kerr.SecurityDisabled, securityDisabled)
		return resp
	case !c.Cluster(security.OpDescribe):
		resp.ErrorCode, resp.ErrorMessage = errMsg(kerr.ClusterAuthorizationFailed, "")
		return resp
	}
	f := security.Filter{ResourceType: req.ResourceType, ResourceName: req.ResourceName, PatternType: req.ResourcePatternType,
		Principal: req.Principal, Host: req.Host, Operation: req.Operation, Permission: req.PermissionType}
	if err := f.Validate(); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, str(err.Error())
		return resp
	}
	for _, b := range h.ACLs.DescribeACLs(f) {
		n := len(resp.Resources)
		if n == 0 || resp.Resources[n-1].ResourceType != b.ResourceType || resp.Resources[n-1].ResourceName != b.ResourceName ||
			resp.Resources[n-1].ResourcePatternType != b.PatternType {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = b.ResourceType, b.ResourceName, b.PatternType
			resp.Resources = append(resp.Resources, r)
			n++
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal, b.Host, b.Operation, b.Permission
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, a)
	}
	return resp
}
