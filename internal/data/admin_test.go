package data

import (
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
)

func strp(s string) *string { return &s }

func TestMetadataAllVersions(t *testing.T) {
	e := newEnv(t)
	e.cfg.Rack = "rack-a"
	e.restart()
	ti := e.createTopic("m", 3, nil)
	e.createTopic("a", 1, nil)
	for v := int16(0); v <= 13; v++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		if v == 0 {
			req.Topics = []kmsg.MetadataRequestTopic{}
		}
		resp := e.p.Metadata(e.ctx, req)
		if resp.Version != v || len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 || resp.Brokers[0].Port != 9092 {
			t.Fatalf("v%d brokers %+v", v, resp.Brokers)
		}
		if *resp.Brokers[0].Rack != "rack-a" || *resp.ClusterID != "muster-test" || resp.ControllerID != 1 {
			t.Fatalf("v%d cluster fields", v)
		}
		if len(resp.Topics) != 2 || *resp.Topics[0].Topic != "a" || *resp.Topics[1].Topic != "m" {
			t.Fatalf("v%d topics %+v", v, resp.Topics)
		}
		m := resp.Topics[1]
		if m.TopicID != ti.ID || len(m.Partitions) != 3 {
			t.Fatalf("v%d topic m %+v", v, m)
		}
		for i, p := range m.Partitions {
			if p.Partition != int32(i) || p.Leader != 1 || p.LeaderEpoch != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
				t.Fatalf("v%d partition %+v", v, p)
			}
		}
		// Round-trip through the wire encoding of this version.
		var back kmsg.MetadataResponse
		back.Version = v
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("v%d encode: %v", v, err)
		}
	}
}

func TestMetadataAutoCreateAndIDs(t *testing.T) {
	e := newEnv(t)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: strp("new")}}
	if resp := e.p.Metadata(e.ctx, req); resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("created without AllowAutoTopicCreation: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
	req.AllowAutoTopicCreation = true
	resp := e.p.Metadata(e.ctx, req)
	if resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].TopicID == [16]byte{} {
		t.Fatalf("auto-create: %+v", resp.Topics[0])
	}
	id := resp.Topics[0].TopicID
	// A request naming topics by id is answered by id only (KafkaApis): the
	// name-only entry is not looked up.
	req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}, {TopicID: [16]byte{1, 2}}, {Topic: strp("ignored")}}
	resp = e.p.Metadata(e.ctx, req)
	if len(resp.Topics) != 2 || *resp.Topics[0].Topic != "new" || resp.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("lookups: %+v", resp.Topics)
	}
	if _, ok := e.p.Topic("ignored"); ok {
		t.Fatal("a name in a by-id request was auto-created")
	}
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: strp("bad/name")}}
	if resp := e.p.Metadata(e.ctx, req); resp.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("bad name: %+v", resp.Topics)
	}
	// v10–v11 carry the fields but Kafka serves ids from v12 only.
	for _, v := range []int16{10, 11} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: strp("new"), TopicID: id}}
		if resp := e.p.Metadata(e.ctx, req); len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code || len(resp.Brokers) != 0 {
			t.Fatalf("v%d topic id: %+v", v, resp)
		}
		req.Topics = []kmsg.MetadataRequestTopic{{}}
		if resp := e.p.Metadata(e.ctx, req); resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code || *resp.Topics[0].Topic != "" {
			t.Fatalf("v%d null name: %+v", v, resp)
		}
	}
	req.Topics = []kmsg.MetadataRequestTopic{}
	if resp := e.p.Metadata(e.ctx, req); len(resp.Topics) != 0 {
		t.Fatal("v1+ empty list must list no topics")
	}
}

func createReq(version int16, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = version
	req.Topics = topics
	return req
}

func ct(name string, parts int32, rf int16, cfgs ...string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, rf
	for i := 0; i+1 < len(cfgs); i += 2 {
		rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: cfgs[i], Value: strp(cfgs[i+1])})
	}
	return rt
}

