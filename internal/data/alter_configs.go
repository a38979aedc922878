package data

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterConfigs (legacy, API 33) replaces all the dynamic configs of each TOPIC, BROKER or
// GROUP resource with the given set (keys left out are removed), with the rules of
// alterConfigs. A resource listed twice is INVALID_REQUEST for both entries. ValidateOnly
// checks without changing anything.
func (p *Plane) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	seen := map[resourceID]int{}
	for _, rr := range req.Resources {
		seen[resourceID{rr.ResourceType, rr.ResourceName}]++
	}
	for _, rr := range req.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var aerr *apiError
		if seen[resourceID{rr.ResourceType, rr.ResourceName}] > 1 {
			aerr = kafkaErr(kerr.InvalidRequest, "Each resource must appear at most once.")
		} else {
			c := &configChange{typ: rr.ResourceType, name: rr.ResourceName, legacy: true, set: map[string]*string{}}
			for _, rc := range rr.Configs {
				if _, dup := c.set[rc.Name]; dup {
					aerr = kafkaErr(kerr.InvalidRequest, "Error due to duplicate config keys")
				}
				c.set[rc.Name] = rc.Value
			}
			if aerr == nil {
				aerr = p.alterConfigs(c, req.ValidateOnly)
			}
		}
		if aerr != nil {
			setErr(&sr.ErrorCode, &sr.ErrorMessage, aerr)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

// resourceID names a config resource.
type resourceID struct {
	typ  kmsg.ConfigResourceType
	name string
}
