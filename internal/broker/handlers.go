package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/data/dataapi"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/security/adminapi"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/wire"
)

// check is the request's view of the authorizer.
func (b *Broker) check(r *server.Request) security.Check {
	s := r.Session
	if s == nil {
		s = security.NewSession(security.Anonymous, r.ClientHost, "", security.Plaintext, "")
	}
	return security.Check{A: b.authz, S: s, API: r.Header.APIKey}
}

// dataReq is what the data-plane adapters need of a request: its authorization and the
// endpoint of its listener.
func (b *Broker) dataReq(r *server.Request) dataapi.Req {
	dr := dataapi.Req{Check: b.check(r)}
	if r.Listener != nil {
		dr.Host, dr.Port = r.Listener.AdvertisedHost, r.Listener.AdvertisedPort
	}
	return dr
}

// registerHandlers binds every supported API key to its implementation: data-plane keys to
// their authorizing adapters over the Plane (dataapi), the ACL and SCRAM APIs to adminapi, group
// keys to the coordinator adapters (api.Service.Handlers lists what they serve).
func (b *Broker) registerHandlers() {
	a := dataapi.Adapters{P: b.plane, Producers: producerIDs{b.txnSvc}}
	adm := &adminapi.Handlers{Scram: b.creds}
	if b.std != nil {
		adm.ACLs = b.std
	}
	h := map[int16]server.Handler{
		0: func(ctx context.Context, r *server.Request) kmsg.Response {
			ctx = data.WithSequenced(ctx, r.Sequenced) // pipelined produces sync together
			if resp := a.Produce(ctx, b.dataReq(r), r.Body.(*kmsg.ProduceRequest)); resp != nil {
				return resp
			}
			return nil // acks=0: no response (a typed nil would still be sent)
		},
		1: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.Fetch(ctx, b.dataReq(r), r.Body.(*kmsg.FetchRequest))
		},
		2: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.ListOffsets(ctx, b.dataReq(r), r.Body.(*kmsg.ListOffsetsRequest))
		},
		3: func(ctx context.Context, r *server.Request) kmsg.Response {
			return b.withClusterBrokers(a.Metadata(ctx, b.dataReq(r), r.Body.(*kmsg.MetadataRequest)), r.Listener)
		},
		19: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.CreateTopics(ctx, b.dataReq(r), r.Body.(*kmsg.CreateTopicsRequest))
		},
		20: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.DeleteTopics(ctx, b.dataReq(r), r.Body.(*kmsg.DeleteTopicsRequest))
		},
		21: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.DeleteRecords(ctx, b.dataReq(r), r.Body.(*kmsg.DeleteRecordsRequest))
		},
		22: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.InitProducerID(ctx, b.dataReq(r), r.Body.(*kmsg.InitProducerIDRequest))
		},
		23: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.OffsetForLeaderEpoch(ctx, b.dataReq(r), r.Body.(*kmsg.OffsetForLeaderEpochRequest))
		},
		32: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.DescribeConfigs(ctx, b.dataReq(r), r.Body.(*kmsg.DescribeConfigsRequest))
		},
		37: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.CreatePartitions(ctx, b.dataReq(r), r.Body.(*kmsg.CreatePartitionsRequest))
		},
		60: func(ctx context.Context, r *server.Request) kmsg.Response {
			return b.withClusterNodes(a.DescribeCluster(ctx, b.dataReq(r), r.Body.(*kmsg.DescribeClusterRequest)), r.Listener)
		},
		29: func(_ context.Context, r *server.Request) kmsg.Response {
			return adm.DescribeACLs(b.check(r), r.Body.(*kmsg.DescribeACLsRequest))
		},
		30: func(_ context.Context, r *server.Request) kmsg.Response {
			return adm.CreateACLs(b.check(r), r.Body.(*kmsg.CreateACLsRequest))
		},
		31: func(_ context.Context, r *server.Request) kmsg.Response {
			return adm.DeleteACLs(b.check(r), r.Body.(*kmsg.DeleteACLsRequest))
		},
		50: func(_ context.Context, r *server.Request) kmsg.Response {
			return adm.DescribeUserSCRAMCredentials(b.check(r), r.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest))
		},
		51: func(_ context.Context, r *server.Request) kmsg.Response {
			return adm.AlterUserSCRAMCredentials(b.check(r), r.Body.(*kmsg.AlterUserSCRAMCredentialsRequest))
		},
		33: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.AlterConfigs(ctx, b.dataReq(r), r.Body.(*kmsg.AlterConfigsRequest))
		},
		44: func(ctx context.Context, r *server.Request) kmsg.Response {
			return a.IncrementalAlterConfigs(ctx, b.dataReq(r), r.Body.(*kmsg.IncrementalAlterConfigsRequest))
		},
	}
	for k, hd := range b.txnHandlers() {
		h[k] = hd
	}
	coord := map[int16]server.Handler{}
	for _, ch := range b.svc.Handlers() {
		coord[ch.Key] = b.coordHandler(ch)
	}
	if b.lag != nil {
		coord[kmsg.OffsetCommit.Int16()] = b.observeCommits(coord[kmsg.OffsetCommit.Int16()])
	}
	for _, w := range wire.Supported {
		if hd, ok := h[w.Key]; ok {
			b.srv.Handle(w.Key, hd)
		} else if hd, ok := coord[w.Key]; ok {
			b.srv.Handle(w.Key, hd)
		}
	}
}

// coordHandler adapts a group coordinator API to a server handler, passing the request's
// version and client, its authorization, and the endpoint of the listener it came in on (which
// FindCoordinator answers; in cluster mode another node's endpoint on that listener comes from
// the registry).
func (b *Broker) coordHandler(h api.Handler) server.Handler {
	return func(ctx context.Context, r *server.Request) kmsg.Response {
		ar := api.Req{
			Meta:  coordinator.Meta{APIVersion: r.Header.APIVersion, ClientID: r.Header.ClientID, ClientHost: r.ClientHostKafka},
			Check: b.check(r),
		}
		if r.Listener != nil {
			ar.Host, ar.Port = r.Listener.AdvertisedHost, r.Listener.AdvertisedPort
		}
		resp := h.Serve(ctx, ar, r.Body)
		if fc, ok := resp.(*kmsg.FindCoordinatorResponse); ok && b.cl != nil && r.Listener != nil {
			b.rewriteCoordinatorEndpoint(fc, r.Listener) // cluster mode: other nodes' endpoints
		}
		return resp
	}
}
