package groups

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/testutil"
)

// These helpers drive a real in-process muster over loopback with raw kmsg requests. Names are
// prefixed "ot" (offsets tests) to stay clear of other tests in this package.

func otCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func otClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// otSend sends req at exactly version to the broker (no client-side sharding or retries) and
// returns the response, failing the test if the broker answered another version.
func otSend[R kmsg.Response](t *testing.T, addr string, version int16, req kmsg.Request) R {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(req.Key(), version)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := cl.SeedBrokers()[0].Request(otCtx(t), req)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), version, err)
	}
	if resp.GetVersion() != version {
		t.Fatalf("%s sent at v%d, want v%d", kmsg.NameForKey(req.Key()), resp.GetVersion(), version)
	}
	return resp.(R)
}

// otTopics creates topics (name → partitions).
func otTopics(t *testing.T, addr string, topics map[string]int32) {
	t.Helper()
	adm := kadm.NewClient(otClient(t, addr))
	for name, n := range topics {
		if _, err := adm.CreateTopic(otCtx(t), n, 1, nil, name); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
}

// otOffset is one committed offset.
type otOffset struct {
	Offset   int64
	Epoch    int32
	Metadata string
}

// otCommitAt commits offsets with OffsetCommit at version (v2–v4 retention given by retentionMs,
// -1 = broker default) and returns the per-partition error codes "topic/p" → code.
func otCommitAt(t *testing.T, addr string, version int16, group string, gen int32, member string, retentionMs int64, offs map[string]map[int32]otOffset) map[string]int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID, req.RetentionTimeMillis = group, gen, member, retentionMs
	for _, topic := range otSortedKeys(offs) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for _, p := range otSortedParts(offs[topic]) {
			o := offs[topic][p]
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, o.Offset, o.Epoch
			md := o.Metadata
			rp.Metadata = &md
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp := otSend[*kmsg.OffsetCommitResponse](t, addr, version, req)
	out := map[string]int16{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			out[fmt.Sprintf("%s/%d", rt.Topic, rp.Partition)] = rp.ErrorCode
		}
	}
	return out
}

// otCommit commits as an admin (generation -1, no member) with OffsetCommit v8 and fails on any
// partition error.
func otCommit(t *testing.T, addr, group string, offs map[string]map[int32]otOffset) {
	t.Helper()
	otCommitMember(t, addr, group, -1, "", offs)
}

func otCommitMember(t *testing.T, addr, group string, gen int32, member string, offs map[string]map[int32]otOffset) {
	t.Helper()
	for tp, code := range otCommitAt(t, addr, 8, group, gen, member, -1, offs) {
		if code != 0 {
			t.Fatalf("commit %s %s: error %d", group, tp, code)
		}
	}
}

// otFetchAll reads every committed offset of group with OffsetFetch v8 (Topics null) as
// "topic/p" → offset.
func otFetchAll(t *testing.T, addr, group string) map[string]otOffset {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = group
	req.Groups = append(req.Groups, g)
	resp := otSend[*kmsg.OffsetFetchResponse](t, addr, 8, req)
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("fetch-all %s: %+v", group, resp.Groups)
	}
	return otFlattenFetch(resp.Groups[0].Topics)
}

func otFlattenFetch(ts []kmsg.OffsetFetchResponseGroupTopic) map[string]otOffset {
	out := map[string]otOffset{}
	for _, rt := range ts {
		for _, rp := range rt.Partitions {
			md := "<nil>"
			if rp.Metadata != nil {
				md = *rp.Metadata
			}
			out[fmt.Sprintf("%s/%d", rt.Topic, rp.Partition)] = otOffset{rp.Offset, rp.LeaderEpoch, md}
		}
	}
	return out
}

// otMember is a classic member joined with raw JoinGroup/SyncGroup.
type otMember struct {
	Group, ID string
	Gen       int32
}