func TestCreateTopicsErrors(t *testing.T) {
	e := newEnv(t)
	e.createTopic("exists", 1, nil)
	resp := e.p.CreateTopics(e.ctx, createReq(7,
		ct("ok", -1, -1, "cleanup.policy", "compact"),
		ct("exists", 1, 1),
		ct("..", 1, 1),
		ct(strings.Repeat("x", 250), 1, 1),
		ct("zero", 0, 1),
		ct("rf0", 1, 0),
		ct("badcfg", 1, 1, "no.such.config", "1"),
		ct("badval", 1, 1, "retention.ms", "soon"),
		ct("dup", 1, 1), ct("dup", 1, 1),
		ct("__internal_ok", 2, 3),
	))
	want := []*kerr.Error{nil, kerr.TopicAlreadyExists, kerr.InvalidTopicException, kerr.InvalidTopicException,
		kerr.InvalidPartitions, kerr.InvalidReplicationFactor, kerr.InvalidConfig, kerr.InvalidConfig,
		kerr.InvalidRequest, kerr.InvalidRequest, nil}
	for i, st := range resp.Topics {
		if got := kerr.ErrorForCode(st.ErrorCode); got != error(want[i]) && !(want[i] == nil && got == nil) {
			t.Errorf("%s: got %v, want %v", st.Topic, got, want[i])
		}
	}
	ok := resp.Topics[0]
	if ok.NumPartitions != 1 || ok.ReplicationFactor != 1 || ok.TopicID == [16]byte{} {
		t.Fatalf("ok topic %+v", ok)
	}
	var found bool
	for _, c := range ok.Configs {
		if c.Name == "cleanup.policy" && *c.Value == "compact" && c.Source == int8(kmsg.ConfigSourceDynamicTopicConfig) {
			found = true
		}
	}
	if !found {
		t.Fatal("override not echoed")
	}
	if st := resp.Topics[10]; st.ReplicationFactor != 3 || st.NumPartitions != 2 {
		t.Fatalf("internal topic %+v", st)
	}
	req := createReq(4, ct("validate", 2, 1))
	req.ValidateOnly = true
	if resp := e.p.CreateTopics(e.ctx, req); resp.Topics[0].ErrorCode != 0 {
		t.Fatal("validate only failed")
	}
	if _, ok := e.p.Topic("validate"); ok {
		t.Fatal("validate only created the topic")
	}
}

func TestDeleteTopicsByNameAndID(t *testing.T) {
	e := newEnv(t)
	var changes []TopicChange
	var mu sync.Mutex
	e.p.Subscribe(func(c TopicChange) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
	a := e.createTopic("a", 1, nil)
	e.createTopic("b", 1, nil)
	e.produce("a", 0, makeBatch(batchOpts{n: 2}))
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: a.ID}, {Topic: strp("b")}, {Topic: strp("c")}, {TopicID: [16]byte{3}}}
	resp := e.p.DeleteTopics(e.ctx, req)
	codes := []*kerr.Error{nil, nil, kerr.UnknownTopicOrPartition, kerr.UnknownTopicID}
	for i, st := range resp.Topics {
		if st.ErrorCode != codeOf(codes[i]) {
			t.Errorf("%d: %v", i, kerr.ErrorForCode(st.ErrorCode))
		}
	}
	if *resp.Topics[0].Topic != "a" {
		t.Fatal("name not filled for delete by id")
	}
	// Re-creating gives an empty topic with a new ID, also after restart.
	a2 := e.createTopic("a", 1, nil)
	if a2.ID == a.ID {
		t.Fatal("same topic id")
	}
	e.restart()
	if _, hw, _ := e.p.Offsets("a", 0); hw != 0 {
		t.Fatalf("recreated topic has hw %d", hw)
	}
	if _, ok := e.p.Topic("b"); ok {
		t.Fatal("b survived")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 5 || changes[0].Created[0].Name != "a" || changes[2].Deleted[0].Name != "a" || changes[3].Deleted[0].Name != "b" || changes[4].Created[0].ID != a2.ID {
		t.Fatalf("changes %+v", changes)
	}
}

func codeOf(e *kerr.Error) int16 {
	if e == nil {
		return 0
	}
	return e.Code
}

