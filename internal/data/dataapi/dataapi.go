// Package dataapi adapts the data plane's Kafka APIs to the request layer: it authorizes each
// request with Kafka's per-API rules (KafkaApis), passes only the authorized subset to the
// Plane, and merges the answers, so a caller without DESCRIBE gets the same error whether or not
// a resource exists. It also answers with the endpoint of the listener the request came in on.
package dataapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/security"
)

// Adapters wrap a Plane.
type Adapters struct {
	P *data.Plane
	// Producers answers InitProducerId once authorized (the transaction coordinator, which
	// also hands idempotent producers their ids); nil: the Plane does.
	Producers ProducerIDs
}

// ProducerIDs answers InitProducerId.
type ProducerIDs interface {
	InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse
}

// Req is what an adapter needs of one request besides its body.
type Req struct {
	Check security.Check
	// Host and Port are the advertised endpoint of the listener the request came in on; "" keeps
	// the plane's (the first listener's).
	Host string
	Port int32
}

// open reports whether every action is allowed (no authorizer): adapters then pass requests
// through untouched.
func (r Req) open() bool {
	_, ok := r.Check.A.(security.AllowAll)
	return ok
}

// merge rebuilds a response list in request order: allowed[i] entries come, in order, from sub
// (the plane's answer to the authorized subset); the others from denied(i).
func merge[T any](allowed []bool, sub []T, denied func(i int) T) []T {
	out := make([]T, 0, len(allowed))
	j := 0
	for i, ok := range allowed {
		if ok && j < len(sub) {
			out = append(out, sub[j])
			j++
		} else {
			out = append(out, denied(i))
		}
	}
	return out
}

func none(allowed []bool) bool {
	for _, ok := range allowed {
		if ok {
			return false
		}
	}
	return true
}

func all(allowed []bool) bool {
	for _, ok := range allowed {
		if !ok {
			return false
		}
	}
	return true
}

func str(s string) *string { return &s }