// otJoin makes a one-member classic group Stable: JoinGroup v5 (MEMBER_ID_REQUIRED, then rejoin)
// with protocol type protoType and a ConsumerProtocol subscription to topics, then SyncGroup.
func otJoin(t *testing.T, addr, group, protoType string, topics ...string) otMember {
	t.Helper()
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = topics
	join := func(member string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, member, protoType
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
		return otSend[*kmsg.JoinGroupResponse](t, addr, 5, req)
	}
	r := join("")
	if r.ErrorCode == 79 { // MEMBER_ID_REQUIRED
		r = join(r.MemberID)
	}
	if r.ErrorCode != 0 {
		t.Fatalf("join %s: error %d", group, r.ErrorCode)
	}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Group, sreq.Generation, sreq.MemberID = group, r.Generation, r.MemberID
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = r.MemberID, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	sreq.GroupAssignment = append(sreq.GroupAssignment, a)
	sr := otSend[*kmsg.SyncGroupResponse](t, addr, 3, sreq)
	if sr.ErrorCode != 0 {
		t.Fatalf("sync %s: error %d", group, sr.ErrorCode)
	}
	return otMember{Group: group, ID: r.MemberID, Gen: r.Generation}
}

// leave makes the member leave (the group becomes Empty).
func (m otMember) leave(t *testing.T, addr string) {
	t.Helper()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.Group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = m.ID
	req.Members = append(req.Members, lm)
	if r := otSend[*kmsg.LeaveGroupResponse](t, addr, 3, req); r.ErrorCode != 0 {
		t.Fatalf("leave %s: error %d", m.Group, r.ErrorCode)
	}
}

// otListed lists groups with ListGroups v5 as id → "type/protocolType/state".
func otListed(t *testing.T, addr string) map[string]string {
	t.Helper()
	resp := otSend[*kmsg.ListGroupsResponse](t, addr, 5, kmsg.NewPtrListGroupsRequest())
	out := map[string]string{}
	for _, g := range resp.Groups {
		out[g.Group] = g.GroupType + "/" + g.ProtocolType + "/" + g.GroupState
	}
	return out
}

// otMetrics scrapes /metrics as "name{labels}" → value (only muster_ series).
func otMetrics(t *testing.T, b *testutil.Broker) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "muster_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// otEventually polls cond until it holds (or fails after 10 s); tests never assert timings.
func otEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func otSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func otSortedParts[V any](m map[int32]V) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func benchClient(b *testing.B, addr string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

func benchCreate(b *testing.B, cl *kgo.Client, topic string, partitions int32) (kadm.CreateTopicResponse, error) {
	return kadm.NewClient(cl).CreateTopic(b.Context(), partitions, 1, nil, topic)
}

// BenchmarkOffsetCommitFetchLoopback measures one OffsetCommit of 50 partitions followed by one
// OffsetFetch (all offsets) against an in-process broker over loopback; each commit is durable
// (fsync) before it is answered.
func BenchmarkOffsetCommitFetchLoopback(b *testing.B) {
	br := testutil.Start(b)
	addr := br.Addr()
	cl := benchClient(b, addr)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "bench", -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	for p := int32(0); p < 50; p++ {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	commit.Topics = append(commit.Topics, rt)
	if _, err := benchCreate(b, cl, "t", 50); err != nil {
		b.Fatal(err)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fg := kmsg.NewOffsetFetchRequestGroup()
	fg.Group = "bench"
	fetch.Groups = append(fetch.Groups, fg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range commit.Topics[0].Partitions {
			commit.Topics[0].Partitions[j].Offset = int64(i)
		}
		cr, err := commit.RequestWith(b.Context(), cl)
		if err != nil || cr.Topics[0].Partitions[0].ErrorCode != 0 {
			b.Fatalf("commit: %v", err)
		}
		fr, err := fetch.RequestWith(b.Context(), cl)
		if err != nil || len(fr.Groups[0].Topics[0].Partitions) != 50 {
			b.Fatalf("fetch: %v", err)
		}
	}
}
