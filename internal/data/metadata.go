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
// Bad names → INVALID_TOPIC_EXCEPTION. Topic ids (KIP-516) are served from
// v12: a request naming any topic by id is answered by id only (names are not
// looked up, nothing is created), an unknown id → UNKNOWN_TOPIC_ID; v10–v11
// define the fields but not their use, so a null name or a topic id there
// fails the whole request with INVALID_REQUEST, as Kafka's
// KafkaApis.handleTopicMetadataRequest does (v13+ also sets the top-level
// error code, KIP-1102).
func (p *Plane) Metadata(ctx context.Context, req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if !all && req.Version < 12 {
		for _, rt := range req.Topics {
			if rt.Topic == nil || rt.TopicID != ([16]byte{}) {
				return metadataError(req, kerr.InvalidRequest)
			}
		}
	}
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

	if all {
		for _, t := range p.sortedTopics() {
			p.mu.RLock()
			parts := t.parts
			p.mu.RUnlock()
			resp.Topics = append(resp.Topics, p.metadataTopic(t, parts))
		}
		return resp
	}
	byID := false
	for _, rt := range req.Topics {
		byID = byID || rt.TopicID != ([16]byte{})
	}
	if byID {
		for _, rt := range req.Topics {
			if rt.TopicID == ([16]byte{}) {
				continue
			}
			t, parts := p.lookupID(rt.TopicID)
			if t == nil {
				st := kmsg.NewMetadataResponseTopic()
				st.TopicID = rt.TopicID
				st.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, st)
				continue
			}
			resp.Topics = append(resp.Topics, p.metadataTopic(t, parts))
		}
		return resp
	}
	allowCreate := req.Version < 4 || req.AllowAutoTopicCreation
	for _, rt := range req.Topics {
		if rt.Topic == nil {
			continue
		}
		t, parts, aerr := p.autoCreate(*rt.Topic, allowCreate)
		if aerr != nil {
			st := kmsg.NewMetadataResponseTopic()
			name := *rt.Topic
			st.Topic = &name
			st.ErrorCode = aerr.code.Code
			st.IsInternal = kafkaInternalTopics[name]
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

// metadataError is Kafka's MetadataRequest.getErrorResponse: every requested topic (a null name
// as "") with the error and no partitions, the top-level error code (v13+), no brokers.
func metadataError(req *kmsg.MetadataRequest, code *kerr.Error) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.ErrorCode = code.Code
	for _, rt := range req.Topics {
		st := kmsg.NewMetadataResponseTopic()
		name := ""
		if rt.Topic != nil {
			name = *rt.Topic
		}
		st.Topic, st.TopicID, st.ErrorCode = &name, rt.TopicID, code.Code
		st.Partitions = []kmsg.MetadataResponseTopicPartition{}
		resp.Topics = append(resp.Topics, st)
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
// Kafka broker answers. v2's IncludeFencedBrokers (KIP-1073) changes nothing:
// the one broker is never fenced (IsFenced false).
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
