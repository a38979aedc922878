package data

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func setErr(code *int16, msg **string, aerr *apiError) {
	*code = aerr.code.Code
	m := aerr.Error()
	*msg = &m
}

// CreateTopics creates topics (Kafka's CreateTopics semantics on one node).
// NumPartitions -1 → num.partitions; ReplicationFactor -1 → default, any
// value ≥ 1 is accepted and reported (the single replica is this node);
// a replica assignment sets the partition count. Errors per topic:
// INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
// INVALID_REQUEST (duplicate topic in request, or partitions and assignment
// both given, or an internal topic's name: only its coordinator creates it),
// INVALID_CONFIG, TOPIC_ALREADY_EXISTS. ValidateOnly checks
// without creating. v5+ echoes partitions, replication factor and configs.
func (p *Plane) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := make(map[string]int, len(req.Topics))
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		aerr := p.createOne(rt, req.ValidateOnly, seen[rt.Topic] > 1, &st)
		if aerr != nil {
			setErr(&st.ErrorCode, &st.ErrorMessage, aerr)
			st.NumPartitions, st.ReplicationFactor = -1, -1
			st.Configs = nil
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (p *Plane) createOne(rt kmsg.CreateTopicsRequestTopic, validateOnly, duplicate bool, st *kmsg.CreateTopicsResponseTopic) *apiError {
	if duplicate {
		return errf(kerr.InvalidRequest, "create topics request must not contain duplicate topics")
	}
	if kafkaInternalTopics[rt.Topic] {
		if t, _ := p.lookup(rt.Topic); t != nil {
			return errf(kerr.TopicAlreadyExists, "topic %q already exists", rt.Topic)
		}
		return errf(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", rt.Topic)
	}
	partitions, rf := rt.NumPartitions, rt.ReplicationFactor
	if len(rt.ReplicaAssignment) > 0 {
		if partitions != -1 || rf != -1 {
			return errf(kerr.InvalidRequest, "both numPartitions or replicationFactor and replicasAssignments were set; both cannot be used at the same time")
		}
		partitions = int32(len(rt.ReplicaAssignment))
		rf = int16(len(rt.ReplicaAssignment[0].Replicas))
		want := make([]int32, 0, partitions)
		for _, ra := range rt.ReplicaAssignment {
			want = append(want, ra.Partition)
			if len(ra.Replicas) == 0 {
				return errf(kerr.InvalidReplicaAssignment, "empty replica list for partition %d", ra.Partition)
			}
			for _, r := range ra.Replicas {
				if r != p.cfg.NodeID {
					return errf(kerr.InvalidReplicaAssignment, "broker %d does not exist", r)
				}
			}
		}
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		for i, w := range want {
			if w != int32(i) {
				return errf(kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence")
			}
		}
	}
	if partitions == -1 {
		partitions = p.cfg.NumPartitions
	}
	if rf == -1 {
		rf = p.cfg.DefaultReplicationFactor
	}
	if rf <= 0 {
		return errf(kerr.InvalidReplicationFactor, "replication factor must be larger than 0, or -1 to use the default value")
	}
	cfgs := make(map[string]*string, len(rt.Configs))
	for _, c := range rt.Configs {
		cfgs[c.Name] = c.Value
	}
	spec, aerr := p.checkCreate(rt.Topic, partitions, cfgs)
	if aerr != nil {
		return aerr
	}
	t, aerr := p.createTopic(spec, validateOnly)
	if aerr != nil {
		return aerr
	}
	st.TopicID = t.id
	st.NumPartitions, st.ReplicationFactor = partitions, rf
	layers := p.layers()
	for _, c := range p.topicConfigEntries(t, layers, layers.Effective()) {
		rc := kmsg.NewCreateTopicsResponseTopicConfig()
		rc.Name, rc.Value, rc.ReadOnly, rc.Source, rc.IsSensitive = c.Name, c.Value, c.ReadOnly, int8(c.Source), c.IsSensitive
		st.Configs = append(st.Configs, rc)
	}
	return nil
}

// DeleteTopics deletes topics by name (v0–v5 TopicNames; v6+ Topics with a
// name or a topic ID) along with all their records. Errors per topic:
// UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, INVALID_REQUEST (v6 entry
// with both or neither of name and ID, or a name or ID listed twice, which
// deletes nothing), INVALID_TOPIC_EXCEPTION for an
// internal topic (its coordinator owns it).
func (p *Plane) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	entries := req.Topics
	if req.Version < 6 {
		entries = nil
		for _, n := range req.TopicNames {
			name := n
			entries = append(entries, kmsg.DeleteTopicsRequestTopic{Topic: &name})
		}
	}
	// A name or an ID listed twice deletes nothing: INVALID_REQUEST (Kafka's
	// ControllerApis.deleteTopics, "Duplicate topic name." / "Duplicate topic id."). Kafka
	// answers it once; every entry is answered here, so that answers stay one per entry.
	names := make(map[string]int, len(entries))
	ids := make(map[[16]byte]int, len(entries))
	for _, rt := range entries {
		switch {
		case rt.Topic != nil && rt.TopicID == [16]byte{}:
			names[*rt.Topic]++
		case rt.Topic == nil && rt.TopicID != [16]byte{}:
			ids[rt.TopicID]++
		}
	}
	for _, rt := range entries {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var t *topic
		switch {
		case rt.Topic != nil && rt.TopicID == [16]byte{} && names[*rt.Topic] > 1,
			rt.Topic == nil && rt.TopicID != [16]byte{} && ids[rt.TopicID] > 1:
			what := "id"
			if rt.Topic != nil {
				what = "name"
			}
			setErr(&st.ErrorCode, &st.ErrorMessage, errf(kerr.InvalidRequest, "Duplicate topic %s.", what))
		case rt.Topic != nil && rt.TopicID != [16]byte{}:
			setErr(&st.ErrorCode, &st.ErrorMessage, errf(kerr.InvalidRequest, "topic name and topic ID cannot both be set"))
		case rt.Topic != nil:
			if t, _ = p.lookup(*rt.Topic); t == nil {
				st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
		case rt.TopicID != [16]byte{}:
			if t, _ = p.lookupID(rt.TopicID); t == nil {
				st.ErrorCode = kerr.UnknownTopicID.Code
			}
		default:
			setErr(&st.ErrorCode, &st.ErrorMessage, errf(kerr.InvalidRequest, "topic name or topic ID must be set"))
		}
		if t != nil {
			name := t.name
			st.Topic, st.TopicID = &name, t.id
			if t.internal {
				setErr(&st.ErrorCode, &st.ErrorMessage, internalTopicError("Cannot delete internal topic %s", t.name))
			} else if aerr := p.deleteTopic(t); aerr != nil {
				setErr(&st.ErrorCode, &st.ErrorMessage, aerr)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// CreatePartitions grows topics to Count partitions. Errors per topic:
// INVALID_TOPIC_EXCEPTION for an internal topic, UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (Count not above the current
// count), INVALID_REPLICA_ASSIGNMENT (assignment count ≠ new partitions, or a
// replica other than this node), INVALID_REQUEST (topic listed twice).
func (p *Plane) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := make(map[string]int, len(req.Topics))
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		if aerr := p.growOne(rt, req.ValidateOnly, seen[rt.Topic] > 1); aerr != nil {
			setErr(&st.ErrorCode, &st.ErrorMessage, aerr)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (p *Plane) growOne(rt kmsg.CreatePartitionsRequestTopic, validateOnly, duplicate bool) *apiError {
	if duplicate {
		return errf(kerr.InvalidRequest, "duplicate topic in request")
	}
	t, parts := p.lookup(rt.Topic)
	if t == nil {
		return errf(kerr.UnknownTopicOrPartition, "topic %q does not exist", rt.Topic)
	}
	if t.internal {
		return internalTopicError("Cannot change the partition count of internal topic %s: it has one partition per coordinator shard (offsets.topic.num.partitions)", t.name)
	}
	if rt.Assignment != nil {
		if int(rt.Count)-len(parts) != len(rt.Assignment) && rt.Count > int32(len(parts)) {
			return errf(kerr.InvalidReplicaAssignment, "increasing the number of partitions by %d but %d assignments provided", int(rt.Count)-len(parts), len(rt.Assignment))
		}
		for _, a := range rt.Assignment {
			for _, r := range a.Replicas {
				if r != p.cfg.NodeID {
					return errf(kerr.InvalidReplicaAssignment, "broker %d does not exist", r)
				}
			}
		}
	}
	return p.growTopic(t, rt.Count, validateOnly)
}
