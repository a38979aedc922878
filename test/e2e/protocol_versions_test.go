package e2e

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
	"github.com/muster-io/muster/internal/wire"
)

func rawDo[R kmsg.Response](t *testing.T, rc *testutil.RawConn, req kmsg.Request) R {
	t.Helper()
	resp, err := rc.Do(req)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp.(R)
}

func dialRaw(t *testing.T, addr string) *testutil.RawConn {
	t.Helper()
	rc, err := testutil.DialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestApiVersionsMatchKmsg: the versions a real muster advertises over ApiVersions are, for
// every API key kmsg knows, exactly kmsg's newest version, unless wire.Withheld writes the gap
// down with its reason (a kmsg upgrade that brings a new version or API fails here until it is
// served or written down). Minimums follow Kafka 4.3 (KIP-896 with JoinGroup v0–v1 restored).
func TestApiVersionsMatchKmsg(t *testing.T) {
	b := testutil.Start(t)
	rc := dialRaw(t, b.Addr())
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 5
	req.ClientSoftwareName, req.ClientSoftwareVersion = "muster-test", "1.0"
	resp := rawDo[*kmsg.ApiVersionsResponse](t, rc, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions v5: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	served := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range resp.ApiKeys {
		served[k.ApiKey] = k
	}
	for key := int16(0); key < 1000; key++ {
		r := kmsg.RequestForKey(key)
		if r == nil {
			continue
		}
		name := kmsg.NameForKey(key)
		k, ok := served[key]
		gap, written := wire.WithheldGap(key)
		switch {
		case !ok && !written:
			t.Errorf("%s (%d): kmsg encodes v0–v%d, muster does not serve it and wire.Withheld does not say why", name, key, r.MaxVersion())
		case !ok && gap.Max != -1:
			t.Errorf("%s (%d): not served, but wire.Withheld says v%d is", name, key, gap.Max)
		case ok && written && gap.Max == -1:
			t.Errorf("%s (%d): served up to v%d, but wire.Withheld says it is not served", name, key, k.MaxVersion)
		case ok && !written && k.MaxVersion != r.MaxVersion():
			t.Errorf("%s (%d): muster serves up to v%d, kmsg encodes v%d, and wire.Withheld does not say why", name, key, k.MaxVersion, r.MaxVersion())
		case ok && written && k.MaxVersion != gap.Max:
			t.Errorf("%s (%d): muster serves up to v%d, wire.Withheld says v%d (kmsg v%d)", name, key, k.MaxVersion, gap.Max, r.MaxVersion())
		case ok && k.MaxVersion > r.MaxVersion():
			t.Errorf("%s (%d): muster advertises v%d beyond kmsg's v%d", name, key, k.MaxVersion, r.MaxVersion())
		}
		if written && gap.Reason == "" {
			t.Errorf("%s (%d): withheld without a reason", name, key)
		}
	}
	// Kafka 4.3's minimums: KIP-896 removed the oldest versions; JoinGroup v0–v1 came back
	// (KAFKA-19444).
	wantMin := map[int16]int16{0: 3, 1: 4, 2: 1, 3: 0, 8: 2, 9: 1, 11: 0, 19: 2, 20: 1, 23: 2, 32: 1}
	for key, min := range wantMin {
		if k := served[key]; k.MinVersion != min {
			t.Errorf("%s: min version %d, Kafka 4.3 serves from v%d", kmsg.NameForKey(key), k.MinVersion, min)
		}
	}
}

// TestApiVersionsMisroutedConnection: ApiVersions v5 (KIP-1242) carries the cluster and node
// the client believes it reached; another cluster or node answers REBOOTSTRAP_REQUIRED, only one
// of the two answers INVALID_REQUEST, and v3+ software names outside Kafka's pattern answer
// INVALID_REQUEST (KIP-511).
func TestApiVersionsMisroutedConnection(t *testing.T) {
	b := testutil.Start(t)
	rc := dialRaw(t, b.Addr())
	mr := kmsg.NewPtrMetadataRequest()
	mr.Version = 12
	md := rawDo[*kmsg.MetadataResponse](t, rc, mr)
	cluster, node := *md.ClusterID, md.Brokers[0].NodeID
	other := "another-cluster"
	cases := []struct {
		name      string
		clusterID *string
		nodeID    int32
		software  string
		want      *kerr.Error
	}{
		{"bootstrap (neither set)", nil, -1, "muster-test", nil},
		{"this broker", &cluster, node, "muster-test", nil},
		{"another node", &cluster, node + 1, "muster-test", kerr.RebootstrapRequired},
		{"another cluster", &other, node, "muster-test", kerr.RebootstrapRequired},
		{"cluster without node", &cluster, -1, "muster-test", kerr.InvalidRequest},
		{"node without cluster", nil, node, "muster-test", kerr.InvalidRequest},
		{"bad software name", nil, -1, "-bad name", kerr.InvalidRequest},
	}
	for _, c := range cases {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 5
		req.ClientSoftwareName, req.ClientSoftwareVersion = c.software, "1.0"
		req.ClusterID, req.NodeID = c.clusterID, c.nodeID
		resp := rawDo[*kmsg.ApiVersionsResponse](t, rc, req)
		if got := kerr.ErrorForCode(resp.ErrorCode); got != c.want && !(c.want == nil && got == nil) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if c.want == nil && len(resp.ApiKeys) == 0 {
			t.Errorf("%s: no API keys", c.name)
		}
	}
}

// TestListOffsetsVersionGatedTimestamps: a special ListOffsets timestamp is defined only from
// the version that introduced it (-3 MAX_TIMESTAMP v7, -4 EARLIEST_LOCAL v8, -5 LATEST_TIERED
// v9, -6 EARLIEST_PENDING_UPLOAD v11) and any other negative value never: Kafka's
// ReplicaManager.isListOffsetsTimestampUnsupported answers UNSUPPORTED_VERSION for the
// partition, also for a topic that does not exist. Without tiered storage -5 and -6 answer
// offset -1.
func TestListOffsetsVersionGatedTimestamps(t *testing.T) {
	b := testutil.Start(t)
	rc := dialRaw(t, b.Addr())
	cr := kmsg.NewPtrCreateTopicsRequest()
	cr.Version = 7
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "gated", 1, 1
	cr.Topics = append(cr.Topics, ct)
	if r := rawDo[*kmsg.CreateTopicsResponse](t, rc, cr); r.Topics[0].ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	list := func(version int16, topic string, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = version
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return rawDo[*kmsg.ListOffsetsResponse](t, rc, req).Topics[0].Partitions[0]
	}
	cases := []struct {
		ts      int64
		version int16
		want    *kerr.Error
	}{
		{-1, 1, nil}, {-2, 1, nil},
		{-3, 1, kerr.UnsupportedVersion}, {-3, 6, kerr.UnsupportedVersion}, {-3, 7, nil},
		{-4, 7, kerr.UnsupportedVersion}, {-4, 8, nil},
		{-5, 8, kerr.UnsupportedVersion}, {-5, 9, nil},
		{-6, 9, kerr.UnsupportedVersion}, {-6, 10, kerr.UnsupportedVersion}, {-6, 11, nil},
		{-7, 11, kerr.UnsupportedVersion}, {-42, 5, kerr.UnsupportedVersion},
	}
	for _, c := range cases {
		sp := list(c.version, "gated", c.ts)
		if got := kerr.ErrorForCode(sp.ErrorCode); got != c.want && !(c.want == nil && got == nil) {
			t.Errorf("timestamp %d at v%d: %v, want %v", c.ts, c.version, got, c.want)
		}
		if c.want == nil && (c.ts == -5 || c.ts == -6) && (sp.Offset != -1 || sp.Timestamp != -1) {
			t.Errorf("timestamp %d at v%d: offset %d timestamp %d, want -1 -1 (no tiered storage)", c.ts, c.version, sp.Offset, sp.Timestamp)
		}
	}
	if sp := list(6, "no-such-topic", -3); sp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("-3 at v6 on a missing topic: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(sp.ErrorCode))
	}
}

// TestVersionGatedRequestFields: values a request version carries but does not define get
// Kafka's answer. Metadata v10–v11 have topic-id and nullable-name fields that only v12 serves
// (INVALID_REQUEST for the whole request, KafkaApis.handleTopicMetadataRequest); v12 serves
// them; v13 reports the top-level error code (KIP-1102). FindCoordinator share keys need v6 and
// a share coordinator, unknown key types are invalid (INVALID_REQUEST, no node). DescribeCluster
// v2 (KIP-1073) lists the broker, never fenced. JoinGroup v0–v1 are served (KAFKA-19444).
func TestVersionGatedRequestFields(t *testing.T) {
	b := testutil.Start(t)
	rc := dialRaw(t, b.Addr())
	cr := kmsg.NewPtrCreateTopicsRequest()
	cr.Version = 7
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "ids", 2, 1
	cr.Topics = append(cr.Topics, ct)
	created := rawDo[*kmsg.CreateTopicsResponse](t, rc, cr)
	id := created.Topics[0].TopicID

	for _, v := range []int16{10, 11} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}}
		resp := rawDo[*kmsg.MetadataResponse](t, rc, req)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("Metadata v%d by topic id: %+v, want INVALID_REQUEST", v, resp.Topics)
		}
	}
	for _, v := range []int16{12, 13} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}, {TopicID: [16]byte{9}}}
		resp := rawDo[*kmsg.MetadataResponse](t, rc, req)
		if len(resp.Topics) != 2 || resp.Topics[0].ErrorCode != 0 || *resp.Topics[0].Topic != "ids" ||
			len(resp.Topics[0].Partitions) != 2 || resp.Topics[1].ErrorCode != kerr.UnknownTopicID.Code || resp.ErrorCode != 0 {
			t.Errorf("Metadata v%d by topic id: %+v", v, resp)
		}
	}
	bad := kmsg.NewPtrMetadataRequest()
	bad.Version = 13
	bad.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("ids")}}
	if resp := rawDo[*kmsg.MetadataResponse](t, rc, bad); resp.ErrorCode != 0 || resp.Topics[0].ErrorCode != 0 {
		t.Errorf("Metadata v13: %+v", resp)
	}

	for _, c := range []struct {
		version int16
		typ     int8
		want    *kerr.Error
	}{
		{3, 0, nil}, {6, 0, nil}, {5, 2, kerr.InvalidRequest}, {6, 2, kerr.InvalidRequest}, {6, 7, kerr.InvalidRequest}, {3, 7, kerr.InvalidRequest},
	} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType = c.version, c.typ
		req.CoordinatorKey, req.CoordinatorKeys = "g", []string{"g"}
		resp := rawDo[*kmsg.FindCoordinatorResponse](t, rc, req)
		code, node := resp.ErrorCode, resp.NodeID
		if c.version >= 4 {
			code, node = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
		}
		if got := kerr.ErrorForCode(code); got != c.want && !(c.want == nil && got == nil) {
			t.Errorf("FindCoordinator v%d key type %d: %v, want %v", c.version, c.typ, got, c.want)
		}
		if c.want != nil && node != -1 {
			t.Errorf("FindCoordinator v%d key type %d: error with node %d, want -1", c.version, c.typ, node)
		}
	}

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.Version, dc.IncludeFencedBrokers = 2, true
	if resp := rawDo[*kmsg.DescribeClusterResponse](t, rc, dc); resp.ErrorCode != 0 || len(resp.Brokers) != 1 || resp.Brokers[0].IsFenced {
		t.Errorf("DescribeCluster v2: %+v", resp)
	}

	for _, v := range []int16{0, 1} {
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Version = v
		jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = fmt.Sprintf("old-join-v%d", v), 10_000, 10_000, "consumer"
		jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
		resp := rawDo[*kmsg.JoinGroupResponse](t, rc, jg)
		if resp.ErrorCode != 0 || resp.MemberID == "" || resp.Generation < 1 {
			t.Errorf("JoinGroup v%d: %v %+v", v, kerr.ErrorForCode(resp.ErrorCode), resp)
		}
	}
}
