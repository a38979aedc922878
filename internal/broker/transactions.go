package broker

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/coordinator/txn"
	"github.com/muster-io/muster/internal/coordinator/txnapi"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/store"
)

// startTransactions builds the transaction coordinator (KIP-98): its shards on their own store
// namespace, driven by the same engine as the group coordinator, and its adapters, wired to the
// data plane (markers, producer ids, Produce verification) and to the group coordinator
// (offset markers, TxnOffsetCommit verification, FindCoordinator for transactional ids).
func (b *Broker) startTransactions(v *config.Values) error {
	tcfg := txn.ConfigFrom(v)
	// Cluster mode: the shards are leased like the group coordinator's (kind "txn").
	cst, lease, err := b.clusterCoordinator("txn", tcfg.Shards, "transaction.state.log.num.partitions")
	if err != nil {
		return fmt.Errorf("transaction coordinator store: %w", err)
	}
	var st store.Store = cst
	if cst == nil {
		if st, err = store.OpenPebbleNamespace(b.db, store.TransactionNamespace, tcfg.Shards, b.guard); err != nil {
			return fmt.Errorf("transaction coordinator store: %w", err)
		}
	}
	b.txnSvc = txnapi.New(tcfg, b.log.With("component", "txn"), txnData{b.plane}, b.svc)
	b.txnSvc.Hooks = b.txnMetrics.hooks()
	b.txnRT = engine.New(engine.Options[*txn.ShardState]{
		Shards: tcfg.Shards,
		New: func(shard int32) *txn.ShardState {
			return txn.NewShardState(shard, tcfg, b.log, b.txnSvc.MarkersDue(shard))
		},
		Store:      st,
		Clock:      b.opts.Clock,
		Log:        b.log,
		QueueDepth: int(v.Int("muster.shard.queue.depth")),
		Managed:    cst != nil,
	})
	b.txnSvc.RT = b.txnRT
	if lease != nil {
		lease(b.txnRT)
		b.svc.TxnDirectory = txnDirectory{b}
	}
	if v.Bool("transaction.partition.verification.enable") {
		b.plane.SetTxnVerifier(txnVerifier{b.txnSvc})
		b.svc.Txn = b.txnSvc
	}
	b.svc.Transactions = b.txnSvc
	b.txnRT.Start()
	b.txnSvc.Start()
	return nil
}

// closeTransactions stops the marker writer and the transaction coordinator's shards (before
// the group coordinator, which the markers reach).
func (b *Broker) closeTransactions() {
	if b.txnSvc != nil {
		b.txnSvc.Close()
	}
	if b.txnRT != nil {
		b.txnRT.Close()
	}
}

// txnData is the data plane as txnapi.Data.
type txnData struct{ p *data.Plane }

func (d txnData) AppendTxnMarker(topic string, partition int32, pid int64, epoch int16, coordEpoch int32, commit bool) *kerr.Error {
	return d.p.AppendTxnMarker(topic, partition, pid, epoch, coordEpoch, commit)
}
func (d txnData) AllocProducerID() (int64, error) { return d.p.AllocProducerID() }
func (d txnData) Partitions(topic string) (int32, bool) {
	t, ok := d.p.Topic(topic)
	return t.Partitions, ok
}

// txnVerifier is the transaction coordinator as the data plane's data.TxnVerifier.
type txnVerifier struct{ s *txnapi.Service }

func (v txnVerifier) VerifyTxnPartitions(ctx context.Context, id string, pid int64, epoch int16, parts []data.TopicPartition) []*kerr.Error {
	tps := make([]txn.TopicPartition, len(parts))
	for i, p := range parts {
		tps[i] = txn.TopicPartition{Topic: p.Topic, Partition: p.Partition}
	}
	return v.s.VerifyPartitions(ctx, id, pid, epoch, tps)
}

// txnHandlers are the transaction APIs with Kafka's authorization (KafkaApis): the transaction
// coordinator's, WriteTxnMarkers and DescribeProducers (the data plane's). TxnOffsetCommit is the
// group coordinator's (api.Service.Handlers, authz_txn_offsets.go). InitProducerId goes through the data-plane adapter, which
// authorizes it and hands it to the transaction coordinator.
func (b *Broker) txnHandlers() map[int16]server.Handler {
	meta := func(r *server.Request) coordinator.Meta {
		return coordinator.Meta{APIVersion: r.Header.APIVersion, ClientID: r.Header.ClientID, ClientHost: r.ClientHostKafka}
	}
	return map[int16]server.Handler{
		24: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.AddPartitionsToTxnRequest)
			if resp := authorizeAddPartitions(b.check(r), req); resp != nil {
				return resp
			}
			return b.txnSvc.AddPartitionsToTxn(ctx, meta(r), req)
		},
		25: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.AddOffsetsToTxnRequest)
			c := b.check(r)
			if err := c.Denied(security.OpWrite, security.TransactionalID, req.TransactionalID); err != nil {
				return &kmsg.AddOffsetsToTxnResponse{Version: req.Version, ErrorCode: err.Code}
			}
			if err := c.Denied(security.OpRead, security.Group, req.Group); err != nil {
				return &kmsg.AddOffsetsToTxnResponse{Version: req.Version, ErrorCode: err.Code}
			}
			return b.txnSvc.AddOffsetsToTxn(ctx, meta(r), req)
		},
		26: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.EndTxnRequest)
			if err := b.check(r).Denied(security.OpWrite, security.TransactionalID, req.TransactionalID); err != nil {
				resp := req.ResponseKind().(*kmsg.EndTxnResponse)
				resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = err.Code, -1, -1
				return resp
			}
			return b.txnSvc.EndTxn(ctx, meta(r), req)
		},
		27: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.WriteTxnMarkersRequest)
			if !b.check(r).Cluster(security.OpClusterAction) {
				return writeTxnMarkersError(req, kerr.ClusterAuthorizationFailed)
			}
			return b.txnSvc.WriteTxnMarkers(ctx, meta(r), req)
		},
		61: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.DescribeProducersRequest)
			return describeProducers(ctx, b.check(r), b.plane, req)
		},
		65: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.DescribeTransactionsRequest)
			return describeTransactions(ctx, b.check(r), b.txnSvc, meta(r), req)
		},
		66: func(ctx context.Context, r *server.Request) kmsg.Response {
			req := r.Body.(*kmsg.ListTransactionsRequest)
			resp := b.txnSvc.ListTransactions(ctx, meta(r), req)
			c := b.check(r)
			kept := resp.TransactionStates[:0]
			for _, s := range resp.TransactionStates {
				if c.Visible(security.OpDescribe, security.TransactionalID, s.TransactionalID) {
					kept = append(kept, s)
				}
			}
			resp.TransactionStates = kept
			return resp
		},
	}
}

