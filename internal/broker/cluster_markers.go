package broker

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator/txn"
	"github.com/muster-io/muster/internal/store/postgres"
)

// clusterMarkers writes the transaction coordinator's markers at other nodes (cluster mode):
// as Kafka's TransactionMarkerChannelManager does, a WriteTxnMarkers request goes to the leader
// of each partition this node does not lead, and to the node serving the group coordinator
// shard of a __consumer_offsets partition. Requests travel over the inter-broker listener with
// its TLS and SASL settings (interbroker.go); with an authorizer, the inter-broker principal
// needs CLUSTER_ACTION on the cluster, as Kafka's does (docs/cluster.md).
type clusterMarkers struct {
	b *Broker

	mu sync.Mutex
	cl *kgo.Client
}

// leader returns the node that writes tp's marker, when it is another node.
func (m *clusterMarkers) leader(tp txn.TopicPartition) (int32, bool) {
	mgr := m.b.cl.mgr
	if mgr == nil {
		return -1, false
	}
	if tp.Topic == txn.OffsetsTopic {
		n, ok := mgr.Owner(groupKind, tp.Partition)
		return n.ID, ok
	}
	info, ok := m.b.plane.Topic(tp.Topic)
	if !ok {
		return -1, false
	}
	node, _, ok := mgr.Lease(postgres.PartitionLeaseKind(info.ID), tp.Partition)
	if !ok || node == m.b.cl.me.ID {
		return -1, false
	}
	return node, true
}

func (m *clusterMarkers) client() (*kgo.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cl != nil {
		return m.cl, nil
	}
	ib := m.b.cl.inter
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(ib.seed),
		kgo.ClientID(fmt.Sprintf("muster-node-%d", m.b.cl.me.ID))}, ib.opts...)...)
	if err != nil {
		return nil, err
	}
	m.cl = cl
	return cl, nil
}

// request sends req to node (learning the brokers first when the client has not seen it).
func (m *clusterMarkers) request(ctx context.Context, node int32, req kmsg.Request) (kmsg.Response, error) {
	cl, err := m.client()
	if err != nil {
		return nil, err
	}
	resp, err := cl.Broker(int(node)).Request(ctx, req)
	if err != nil {
		if _, merr := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); merr != nil {
			return nil, err
		}
		resp, err = cl.Broker(int(node)).Request(ctx, req)
	}
	return resp, err
}

// VerifyPartitions implements txnapi.Remote: AddPartitionsToTxn v4 with VerifyOnly at the
// transaction coordinator's node.
func (m *clusterMarkers) VerifyPartitions(ctx context.Context, shard int32, id string, pid int64, epoch int16, parts []txn.TopicPartition) (bool, []*kerr.Error) {
	if m.b.cl.mgr == nil {
		return false, nil
	}
	n, ok := m.b.cl.mgr.Owner("txn", shard)
	if !ok {
		return false, nil
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = id, pid, epoch, true
	idx := map[string]int{}
	for _, p := range parts {
		i, ok := idx[p.Topic]
		if !ok {
			i = len(tr.Topics)
			idx[p.Topic] = i
			t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			t.Topic = p.Topic
			tr.Topics = append(tr.Topics, t)
		}
		tr.Topics[i].Partitions = append(tr.Topics[i].Partitions, p.Partition)
	}
	req.Transactions = append(req.Transactions, tr)
	errs := make([]*kerr.Error, len(parts))
	fill := func(e *kerr.Error) (bool, []*kerr.Error) {
		for i := range errs {
			errs[i] = e
		}
		return true, errs
	}
	resp, err := m.request(ctx, n.ID, req)
	if err != nil {
		return fill(kerr.CoordinatorNotAvailable)
	}
	r := resp.(*kmsg.AddPartitionsToTxnResponse)
	if r.ErrorCode != 0 {
		return fill(kerr.ErrorForCode(r.ErrorCode).(*kerr.Error))
	}
	codes := map[txn.TopicPartition]int16{}
	for _, t := range r.Transactions {
		for _, rt := range t.Topics {
			for _, rp := range rt.Partitions {
				codes[txn.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}] = rp.ErrorCode
			}
		}
	}
	for i, p := range parts {
		code, ok := codes[p]
		switch {
		case !ok:
			errs[i] = kerr.CoordinatorNotAvailable
		case code != 0:
			errs[i] = kerr.ErrorForCode(code).(*kerr.Error)
		}
	}
	return true, errs
}

// WriteMarker implements txnapi.Remote.
func (m *clusterMarkers) WriteMarker(ctx context.Context, tp txn.TopicPartition, pid int64, epoch int16, commit bool, coordEpoch int32) (bool, error) {
	node, ok := m.leader(tp)
	if !ok {
		return false, nil
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = pid, epoch, commit, coordEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = tp.Topic, []int32{tp.Partition}
	mk.Topics = append(mk.Topics, mt)
	req.Markers = append(req.Markers, mk)
	resp, err := m.request(ctx, node, req)
	if err != nil {
		return true, err
	}
	r := resp.(*kmsg.WriteTxnMarkersResponse)
	if len(r.Markers) != 1 || len(r.Markers[0].Topics) != 1 || len(r.Markers[0].Topics[0].Partitions) != 1 {
		return true, fmt.Errorf("node %d answered WriteTxnMarkers with %d markers", node, len(r.Markers))
	}
	return true, kerr.ErrorForCode(r.Markers[0].Topics[0].Partitions[0].ErrorCode)
}

func (m *clusterMarkers) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cl != nil {
		m.cl.Close()
		m.cl = nil
	}
}
