package security

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authedRaw is a raw connection authenticated with PLAIN as user.
func authedRaw(t testing.TB, sb *secBroker, user string) *rawConn {
	t.Helper()
	r := dialRaw(t, sb.SASLPlaintext, nil)
	r.mustDo(handshake(1, "PLAIN"))
	if resp := r.mustDo(authenticate(2, []byte("\x00"+user+"\x00"+user+"-secret"))).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
		t.Fatalf("auth %s: %v", user, kerr.ErrorForCode(resp.ErrorCode))
	}
	return r
}

func code(c int16) error { return kerr.ErrorForCode(c) }

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	if want == nil && got != 0 || want != nil && got != want.Code {
		t.Fatalf("%s: got %v, want %v", what, code(got), want)
	}
}

func (sb *secBroker) topicExists(t *testing.T, name string) bool {
	_, ok := sb.Plane().Topic(name)
	return ok
}

// TestAuthorizeDataPlane: for each data-plane API, a principal with exactly the ACL Kafka's
// table names succeeds and one without gets Kafka's error, the same for a topic that exists and
// one that does not (existence is hidden).
func TestAuthorizeDataPlane(t *testing.T) {
	sb := startSecure(t)
	sb.createTopic(t, "exists", 2)
	grant := func(ops ...kadm.ACLOperation) func(topics ...string) {
		return func(topics ...string) {
			sb.allow(t, kadm.NewACLs().Allow("User:alice").Topics(topics...).Operations(ops...))
		}
	}
	revokeAll := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := sb.admin(t).DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().AnyResource().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Produce", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		produce := func(topic string) kmsg.ProduceResponseTopicPartition {
			req := kmsg.NewPtrProduceRequest()
			req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = []byte{1, 2, 3}
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		}
		for _, topic := range []string{"exists", "missing"} {
			p := produce(topic)
			wantCode(t, "produce "+topic, p.ErrorCode, kerr.TopicAuthorizationFailed)
			if p.BaseOffset != -1 || p.LogStartOffset != -1 {
				t.Fatalf("denied partition %+v", p)
			}
		}
		grant(kadm.OpWrite)("exists", "missing")
		wantCode(t, "produce missing with WRITE but no CREATE", produce("missing").ErrorCode, kerr.UnknownTopicOrPartition)
		if sb.topicExists(t, "missing") {
			t.Fatal("produce without CREATE auto-created the topic")
		}
		cl := client(t, sb.SASLPlaintext, scram256("alice", "alice-secret"), nil, kgo.DisableIdempotentWrite())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "exists", Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("produce with WRITE: %v", err)
		}
	})

	t.Run("Fetch ListOffsets OffsetForLeaderEpoch", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		fetch := func(topic string) kmsg.FetchResponseTopicPartition {
			req := kmsg.NewPtrFetchRequest()
			req.Version, req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = 12, -1, 10, 1<<20
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 1 << 20
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.FetchResponse).Topics[0].Partitions[0]
		}
		listOffsets := func(topic string) kmsg.ListOffsetsResponseTopicPartition {
			req := kmsg.NewPtrListOffsetsRequest()
			req.Version = 7
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Timestamp = -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		}
		ofle := func(topic string) int16 {
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.Version, req.ReplicaID = 4, -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
		}
		for _, topic := range []string{"exists", "missing"} {
			f := fetch(topic)
			wantCode(t, "fetch "+topic, f.ErrorCode, kerr.TopicAuthorizationFailed)
			if f.HighWatermark != -1 || len(f.RecordBatches) != 0 {
				t.Fatalf("denied fetch leaks %+v", f)
			}
			lo := listOffsets(topic)
			wantCode(t, "list offsets "+topic, lo.ErrorCode, kerr.TopicAuthorizationFailed)
			if lo.Offset != -1 {
				t.Fatalf("denied list offsets leaks %d", lo.Offset)
			}
			wantCode(t, "offset for leader epoch "+topic, ofle(topic), kerr.TopicAuthorizationFailed)
		}
		grant(kadm.OpDescribe)("exists", "missing")
		wantCode(t, "fetch with DESCRIBE only", fetch("exists").ErrorCode, kerr.TopicAuthorizationFailed)
		wantCode(t, "list offsets with DESCRIBE", listOffsets("exists").ErrorCode, nil)
		wantCode(t, "list offsets of a missing topic with DESCRIBE", listOffsets("missing").ErrorCode, kerr.UnknownTopicOrPartition)
		wantCode(t, "offset for leader epoch with DESCRIBE", ofle("exists"), nil)
		grant(kadm.OpRead)("exists")
		wantCode(t, "fetch with READ", fetch("exists").ErrorCode, nil)
	})

	t.Run("Metadata", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		md := func(allowCreate bool, topics ...string) *kmsg.MetadataResponse {
			req := kmsg.NewPtrMetadataRequest()
			req.Version, req.AllowAutoTopicCreation, req.IncludeTopicAuthorizedOperations = 12, allowCreate, true
			if topics != nil {
				req.Topics = []kmsg.MetadataRequestTopic{}
			}
			for _, tp := range topics {
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = kmsg.StringPtr(tp)
				req.Topics = append(req.Topics, rt)
			}
			return r.mustDo(req).(*kmsg.MetadataResponse)
		}
		// By topic ID: an undescribable topic answers its ID with a null name.
		ti, _ := sb.Plane().Topic("exists")
		byID := kmsg.NewPtrMetadataRequest()
		byID.Version = 12
		idt := kmsg.NewMetadataRequestTopic()
		idt.TopicID = ti.ID
		byID.Topics = append(byID.Topics, idt)
		got := r.mustDo(byID).(*kmsg.MetadataResponse).Topics[0]
		if got.ErrorCode != kerr.TopicAuthorizationFailed.Code || got.Topic != nil || got.TopicID != ti.ID {
			t.Fatalf("metadata by ID without DESCRIBE: %v %v %x", code(got.ErrorCode), got.Topic, got.TopicID)
		}
		resp := md(true, "exists", "missing")
		for _, mt := range resp.Topics {
			wantCode(t, "metadata "+*mt.Topic, mt.ErrorCode, kerr.TopicAuthorizationFailed)
			if len(mt.Partitions) != 0 || mt.TopicID != [16]byte{} {
				t.Fatalf("denied metadata leaks %+v", mt)
			}
		}
		if sb.topicExists(t, "missing") {
			t.Fatal("auto-created without ACLs")
		}
		if all := md(false); len(all.Topics) != 0 {
			t.Fatalf("all-topics metadata lists %d topics without DESCRIBE", len(all.Topics))
		}
		if empty := md(false, []string{}...); len(empty.Brokers) != 1 || empty.ClusterID == nil {
			t.Fatal("an empty topic list must answer brokers and cluster id")
		}
		grant(kadm.OpRead)("exists")
		grant(kadm.OpDescribe)("autocreate")
		resp = md(true, "exists", "autocreate")
		wantCode(t, "metadata exists with READ", resp.Topics[0].ErrorCode, nil)
		if resp.Topics[0].AuthorizedOperations != 264 {
			t.Fatalf("topic authorized operations %d, want 264 (READ+DESCRIBE)", resp.Topics[0].AuthorizedOperations)
		}
		wantCode(t, "auto-create with DESCRIBE but no CREATE", resp.Topics[1].ErrorCode, kerr.TopicAuthorizationFailed)
		if sb.topicExists(t, "autocreate") {
			t.Fatal("auto-created without CREATE")
		}
		grant(kadm.OpCreate)("autocreate")
		resp = md(true, "autocreate")
		if resp.Topics[0].ErrorCode != 0 && resp.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code {
			t.Fatalf("auto-create with CREATE: %v", code(resp.Topics[0].ErrorCode))
		}
		if !sb.topicExists(t, "autocreate") {
			t.Fatal("not auto-created with CREATE")
		}
		if all := md(false); len(all.Topics) != 2 {
			t.Fatalf("all-topics metadata lists %d topics, want the 2 alice may describe", len(all.Topics))
		}
	})

	t.Run("CreateTopics DeleteTopics CreatePartitions DeleteRecords", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		create := func(name string) kmsg.CreateTopicsResponseTopic {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.Version, req.TimeoutMillis = 7, 5000
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.CreateTopicsResponse).Topics[0]
		}
		del := func(name string) int16 {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.Version, req.TimeoutMillis = 6, 5000
			rt := kmsg.NewDeleteTopicsRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode
		}
		grow := func(name string) int16 {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.Version, req.TimeoutMillis = 3, 5000
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = name, 3
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
		}
		delRecords := func(name string) int16 {
			req := kmsg.NewPtrDeleteRecordsRequest()
			req.Version, req.TimeoutMillis = 2, 5000
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = name
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Offset = 0
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return r.mustDo(req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode
		}
		for _, topic := range []string{"exists", "brand-new"} {
			ct := create(topic)
			wantCode(t, "create "+topic, ct.ErrorCode, kerr.TopicAuthorizationFailed)
			if ct.ErrorMessage == nil || *ct.ErrorMessage != "Authorization failed." {
				t.Fatalf("create message %v", ct.ErrorMessage)
			}
			wantCode(t, "delete "+topic, del(topic), kerr.TopicAuthorizationFailed)
			wantCode(t, "create partitions "+topic, grow(topic), kerr.TopicAuthorizationFailed)
			wantCode(t, "delete records "+topic, delRecords(topic), kerr.TopicAuthorizationFailed)
		}
		grant(kadm.OpCreate)("brand-new")
		ct := create("brand-new")
		wantCode(t, "create with CREATE", ct.ErrorCode, nil)
		wantCode(t, "configs of a topic created without DESCRIBE_CONFIGS", ct.ConfigErrorCode, kerr.TopicAuthorizationFailed)
		if ct.NumPartitions != -1 || ct.Configs != nil {
			t.Fatalf("created topic leaks its configuration: %+v", ct)
		}
		grant(kadm.OpDescribe)("gone")
		wantCode(t, "delete a missing topic with DESCRIBE", del("gone"), kerr.UnknownTopicOrPartition)
		grant(kadm.OpDescribe)("brand-new")
		wantCode(t, "delete with DESCRIBE but no DELETE", del("brand-new"), kerr.TopicAuthorizationFailed)
		grant(kadm.OpAlter)("brand-new")
		wantCode(t, "create partitions with ALTER", grow("brand-new"), nil)
		grant(kadm.OpDelete)("brand-new")
		wantCode(t, "delete records with DELETE", delRecords("brand-new"), nil)
		wantCode(t, "delete with DESCRIBE and DELETE", del("brand-new"), nil)
	})

	t.Run("DescribeConfigs", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		describe := func(typ kmsg.ConfigResourceType, name string) int16 {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.Version = 4
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = typ, name
			req.Resources = append(req.Resources, rr)
			return r.mustDo(req).(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
		}
		alter := func(typ kmsg.ConfigResourceType, name, key string) int16 {
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			req.Version = 1
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = typ, name
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op, c.Value = key, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("3600000")
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			return r.mustDo(req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
		}
		wantCode(t, "alter topic", alter(kmsg.ConfigResourceTypeTopic, "exists", "retention.ms"), kerr.TopicAuthorizationFailed)
		wantCode(t, "alter missing topic", alter(kmsg.ConfigResourceTypeTopic, "missing", "retention.ms"), kerr.TopicAuthorizationFailed)
		wantCode(t, "alter broker", alter(kmsg.ConfigResourceTypeBroker, "", "log.retention.ms"), kerr.ClusterAuthorizationFailed)
		wantCode(t, "topic", describe(kmsg.ConfigResourceTypeTopic, "exists"), kerr.TopicAuthorizationFailed)
		wantCode(t, "missing topic", describe(kmsg.ConfigResourceTypeTopic, "missing"), kerr.TopicAuthorizationFailed)
		wantCode(t, "broker", describe(kmsg.ConfigResourceTypeBroker, "0"), kerr.ClusterAuthorizationFailed)
		grant(kadm.OpAlterConfigs)("exists") // ALTER_CONFIGS implies DESCRIBE_CONFIGS
		wantCode(t, "topic with ALTER_CONFIGS", describe(kmsg.ConfigResourceTypeTopic, "exists"), nil)
		wantCode(t, "alter topic with ALTER_CONFIGS", alter(kmsg.ConfigResourceTypeTopic, "exists", "retention.ms"), nil)
		sb.allow(t, kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpDescribeConfigs))
		wantCode(t, "broker with DESCRIBE_CONFIGS", describe(kmsg.ConfigResourceTypeBroker, "0"), nil)
	})

	t.Run("InitProducerId DescribeCluster", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		initPID := func(txn *string) *kmsg.InitProducerIDResponse {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, txn, 60000
			req.ProducerID, req.ProducerEpoch = -1, -1
			return r.mustDo(req).(*kmsg.InitProducerIDResponse)
		}
		resp := initPID(nil)
		wantCode(t, "idempotent without ACLs", resp.ErrorCode, kerr.ClusterAuthorizationFailed)
		if resp.ProducerID != -1 {
			t.Fatalf("denied InitProducerId gave id %d", resp.ProducerID)
		}
		wantCode(t, "transactional without ACLs", initPID(kmsg.StringPtr("tx")).ErrorCode, kerr.TransactionalIDAuthorizationFailed)
		grant(kadm.OpWrite)("any-topic")
		wantCode(t, "idempotent with WRITE on some topic", initPID(nil).ErrorCode, nil)
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.Version, dc.IncludeClusterAuthorizedOperations = 1, true
		dr := r.mustDo(dc).(*kmsg.DescribeClusterResponse)
		if dr.ErrorCode != 0 || dr.ClusterAuthorizedOperations != 0 || len(dr.Brokers) != 1 {
			t.Fatalf("DescribeCluster without ACLs: %+v", dr)
		}
		sb.allow(t, kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpDescribe, kadm.OpAlter))
		if dr = r.mustDo(dc).(*kmsg.DescribeClusterResponse); dr.ClusterAuthorizedOperations != 384 {
			t.Fatalf("cluster authorized operations %d, want 384", dr.ClusterAuthorizedOperations)
		}
	})

	t.Run("ACL and SCRAM APIs", func(t *testing.T) {
		defer revokeAll()
		r := authedRaw(t, sb, "alice")
		da := kmsg.NewPtrDescribeACLsRequest()
		da.Version, da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 3, kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		wantCode(t, "DescribeAcls", r.mustDo(da).(*kmsg.DescribeACLsResponse).ErrorCode, kerr.ClusterAuthorizationFailed)
		ca := kmsg.NewPtrCreateACLsRequest()
		ca.Version = 3
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType, c.Principal, c.Host, c.Operation, c.PermissionType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:alice", "*", kmsg.ACLOperationAll, kmsg.ACLPermissionTypeAllow
		ca.Creations = append(ca.Creations, c)
		wantCode(t, "CreateAcls", r.mustDo(ca).(*kmsg.CreateACLsResponse).Results[0].ErrorCode, kerr.ClusterAuthorizationFailed)
		dl := kmsg.NewPtrDeleteACLsRequest()
		dl.Version = 3
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		dl.Filters = append(dl.Filters, f)
		wantCode(t, "DeleteAcls", r.mustDo(dl).(*kmsg.DeleteACLsResponse).Results[0].ErrorCode, kerr.ClusterAuthorizationFailed)
		ds := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = "bob"
		ds.Users = append(ds.Users, u)
		dsr := r.mustDo(ds).(*kmsg.DescribeUserSCRAMCredentialsResponse)
		wantCode(t, "DescribeUserScramCredentials", dsr.ErrorCode, kerr.ClusterAuthorizationFailed)
		wantCode(t, "DescribeUserScramCredentials per user", dsr.Results[0].ErrorCode, kerr.ClusterAuthorizationFailed)
		as := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = "bob", 1
		as.Deletions = append(as.Deletions, d)
		wantCode(t, "AlterUserScramCredentials", r.mustDo(as).(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode, kerr.ClusterAuthorizationFailed)
		sb.allow(t, kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpDescribe))
		wantCode(t, "DescribeAcls with DESCRIBE", r.mustDo(da).(*kmsg.DescribeACLsResponse).ErrorCode, nil)
		dsr = r.mustDo(ds).(*kmsg.DescribeUserSCRAMCredentialsResponse)
		if dsr.ErrorCode != 0 || len(dsr.Results) != 1 || len(dsr.Results[0].CredentialInfos) != 2 {
			t.Fatalf("describe SCRAM with DESCRIBE: %+v", dsr)
		}
	})
}
