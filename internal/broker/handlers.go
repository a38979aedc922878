package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/wire"
)

// dataHandler adapts a typed data-plane method to a server handler.
func dataHandler[Req kmsg.Request, Resp kmsg.Response](fn func(context.Context, Req) Resp) server.Handler {
	return func(ctx context.Context, r *server.Request) kmsg.Response { return fn(ctx, r.Body.(Req)) }
}

// registerHandlers binds every supported API key to its implementation: data-plane keys to the
// Plane, group keys to the coordinator adapters (api.Service.Handlers lists what they serve).
func (b *Broker) registerHandlers() {
	p := b.plane
	data := map[int16]server.Handler{
		0: func(ctx context.Context, r *server.Request) kmsg.Response {
			if resp := p.Produce(ctx, r.Body.(*kmsg.ProduceRequest)); resp != nil {
				return resp
			}
			return nil // acks=0: no response (a typed nil would still be sent)
		},
		1:  dataHandler(p.Fetch),
		2:  dataHandler(p.ListOffsets),
		3:  dataHandler(p.Metadata),
		19: dataHandler(p.CreateTopics),
		20: dataHandler(p.DeleteTopics),
		21: dataHandler(p.DeleteRecords),
		22: dataHandler(p.InitProducerID),
		23: dataHandler(p.OffsetForLeaderEpoch),
		32: dataHandler(p.DescribeConfigs),
		33: dataHandler(p.AlterConfigs),
		37: dataHandler(p.CreatePartitions),
		44: dataHandler(p.IncrementalAlterConfigs),
		60: dataHandler(p.DescribeCluster),
	}
	coord := map[int16]server.Handler{}
	for _, h := range b.svc.Handlers() {
		coord[h.Key] = coordHandler(h)
	}
	if b.lag != nil {
		coord[kmsg.OffsetCommit.Int16()] = b.observeCommits(coord[kmsg.OffsetCommit.Int16()])
	}
	for _, a := range wire.Supported {
		if h, ok := data[a.Key]; ok {
			b.srv.Handle(a.Key, h)
		} else if h, ok := coord[a.Key]; ok {
			b.srv.Handle(a.Key, h)
		}
	}
}

// coordHandler adapts a group coordinator API to a server handler, passing the request's
// version and client.
func coordHandler(h api.Handler) server.Handler {
	return func(ctx context.Context, r *server.Request) kmsg.Response {
		return h.Serve(ctx, coordinator.Meta{APIVersion: r.Header.APIVersion, ClientID: r.Header.ClientID, ClientHost: r.ClientHostKafka}, r.Body)
	}
}
