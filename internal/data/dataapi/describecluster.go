package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DescribeCluster checks nothing (AuthHelper.computeDescribeClusterResponse); only the cluster's
// authorized-operations bitfield needs CLUSTER DESCRIBE (else 0). It answers with the listener's
// endpoint.
func (a Adapters) DescribeCluster(ctx context.Context, r Req, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := a.P.DescribeCluster(ctx, req)
	if r.Host != "" {
		for i := range resp.Brokers {
			resp.Brokers[i].Host, resp.Brokers[i].Port = r.Host, r.Port
		}
	}
	if req.IncludeClusterAuthorizedOperations && resp.ErrorCode == 0 {
		resp.ClusterAuthorizedOperations = 0
		if r.Check.Visible(security.OpDescribe, security.Cluster, security.ClusterName) {
			resp.ClusterAuthorizedOperations = r.Check.A.AuthorizedOperations(r.Check.S, security.Cluster, security.ClusterName)
		}
	}
	return resp
}