func TestCreatePartitions(t *testing.T) {
	e := newEnv(t)
	e.createTopic("g", 2, nil)
	var resized []TopicInfo
	e.p.Subscribe(func(c TopicChange) { resized = append(resized, c.Resized...) })
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	req.Topics = []kmsg.CreatePartitionsRequestTopic{
		{Topic: "g", Count: 5},
		{Topic: "missing", Count: 3},
	}
	resp := e.p.CreatePartitions(e.ctx, req)
	if resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("%+v", resp.Topics)
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "g", Count: 5}, {Topic: "g", Count: 6}}
	for _, st := range e.p.CreatePartitions(e.ctx, req).Topics {
		if st.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("duplicate: %v", kerr.ErrorForCode(st.ErrorCode))
		}
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "g", Count: 4}}
	if st := e.p.CreatePartitions(e.ctx, req).Topics[0]; st.ErrorCode != kerr.InvalidPartitions.Code {
		t.Fatalf("shrink: %v", kerr.ErrorForCode(st.ErrorCode))
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "g", Count: 7, Assignment: []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{1}}}}}
	if st := e.p.CreatePartitions(e.ctx, req).Topics[0]; st.ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Fatalf("bad assignment: %v", kerr.ErrorForCode(st.ErrorCode))
	}
	e.restart()
	if ti, _ := e.p.Topic("g"); ti.Partitions != 5 {
		t.Fatalf("partitions after restart %d", ti.Partitions)
	}
	if sp := e.produce("g", 4, makeBatch(batchOpts{n: 1})); sp.ErrorCode != 0 {
		t.Fatalf("produce to new partition: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if len(resized) != 1 || resized[0].Partitions != 5 {
		t.Fatalf("resized %+v", resized)
	}
}

func TestDescribeConfigsAndCluster(t *testing.T) {
	e := newEnv(t)
	e.createTopic("cfg", 1, map[string]string{"retention.ms": "1234"})
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	req.IncludeSynonyms = true
	req.Resources = []kmsg.DescribeConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "cfg"},
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "cfg", ConfigNames: []string{"retention.ms", "cleanup.policy"}},
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "nope"},
		{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"},
		{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "2"},
	}
	resp := e.p.DescribeConfigs(e.ctx, req)
	rs := resp.Resources
	if rs[0].ErrorCode != 0 || len(rs[0].Configs) != len(config.TopicNames()) {
		t.Fatalf("all topic configs: %d", len(rs[0].Configs))
	}
	if len(rs[1].Configs) != 2 || rs[1].Configs[0].Name != "cleanup.policy" || !rs[1].Configs[0].IsDefault ||
		*rs[1].Configs[1].Value != "1234" || rs[1].Configs[1].Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("named configs %+v", rs[1].Configs)
	}
	if rs[2].ErrorCode != kerr.UnknownTopicOrPartition.Code || rs[3].ErrorCode != 0 || len(rs[3].Configs) == 0 || rs[4].ErrorCode == 0 {
		t.Fatalf("errors: %d %d %d", rs[2].ErrorCode, rs[3].ErrorCode, rs[4].ErrorCode)
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.Version = 1
	dc.EndpointType = 1
	cr := e.p.DescribeCluster(e.ctx, dc)
	if cr.ErrorCode != 0 || cr.ClusterID != "muster-test" || cr.ControllerID != 1 || len(cr.Brokers) != 1 {
		t.Fatalf("describe cluster %+v", cr)
	}
}

func TestCreateTopicConcurrentWithProduceAutoCreate(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrMetadataRequest()
			req.Version, req.AllowAutoTopicCreation = 12, true
			req.Topics = []kmsg.MetadataRequestTopic{{Topic: strp("race")}}
			if resp := e.p.Metadata(e.ctx, req); resp.Topics[0].ErrorCode != 0 {
				t.Errorf("metadata: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
			}
		}()
	}
	wg.Wait()
	if len(e.p.Topics()) != 1 {
		t.Fatalf("topics %+v", e.p.Topics())
	}
}

