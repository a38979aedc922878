package data

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// IncrementalAlterConfigs (API 44, KIP-339) applies SET, DELETE, APPEND and SUBTRACT
// operations to the dynamic configs of each TOPIC, BROKER or GROUP resource, with the rules of
// alterConfigs: the operations of one resource succeed or fail together. A resource listed
// twice is INVALID_REQUEST for both entries. ValidateOnly checks without changing anything.
func (p *Plane) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	seen := map[resourceID]int{}
	for _, rr := range req.Resources {
		seen[resourceID{rr.ResourceType, rr.ResourceName}]++
	}
	for _, rr := range req.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var aerr *apiError
		if seen[resourceID{rr.ResourceType, rr.ResourceName}] > 1 {
			aerr = kafkaErr(kerr.InvalidRequest, "Each resource must appear at most once.")
		} else {
			c := &configChange{typ: rr.ResourceType, name: rr.ResourceName}
			for _, rc := range rr.Configs {
				c.ops = append(c.ops, configOp{name: rc.Name, op: rc.Op, value: rc.Value})
			}
			aerr = p.alterConfigs(c, req.ValidateOnly)
		}
		if aerr != nil {
			setErr(&sr.ErrorCode, &sr.ErrorMessage, aerr)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}
