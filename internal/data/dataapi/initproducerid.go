package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// InitProducerID authorizes InitProducerId: with a transactional id, TRANSACTIONAL_ID WRITE
// (denied: TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer needs CLUSTER
// IDEMPOTENT_WRITE or WRITE on some topic (authorizeByResourceType; denied:
// CLUSTER_AUTHORIZATION_FAILED). Denials answer producer id and epoch −1.
func (a Adapters) InitProducerID(ctx context.Context, r Req, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	if r.open() {
		return a.initProducerID(ctx, req)
	}
	var denied *kerr.Error
	if req.TransactionalID != nil {
		if !r.Check.Allowed(security.OpWrite, security.TransactionalID, *req.TransactionalID) {
			denied = kerr.TransactionalIDAuthorizationFailed
		}
	} else if !r.Check.Visible(security.OpIdempotentWrite, security.Cluster, security.ClusterName) &&
		!r.Check.ByResourceType(security.OpWrite, security.Topic) {
		r.Check.Cluster(security.OpIdempotentWrite) // audited denial
		denied = kerr.ClusterAuthorizationFailed
	}
	if denied != nil {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = denied.Code, -1, -1
		return resp
	}
	return a.initProducerID(ctx, req)
}

func (a Adapters) initProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	if a.Producers != nil {
		return a.Producers.InitProducerID(ctx, req)
	}
	return a.P.InitProducerID(ctx, req)
}
