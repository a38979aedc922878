package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// configResource is the ACL resource a config resource is authorized on (ConfigHelper /
// KafkaApis.authorizeAlterResource): a topic on itself, a broker or broker logger on the
// cluster, a group on itself. ok is false for types the plane rejects on its own.
func configResource(typ kmsg.ConfigResourceType, name string) (security.ResourceType, string, bool) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		return security.Topic, name, true
	case kmsg.ConfigResourceTypeGroupConfig:
		return security.Group, name, true
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		return security.Cluster, security.ClusterName, true
	}
	return 0, "", false
}

func deniedConfig(rt security.ResourceType, name string) (int16, *string) {
	return security.DeniedError(rt).Code, str(security.DeniedMessage(rt, name))
}

// AlterConfigs authorizes AlterConfigs: ALTER_CONFIGS on each resource's ACL resource, before
// existence (denied: the type's authorization error per resource).
func (a Adapters) AlterConfigs(ctx context.Context, r Req, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	if r.open() {
		return a.P.AlterConfigs(ctx, req)
	}
	allowed := make([]bool, len(req.Resources))
	sub := *req
	sub.Resources = nil
	for i, rr := range req.Resources {
		rt, name, ok := configResource(rr.ResourceType, rr.ResourceName)
		if allowed[i] = !ok || r.Check.Allowed(security.OpAlterConfigs, rt, name); allowed[i] {
			sub.Resources = append(sub.Resources, rr)
		}
	}
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	var got []kmsg.AlterConfigsResponseResource
	if !none(allowed) {
		got = a.P.AlterConfigs(ctx, &sub).Resources
	}
	resp.Resources = merge(allowed, got, func(i int) kmsg.AlterConfigsResponseResource {
		rr := req.Resources[i]
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		rt, name, _ := configResource(rr.ResourceType, rr.ResourceName)
		sr.ErrorCode, sr.ErrorMessage = deniedConfig(rt, name)
		return sr
	})
	return resp
}

// IncrementalAlterConfigs authorizes IncrementalAlterConfigs like AlterConfigs.
func (a Adapters) IncrementalAlterConfigs(ctx context.Context, r Req, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	if r.open() {
		return a.P.IncrementalAlterConfigs(ctx, req)
	}
	allowed := make([]bool, len(req.Resources))
	sub := *req
	sub.Resources = nil
	for i, rr := range req.Resources {
		rt, name, ok := configResource(rr.ResourceType, rr.ResourceName)
		if allowed[i] = !ok || r.Check.Allowed(security.OpAlterConfigs, rt, name); allowed[i] {
			sub.Resources = append(sub.Resources, rr)
		}
	}
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	var got []kmsg.IncrementalAlterConfigsResponseResource
	if !none(allowed) {
		got = a.P.IncrementalAlterConfigs(ctx, &sub).Resources
	}
	resp.Resources = merge(allowed, got, func(i int) kmsg.IncrementalAlterConfigsResponseResource {
		rr := req.Resources[i]
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		rt, name, _ := configResource(rr.ResourceType, rr.ResourceName)
		sr.ErrorCode, sr.ErrorMessage = deniedConfig(rt, name)
		return sr
	})
	return resp
}
