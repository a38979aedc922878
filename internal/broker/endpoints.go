package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/server"
)

// rewriteCoordinatorEndpoint makes a FindCoordinator answer name this broker by the advertised
// endpoint of the listener the request came in on (KafkaApis uses request.context.listenerName),
// so a SASL_SSL client is not sent to the PLAINTEXT port. The coordinator itself answers with
// the first listener's endpoint.
func rewriteCoordinatorEndpoint(fc *kmsg.FindCoordinatorResponse, p *data.Plane, l *server.Listener) {
	node := p.NodeID()
	if fc.ErrorCode == 0 && fc.NodeID == node && fc.Host != "" {
		fc.Host, fc.Port = l.AdvertisedHost, l.AdvertisedPort
	}
	for i := range fc.Coordinators {
		c := &fc.Coordinators[i]
		if c.ErrorCode == 0 && c.NodeID == node && c.Host != "" {
			c.Host, c.Port = l.AdvertisedHost, l.AdvertisedPort
		}
	}
}