// TestCreateTopicsCollidingNames: a topic whose name differs from an existing one only by '.'
// against '_' is refused with INVALID_TOPIC_EXCEPTION naming the existing topic (their metric
// names would be the same: ReplicationControlManager.validateNewTopicNames), through CreateTopics
// (also validate-only) and auto-creation; the exact name stays TOPIC_ALREADY_EXISTS, and once
// the existing topic is deleted the other name may be created.
func TestCreateTopicsCollidingNames(t *testing.T) {
	e := newEnv(t)
	e.createTopic("orders.v1", 1, nil)
	resp := e.p.CreateTopics(e.ctx, createReq(7, ct("orders_v1", 1, 1), ct("orders.v1", 1, 1), ct("orders-v1", 1, 1)))
	want := []*kerr.Error{kerr.InvalidTopicException, kerr.TopicAlreadyExists, nil}
	for i, st := range resp.Topics {
		if got := kerr.ErrorForCode(st.ErrorCode); got != error(want[i]) && !(want[i] == nil && got == nil) {
			t.Errorf("%s: got %v, want %v", st.Topic, got, want[i])
		}
	}
	if m := resp.Topics[0].ErrorMessage; m == nil || !strings.Contains(*m, "collides with existing topic: orders.v1") {
		t.Errorf("message %v", m)
	}
	vreq := createReq(7, ct("orders_v1", 1, 1))
	vreq.ValidateOnly = true
	if st := e.p.CreateTopics(e.ctx, vreq).Topics[0]; st.ErrorCode != kerr.InvalidTopicException.Code {
		t.Errorf("validate-only: %v", kerr.ErrorForCode(st.ErrorCode))
	}
	if sp := e.produce("orders_v1", 0, makeBatch(batchOpts{n: 1})); sp.ErrorCode != kerr.InvalidTopicException.Code {
		t.Errorf("auto-create: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if _, ok := e.p.Topic("orders_v1"); ok {
		t.Fatal("colliding topic created")
	}
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{"orders.v1"}
	if r := e.p.DeleteTopics(e.ctx, del); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	if st := e.p.CreateTopics(e.ctx, createReq(7, ct("orders_v1", 1, 1))).Topics[0]; st.ErrorCode != 0 {
		t.Fatalf("after delete: %v", kerr.ErrorForCode(st.ErrorCode))
	}
}

// TestDeleteTopicsDuplicates: a topic name or ID listed twice in one DeleteTopics request
// deletes nothing and is answered INVALID_REQUEST (Kafka's ControllerApis.deleteTopics);
// the other entries are handled as usual.
func TestDeleteTopicsDuplicates(t *testing.T) {
	e := newEnv(t)
	e.createTopic("a", 1, nil)
	b := e.createTopic("b", 1, nil)
	e.createTopic("c", 1, nil)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{
		{Topic: strp("a")}, {TopicID: b.ID}, {Topic: strp("c")}, {Topic: strp("a")}, {TopicID: b.ID},
	}
	resp := e.p.DeleteTopics(e.ctx, req)
	if len(resp.Topics) != 5 {
		t.Fatalf("%d answers, want 5: %+v", len(resp.Topics), resp.Topics)
	}
	for _, i := range []int{0, 3} {
		if r := resp.Topics[i]; r.ErrorCode != kerr.InvalidRequest.Code || r.Topic == nil || *r.Topic != "a" {
			t.Errorf("duplicate name: %+v", r)
		}
	}
	for _, i := range []int{1, 4} {
		if r := resp.Topics[i]; r.ErrorCode != kerr.InvalidRequest.Code || r.TopicID != b.ID {
			t.Errorf("duplicate id: %+v", r)
		}
	}
	if r := resp.Topics[2]; r.ErrorCode != 0 {
		t.Errorf("c: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	for _, n := range []string{"a", "b"} {
		if _, ok := e.p.Topic(n); !ok {
			t.Errorf("topic %s deleted", n)
		}
	}
	v5 := kmsg.NewPtrDeleteTopicsRequest()
	v5.Version = 5
	v5.TopicNames = []string{"a", "a"}
	if r := e.p.DeleteTopics(e.ctx, v5); len(r.Topics) != 2 || r.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("v5 duplicate: %+v", r.Topics)
	}
	if _, ok := e.p.Topic("a"); !ok {
		t.Error("topic a deleted by a duplicate v5 entry")
	}
}
