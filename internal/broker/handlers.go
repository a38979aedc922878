package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/wire"
)

// registerHandlers binds every supported API key to its implementation: data-plane keys to the
// Plane, group keys to the coordinator Service (whose registry lists what it serves).
func (b *Broker) registerHandlers() {
	p := b.plane
	data := map[int16]server.Handler{
		0: func(ctx context.Context, r *server.Request) kmsg.Response {
			resp := p.Produce(ctx, r.Body.(*kmsg.ProduceRequest))
			if resp == nil {
				return nil // acks=0
			}
			return resp
		},
		1: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.Fetch(ctx, r.Body.(*kmsg.FetchRequest))
		},
		2: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.ListOffsets(ctx, r.Body.(*kmsg.ListOffsetsRequest))
		},
		3: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.Metadata(ctx, r.Body.(*kmsg.MetadataRequest))
		},
		19: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.CreateTopics(ctx, r.Body.(*kmsg.CreateTopicsRequest))
		},
		20: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.DeleteTopics(ctx, r.Body.(*kmsg.DeleteTopicsRequest))
		},
		21: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.DeleteRecords(ctx, r.Body.(*kmsg.DeleteRecordsRequest))
		},
		22: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.InitProducerID(ctx, r.Body.(*kmsg.InitProducerIDRequest))
		},
		23: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.OffsetForLeaderEpoch(ctx, r.Body.(*kmsg.OffsetForLeaderEpochRequest))
		},
		32: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.DescribeConfigs(ctx, r.Body.(*kmsg.DescribeConfigsRequest))
		},
		37: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.CreatePartitions(ctx, r.Body.(*kmsg.CreatePartitionsRequest))
		},
		60: func(ctx context.Context, r *server.Request) kmsg.Response {
			return p.DescribeCluster(ctx, r.Body.(*kmsg.DescribeClusterRequest))
		},
	}
	ch := coordHandler(b.svc)
	for _, a := range wire.Supported {
		if h, ok := data[a.Key]; ok {
			b.srv.Handle(a.Key, h)
			continue
		}
		if coordinator.Handles(a.Key) {
			b.srv.Handle(a.Key, ch)
		}
	}
}
