package data

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata describes this broker and the requested topics (all topics for
// v0's empty list or v1+'s null list). Each partition is led by this node,
// leader epoch 0, replicas = ISR = [NodeID]. Unknown topics are created when
// the request allows it (always for v0–v3, AllowAutoTopicCreation for v4+)
// and auto.create.topics.enable is set; otherwise UNKNOWN_TOPIC_OR_PARTITION.
// Bad names → INVALID_TOPIC_EXCEPTION; unknown topic IDs (v10+) → UNKNOWN_TOPIC_ID.
func (p *Plane) Metadata(ctx context.Context, req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = p.cfg.NodeID, p.cfg.AdvertisedHost, p.cfg.AdvertisedPort
	if p.cfg.Rack != "" {
		rack := p.cfg.Rack
		b.Rack = &rack
	}
	resp.Brokers = []kmsg.MetadataResponseBroker{b}
	clusterID := p.cfg.ClusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = p.cfg.NodeID

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, t := range p.sortedTopics() {
			p.mu.RLock()
			parts := t.parts
			p.mu.RUnlock()
			resp.Topics = append(resp.Topics, p.metadataTopic(t, parts))
		}
		return resp
	}
	allowCreate := req.Version < 4 || req.AllowAutoTopicCreation
	for _, rt := range req.Topics {
		if rt.Topic == nil {
			st := kmsg.NewMetadataResponseTopic()
			st.TopicID = rt.TopicID
			t, parts := p.lookupID(rt.TopicID)
			if t == nil {
				st.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, st)
				continue
			}
			resp.Topics = append(resp.Topics, p.metadataTopic(t, parts))
			continue
		}
		t, parts, aerr := p.autoCreate(*rt.Topic, allowCreate)
		if aerr != nil {
			st := kmsg.NewMetadataResponseTopic()
			name := *rt.Topic
			st.Topic = &name
			st.ErrorCode = aerr.code.Code
			if aerr.code == kerr.KafkaStorageError {
				// Auto-creation refused (a full disk): retriable, as while Kafka creates a topic.
				st.ErrorCode = kerr.LeaderNotAvailable.Code
			}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		resp.Topics = append(resp.Topics, p.metadataTopic(t, parts))
	}
	return resp
}

func (p *Plane) metadataTopic(t *topic, parts []*partition) kmsg.MetadataResponseTopic {
	st := kmsg.NewMetadataResponseTopic()
	name := t.name
	st.Topic = &name
	st.TopicID = t.id
	st.IsInternal = t.internal
	st.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(parts))
	for i := range parts {
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition = int32(i)
		sp.Leader = p.cfg.NodeID
		sp.LeaderEpoch = 0
		sp.Replicas = []int32{p.cfg.NodeID}
		sp.ISR = []int32{p.cfg.NodeID}
		sp.OfflineReplicas = []int32{}
		st.Partitions[i] = sp
	}
	return st
}

// DescribeCluster describes the one-broker cluster (KIP-700). Asking for
// controller endpoints (v1+ EndpointType 2) → UNSUPPORTED_ENDPOINT_TYPE, as a
// Kafka broker answers.
func (p *Plane) DescribeCluster(ctx context.Context, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = 1
	if req.Version >= 1 {
		resp.EndpointType = req.EndpointType
		if req.EndpointType != 1 {
			resp.ErrorCode = kerr.UnsupportedEndpointType.Code
			return resp
		}
	}
	resp.ClusterID = p.cfg.ClusterID
	resp.ControllerID = p.cfg.NodeID
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = p.cfg.NodeID, p.cfg.AdvertisedHost, p.cfg.AdvertisedPort
	if p.cfg.Rack != "" {
		rack := p.cfg.Rack
		b.Rack = &rack
	}
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return resp
}
