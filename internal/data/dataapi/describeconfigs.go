package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DescribeConfigs authorizes DescribeConfigs per resource (ConfigHelper): a topic needs TOPIC
// DESCRIBE_CONFIGS, a broker or broker logger CLUSTER DESCRIBE_CONFIGS, a group GROUP
// DESCRIBE_CONFIGS (ALTER_CONFIGS implies DESCRIBE_CONFIGS). Denied: the type's authorization
// error and message with no configs, whether or not the resource exists.
func (a Adapters) DescribeConfigs(ctx context.Context, r Req, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	if r.open() {
		return a.P.DescribeConfigs(ctx, req)
	}
	allowed := make([]bool, len(req.Resources))
	types := make([]security.ResourceType, len(req.Resources))
	sub := *req
	sub.Resources = nil
	for i, rr := range req.Resources {
		rt, name := security.Cluster, security.ClusterName
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			rt, name = security.Topic, rr.ResourceName
		case kmsg.ConfigResourceTypeGroupConfig:
			rt, name = security.Group, rr.ResourceName
		case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		default:
			allowed[i] = true // INVALID_REQUEST from the plane
			sub.Resources = append(sub.Resources, rr)
			continue
		}
		types[i] = rt
		if allowed[i] = r.Check.Allowed(security.OpDescribeConfigs, rt, name); allowed[i] {
			sub.Resources = append(sub.Resources, rr)
		}
	}
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	var got []kmsg.DescribeConfigsResponseResource
	if !none(allowed) {
		got = a.P.DescribeConfigs(ctx, &sub).Resources
	}
	resp.Resources = merge(allowed, got, func(i int) kmsg.DescribeConfigsResponseResource {
		rr := req.Resources[i]
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		e := security.DeniedError(types[i])
		sr.ErrorCode, sr.ErrorMessage = e.Code, str(security.DeniedMessage(types[i], rr.ResourceName))
		return sr
	})
	return resp
}