// authorizeAddPartitions applies AddPartitionsToTxn's authorization; nil when the request may
// proceed. v4+ is broker-to-broker: CLUSTER_ACTION. v0–v3: TRANSACTIONAL_ID WRITE (denied: every
// partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then TOPIC WRITE per topic (denied:
// TOPIC_AUTHORIZATION_FAILED, every other partition OPERATION_NOT_ATTEMPTED).
func authorizeAddPartitions(c security.Check, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version >= 4 {
		if !c.Cluster(security.OpClusterAction) {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return resp
		}
		return nil
	}
	idDenied := c.Denied(security.OpWrite, security.TransactionalID, req.TransactionalID)
	denied := map[string]bool{}
	if idDenied == nil {
		for _, t := range req.Topics {
			if !c.Allowed(security.OpWrite, security.Topic, t.Topic) {
				denied[t.Topic] = true
			}
		}
	}
	if idDenied == nil && len(denied) == 0 {
		return nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		code := kerr.OperationNotAttempted.Code
		switch {
		case idDenied != nil:
			code = idDenied.Code
		case denied[t.Topic]:
			code = kerr.TopicAuthorizationFailed.Code
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func writeTxnMarkersError(req *kmsg.WriteTxnMarkersRequest, err *kerr.Error) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, err.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

// describeProducers authorizes DescribeProducers (TOPIC READ per topic, denied:
// TOPIC_AUTHORIZATION_FAILED for its partitions) and asks the data plane for the rest.
func describeProducers(ctx context.Context, c security.Check, p *data.Plane, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	sub := *req
	sub.Topics = nil
	denied := map[int]bool{}
	for i, t := range req.Topics {
		if c.Allowed(security.OpRead, security.Topic, t.Topic) {
			sub.Topics = append(sub.Topics, t)
		} else {
			denied[i] = true
		}
	}
	got := p.DescribeProducers(ctx, &sub)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	j := 0
	for i, t := range req.Topics {
		if !denied[i] {
			resp.Topics = append(resp.Topics, got.Topics[j])
			j++
			continue
		}
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, pi := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = pi, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// describeTransactions authorizes DescribeTransactions: TRANSACTIONAL_ID DESCRIBE per id
// (denied: TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and the partitions of a description are those
// of topics the caller may DESCRIBE (Kafka's handleDescribeTransactionsRequest).
func describeTransactions(ctx context.Context, c security.Check, s *txnapi.Service, meta coordinator.Meta, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	sub := *req
	sub.TransactionalIDs = nil
	denied := map[int]bool{}
	for i, id := range req.TransactionalIDs {
		if c.Allowed(security.OpDescribe, security.TransactionalID, id) {
			sub.TransactionalIDs = append(sub.TransactionalIDs, id)
		} else {
			denied[i] = true
		}
	}
	got := s.DescribeTransactions(ctx, meta, &sub)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	j := 0
	for i, id := range req.TransactionalIDs {
		if denied[i] {
			d := kmsg.NewDescribeTransactionsResponseTransactionState()
			d.TransactionalID, d.ErrorCode = id, kerr.TransactionalIDAuthorizationFailed.Code
			resp.TransactionStates = append(resp.TransactionStates, d)
			continue
		}
		d := got.TransactionStates[j]
		j++
		topics := d.Topics[:0]
		for _, t := range d.Topics {
			if t.Topic == txn.OffsetsTopic || c.Visible(security.OpDescribe, security.Topic, t.Topic) {
				topics = append(topics, t)
			}
		}
		d.Topics = topics
		resp.TransactionStates = append(resp.TransactionStates, d)
	}
	return resp
}

// producerIDs is the transaction coordinator as the data-plane adapter's InitProducerId.
type producerIDs struct{ s *txnapi.Service }

func (p producerIDs) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	return p.s.InitProducerID(ctx, coordinator.Meta{APIVersion: req.Version}, req)
}

// txnDirectory answers FindCoordinator for transactional ids whose shard another cluster node
// serves.
type txnDirectory struct{ b *Broker }

func (d txnDirectory) Coordinator(shard int32) (api.Endpoint, bool) {
	return d.b.clusterOwner("txn", shard)
}
