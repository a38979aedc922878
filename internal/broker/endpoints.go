package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/server"
)

// rewriteCoordinatorEndpoint makes a FindCoordinator answer name every coordinator by its
// advertised endpoint on the listener the request came in on (KafkaApis uses
// request.context.listenerName), so a SASL_SSL client is not sent to the PLAINTEXT port: this
// broker's own (the adapters set it already), another cluster node's from the registry.
func (b *Broker) rewriteCoordinatorEndpoint(fc *kmsg.FindCoordinatorResponse, l *server.Listener) {
	if fc.ErrorCode == 0 && fc.Host != "" {
		if host, port, ok := b.endpointOn(fc.NodeID, l); ok {
			fc.Host, fc.Port = host, port
		}
	}
	for i := range fc.Coordinators {
		c := &fc.Coordinators[i]
		if c.ErrorCode == 0 && c.Host != "" {
			if host, port, ok := b.endpointOn(c.NodeID, l); ok {
				c.Host, c.Port = host, port
			}
		}
	}
}
