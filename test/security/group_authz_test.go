package security

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Authorization of the group coordinator APIs, end to end against KafkaApis' table: for each
// API a principal with exactly the ACL Kafka names succeeds, one without gets Kafka's error, the
// same for a group (or topic) that exists and one that does not.

// groupEnv is a secure broker with topics t (2 partitions) and u (1), a group "exists" with
// committed offsets on both, and raw PLAIN connections for alice (ACLs granted per test) and the
// super user.
type groupEnv struct {
	t     *testing.T
	sb    *secBroker
	alice *rawConn
	admin *rawConn
}

func startGroupEnv(t *testing.T, extra ...string) *groupEnv {
	sb := startSecure(t, append([]string{"group.streams.initial.rebalance.delay.ms=0",
		"group.streams.topology.description.plugin.class=memory"}, extra...)...)
	sb.createTopic(t, "t", 2)
	sb.createTopic(t, "u", 1)
	e := &groupEnv{t: t, sb: sb, alice: authedRaw(t, sb, "alice"), admin: authedRaw(t, sb, "admin")}
	resp := e.admin.mustDo(commitReq("exists", map[string][]int32{"t": {0, 1}, "u": {0}}, 5)).(*kmsg.OffsetCommitResponse)
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			wantCode(t, "admin commit", p.ErrorCode, nil)
		}
	}
	return e
}

func (e *groupEnv) grant(b *kadm.ACLBuilder) { e.t.Helper(); e.sb.allow(e.t, b) }

// aliceOn builds alice's ACLs on groups.
func aliceOnGroups(ops []kadm.ACLOperation, groups ...string) *kadm.ACLBuilder {
	return kadm.NewACLs().Allow("User:alice").Groups(groups...).Operations(ops...)
}

func aliceOnTopics(ops []kadm.ACLOperation, topics ...string) *kadm.ACLBuilder {
	return kadm.NewACLs().Allow("User:alice").Topics(topics...).Operations(ops...)
}

func ops(o ...kadm.ACLOperation) []kadm.ACLOperation { return o }

// revokeAlice deletes every ACL of User:alice.
func (e *groupEnv) revokeAlice() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.sb.admin(e.t).DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().AnyResource().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny)); err != nil {
		e.t.Fatal(err)
	}
}

func commitReq(group string, parts map[string][]int32, offset int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 9, group, -1
	for _, topic := range sortedKeys(parts) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for _, p := range parts[topic] {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = p, offset
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
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

// partitionCodes flattens a response's partition error codes as "topic:partition=CODE".
func partitionCodes[T any](topics []T, each func(T) (string, []int32, []int16)) string {
	var parts []string
	for _, t := range topics {
		name, ps, codes := each(t)
		for i := range ps {
			parts = append(parts, name+":"+strconv.Itoa(int(ps[i]))+"="+errName(codes[i]))
		}
	}
	return strings.Join(parts, " ")
}

func commitCodes(resp *kmsg.OffsetCommitResponse) string {
	return partitionCodes(resp.Topics, func(t kmsg.OffsetCommitResponseTopic) (string, []int32, []int16) {
		var ps []int32
		var cs []int16
		for _, p := range t.Partitions {
			ps, cs = append(ps, p.Partition), append(cs, p.ErrorCode)
		}
		return t.Topic, ps, cs
	})
}

func errName(c int16) string {
	if c == 0 {
		return "NONE"
	}
	if ke, ok := kerr.ErrorForCode(c).(*kerr.Error); ok {
		return ke.Message
	}
	return strconv.Itoa(int(c))
}

func want(t *testing.T, what, got, expected string) {
	t.Helper()
	if got != expected {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, expected)
	}
}

// TestAuthorizeClassicGroupAPIs: JoinGroup, SyncGroup, Heartbeat and LeaveGroup need READ on
// the group.
func TestAuthorizeClassicGroupAPIs(t *testing.T) {
	e := startGroupEnv(t)
	join := func(group string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 9, group, 45000, 60000, "consumer"
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1, 0, 0, 0, 0, 0, 0}}}
		return e.alice.mustDo(req).(*kmsg.JoinGroupResponse)
	}
	sync := func(group string, typed bool) int16 {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version, req.Group, req.Generation, req.MemberID = 5, group, 1, "m"
		if typed {
			req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
		}
		return e.alice.mustDo(req).(*kmsg.SyncGroupResponse).ErrorCode
	}
	heartbeat := func(group string) int16 {
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group, req.Generation, req.MemberID = 4, group, 1, "m"
		return e.alice.mustDo(req).(*kmsg.HeartbeatResponse).ErrorCode
	}
	leave := func(group string) *kmsg.LeaveGroupResponse {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group = 5, group
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
		return e.alice.mustDo(req).(*kmsg.LeaveGroupResponse)
	}
	for _, g := range []string{"exists", "missing"} {
		j := join(g)
		wantCode(t, "join "+g, j.ErrorCode, kerr.GroupAuthorizationFailed)
		if j.MemberID != "" || j.Generation != -1 || len(j.Members) != 0 {
			t.Fatalf("denied join leaks %+v", j)
		}
		wantCode(t, "sync without protocol type "+g, sync(g, false), kerr.InconsistentGroupProtocol) // checked before the ACL
		wantCode(t, "sync "+g, sync(g, true), kerr.GroupAuthorizationFailed)
		wantCode(t, "heartbeat "+g, heartbeat(g), kerr.GroupAuthorizationFailed)
		l := leave(g)
		wantCode(t, "leave "+g, l.ErrorCode, kerr.GroupAuthorizationFailed)
		if len(l.Members) != 0 {
			t.Fatalf("denied leave answers members %+v", l.Members)
		}
	}
	// DESCRIBE (or DELETE) is not enough: these need READ.
	e.grant(aliceOnGroups(ops(kadm.OpDescribe, kadm.OpDelete), "missing"))
	wantCode(t, "join with DESCRIBE and DELETE", join("missing").ErrorCode, kerr.GroupAuthorizationFailed)
	e.grant(aliceOnGroups(ops(kadm.OpRead), "missing"))
	j := join("missing")
	wantCode(t, "join with READ", j.ErrorCode, kerr.MemberIDRequired)
	wantCode(t, "sync with READ", sync("missing", true), kerr.UnknownMemberID)
	wantCode(t, "heartbeat with READ", heartbeat("missing"), kerr.UnknownMemberID)
	if c := leave("missing").ErrorCode; c == kerr.GroupAuthorizationFailed.Code {
		t.Fatal("leave with READ denied")
	}
}

// TestAuthorizeOffsetAPIs: OffsetCommit (READ group, READ topic), OffsetFetch (DESCRIBE group,
// DESCRIBE topic, fetch-all filtered) and OffsetDelete (DELETE group, READ topic).
func TestAuthorizeOffsetAPIs(t *testing.T) {
	e := startGroupEnv(t)
	all := map[string][]int32{"t": {0, 1}, "u": {0}, "nosuch": {0}}

	t.Run("OffsetCommit", func(t *testing.T) {
		defer e.revokeAlice()
		for _, g := range []string{"exists", "missing"} {
			want(t, "commit to "+g+" without ACLs", commitCodes(e.alice.mustDo(commitReq(g, all, 7)).(*kmsg.OffsetCommitResponse)),
				"nosuch:0=GROUP_AUTHORIZATION_FAILED t:0=GROUP_AUTHORIZATION_FAILED t:1=GROUP_AUTHORIZATION_FAILED u:0=GROUP_AUTHORIZATION_FAILED")
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead), "exists"))
		want(t, "commit with group READ only", commitCodes(e.alice.mustDo(commitReq("exists", all, 7)).(*kmsg.OffsetCommitResponse)),
			"nosuch:0=TOPIC_AUTHORIZATION_FAILED t:0=TOPIC_AUTHORIZATION_FAILED t:1=TOPIC_AUTHORIZATION_FAILED u:0=TOPIC_AUTHORIZATION_FAILED")
		e.grant(aliceOnTopics(ops(kadm.OpDescribe), "u"))
		e.grant(aliceOnTopics(ops(kadm.OpRead), "t"))
		want(t, "commit with READ on t", commitCodes(e.alice.mustDo(commitReq("exists", all, 7)).(*kmsg.OffsetCommitResponse)),
			"nosuch:0=TOPIC_AUTHORIZATION_FAILED t:0=NONE t:1=NONE u:0=TOPIC_AUTHORIZATION_FAILED")
		e.grant(aliceOnTopics(ops(kadm.OpRead), "nosuch"))
		want(t, "commit to a missing topic with READ", commitCodes(e.alice.mustDo(commitReq("exists", all, 8)).(*kmsg.OffsetCommitResponse)),
			"nosuch:0=UNKNOWN_TOPIC_OR_PARTITION t:0=NONE t:1=NONE u:0=TOPIC_AUTHORIZATION_FAILED")
		// Only the authorized topics were committed.
		got := e.fetchAll(e.admin, "exists")
		want(t, "committed offsets", got, "t:0=8 t:1=8 u:0=5")
	})

	t.Run("OffsetFetch", func(t *testing.T) {
		defer e.revokeAlice()
		fetch := func(groups ...string) *kmsg.OffsetFetchResponse {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Version = 9
			for _, g := range groups {
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group, rg.MemberEpoch = g, -1
				rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "u", Partitions: []int32{0}}, {Topic: "t", Partitions: []int32{0, 1}}}
				req.Groups = append(req.Groups, rg)
			}
			return e.alice.mustDo(req).(*kmsg.OffsetFetchResponse)
		}
		r := fetch("exists", "missing")
		for i, g := range []string{"exists", "missing"} {
			wantCode(t, "fetch "+g, r.Groups[i].ErrorCode, kerr.GroupAuthorizationFailed)
			if r.Groups[i].Group != g || len(r.Groups[i].Topics) != 0 {
				t.Fatalf("denied fetch leaks %+v", r.Groups[i])
			}
		}
		v7 := kmsg.NewPtrOffsetFetchRequest()
		v7.Version, v7.Group = 7, "exists"
		wantCode(t, "fetch v7", e.alice.mustDo(v7).(*kmsg.OffsetFetchResponse).ErrorCode, kerr.GroupAuthorizationFailed)
		v1 := kmsg.NewPtrOffsetFetchRequest()
		v1.Version, v1.Group, v1.Topics = 1, "exists", []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		if r := e.alice.mustDo(v1).(*kmsg.OffsetFetchResponse); len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
			t.Fatalf("fetch v1 of a denied group: %+v", r.Topics)
		}

		e.grant(aliceOnGroups(ops(kadm.OpDescribe), "exists"))
		e.grant(aliceOnTopics(ops(kadm.OpDescribe), "t"))
		g := fetch("exists").Groups[0]
		wantCode(t, "fetch with DESCRIBE", g.ErrorCode, nil)
		var got []string
		for _, rt := range g.Topics {
			for _, p := range rt.Partitions {
				got = append(got, rt.Topic+":"+strconv.Itoa(int(p.Partition))+"="+strconv.FormatInt(p.Offset, 10)+"/"+errName(p.ErrorCode))
			}
		}
		// The coordinator's topics, then the denied ones (KafkaApis' order).
		want(t, "fetch named topics", strings.Join(got, " "), "t:0=8/NONE t:1=8/NONE u:0=-1/TOPIC_AUTHORIZATION_FAILED")
		want(t, "fetch all topics", e.fetchAll(e.alice, "exists"), "t:0=8 t:1=8")
		v7.Topics = nil
		if r := e.alice.mustDo(v7).(*kmsg.OffsetFetchResponse); r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].Topic != "t" {
			t.Fatalf("fetch-all v7 lists %+v", r.Topics)
		}
	})

	t.Run("ByTopicID", func(t *testing.T) {
		// v10 names topics by id: an id the broker does not know answers UNKNOWN_TOPIC_ID before
		// any ACL (ids are not secret); a known one is authorized by its topic's name.
		defer e.revokeAlice()
		e.grant(aliceOnGroups(ops(kadm.OpRead), "byid"))
		e.grant(aliceOnTopics(ops(kadm.OpRead), "t"))
		tID, uID := e.topicID("t"), e.topicID("u")
		commit := kmsg.NewPtrOffsetCommitRequest()
		commit.Version, commit.Group, commit.Generation = 10, "byid", -1
		for _, id := range [][16]byte{tID, uID, {1, 2, 3}} {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.TopicID = id
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = 0, 3
			rt.Partitions = append(rt.Partitions, rp)
			commit.Topics = append(commit.Topics, rt)
		}
		resp := e.alice.mustDo(commit).(*kmsg.OffsetCommitResponse)
		var got []string
		for _, rt := range resp.Topics {
			got = append(got, errName(rt.Partitions[0].ErrorCode))
			if rt.TopicID == ([16]byte{}) {
				t.Fatalf("v10 answer without topic id: %+v", rt)
			}
		}
		want(t, "commit by id (t, u, unknown)", strings.Join(got, " "), "NONE TOPIC_AUTHORIZATION_FAILED UNKNOWN_TOPIC_ID")

		fetch := kmsg.NewPtrOffsetFetchRequest()
		fetch.Version = 10
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberEpoch = "byid", -1
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{TopicID: uID, Partitions: []int32{0}}, {TopicID: tID, Partitions: []int32{0}}}
		fetch.Groups = append(fetch.Groups, rg)
		g := e.alice.mustDo(fetch).(*kmsg.OffsetFetchResponse).Groups[0]
		wantCode(t, "fetch by id", g.ErrorCode, nil)
		got = nil
		for _, rt := range g.Topics {
			name := map[[16]byte]string{tID: "t", uID: "u"}[rt.TopicID]
			got = append(got, name+"="+strconv.FormatInt(rt.Partitions[0].Offset, 10)+"/"+errName(rt.Partitions[0].ErrorCode))
		}
		want(t, "fetch by id", strings.Join(got, " "), "t=3/NONE u=-1/TOPIC_AUTHORIZATION_FAILED")
		e.admin.mustDo(commitReq("byid", map[string][]int32{"u": {0}}, 4))
		fetch.Groups[0].Topics = nil // all topics: u is left out
		g = e.alice.mustDo(fetch).(*kmsg.OffsetFetchResponse).Groups[0]
		if len(g.Topics) != 1 || g.Topics[0].TopicID != tID {
			t.Fatalf("fetch all by id lists %+v", g.Topics)
		}
	})

	t.Run("OffsetDelete", func(t *testing.T) {
		defer e.revokeAlice()
		del := func(group string) *kmsg.OffsetDeleteResponse {
			req := kmsg.NewPtrOffsetDeleteRequest()
			req.Group = group
			for _, topic := range []string{"t", "u"} {
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic = topic
				rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
				req.Topics = append(req.Topics, rt)
			}
			return e.alice.mustDo(req).(*kmsg.OffsetDeleteResponse)
		}
		for _, g := range []string{"exists", "missing"} {
			r := del(g)
			wantCode(t, "offset delete "+g, r.ErrorCode, kerr.GroupAuthorizationFailed)
			if len(r.Topics) != 0 {
				t.Fatalf("denied offset delete answers topics %+v", r.Topics)
			}
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead, kadm.OpDescribe), "exists"))
		wantCode(t, "offset delete with READ on the group", del("exists").ErrorCode, kerr.GroupAuthorizationFailed)
		e.grant(aliceOnGroups(ops(kadm.OpDelete), "exists", "missing"))
		wantCode(t, "offset delete of a missing group with DELETE", del("missing").ErrorCode, kerr.GroupIDNotFound)
		codes := func(r *kmsg.OffsetDeleteResponse) string {
			return partitionCodes(r.Topics, func(t kmsg.OffsetDeleteResponseTopic) (string, []int32, []int16) {
				return t.Topic, []int32{t.Partitions[0].Partition}, []int16{t.Partitions[0].ErrorCode}
			})
		}
		want(t, "offset delete without topic READ", codes(del("exists")), "t:0=TOPIC_AUTHORIZATION_FAILED u:0=TOPIC_AUTHORIZATION_FAILED")
		e.grant(aliceOnTopics(ops(kadm.OpRead), "u"))
		want(t, "offset delete with READ on u", codes(del("exists")), "t:0=TOPIC_AUTHORIZATION_FAILED u:0=NONE")
		want(t, "offsets left", e.fetchAll(e.admin, "exists"), "t:0=8 t:1=8")
	})
}

// topicID is the id of an existing topic.
func (e *groupEnv) topicID(name string) [16]byte {
	ti, ok := e.sb.Plane().Topic(name)
	if !ok {
		e.t.Fatalf("no topic %s", name)
	}
	return ti.ID
}

// fetchAll fetches every committed offset of group on r as "topic:partition=offset".
func (e *groupEnv) fetchAll(r *rawConn, group string) string {
	e.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 9
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group, rg.MemberEpoch = group, -1
	req.Groups = append(req.Groups, rg)
	g := r.mustDo(req).(*kmsg.OffsetFetchResponse).Groups[0]
	wantCode(e.t, "fetch all", g.ErrorCode, nil)
	var out []string
	for _, rt := range g.Topics {
		for _, p := range rt.Partitions {
			out = append(out, rt.Topic+":"+strconv.Itoa(int(p.Partition))+"="+strconv.FormatInt(p.Offset, 10))
		}
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return strings.Join(out, " ")
}

// TestAuthorizeGroupAdminAPIs: FindCoordinator (DESCRIBE group / transactional id),
// DescribeGroups (DESCRIBE, denied rows first, KIP-430 bitfields), ListGroups (filtered, never an
// error) and DeleteGroups (DELETE, duplicates removed).
func TestAuthorizeGroupAdminAPIs(t *testing.T) {
	e := startGroupEnv(t)

	t.Run("FindCoordinator", func(t *testing.T) {
		defer e.revokeAlice()
		find := func(v int16, typ int8, keys ...string) *kmsg.FindCoordinatorResponse {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version, req.CoordinatorType = v, typ
			if v >= 4 {
				req.CoordinatorKeys = keys
			} else {
				req.CoordinatorKey = keys[0]
			}
			return e.alice.mustDo(req).(*kmsg.FindCoordinatorResponse)
		}
		r := find(4, 0, "exists", "missing")
		for i, c := range r.Coordinators {
			wantCode(t, "find "+c.Key, c.ErrorCode, kerr.GroupAuthorizationFailed)
			if c.Key != []string{"exists", "missing"}[i] || c.NodeID != -1 || c.Host != "" || c.Port != -1 {
				t.Fatalf("denied key answers a node: %+v", c)
			}
		}
		wantCode(t, "find transactional id", find(4, 1, "tx").Coordinators[0].ErrorCode, kerr.TransactionalIDAuthorizationFailed)
		old := find(3, 0, "exists")
		wantCode(t, "find v3", old.ErrorCode, kerr.GroupAuthorizationFailed)
		if old.NodeID != -1 || old.ErrorMessage == nil || *old.ErrorMessage != "Group authorization failed." {
			t.Fatalf("find v3 denied: %+v", old)
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead), "exists")) // READ implies DESCRIBE
		r = find(4, 0, "exists", "missing")
		wantCode(t, "find with DESCRIBE", r.Coordinators[0].ErrorCode, nil)
		wantCode(t, "find without DESCRIBE", r.Coordinators[1].ErrorCode, kerr.GroupAuthorizationFailed)
		if got := net.JoinHostPort(r.Coordinators[0].Host, strconv.Itoa(int(r.Coordinators[0].Port))); got != e.sb.SASLPlaintext {
			t.Fatalf("coordinator %s, want the SASL_PLAINTEXT listener %s", got, e.sb.SASLPlaintext)
		}
		old = find(3, 0, "exists")
		if got := net.JoinHostPort(old.Host, strconv.Itoa(int(old.Port))); old.ErrorCode != 0 || got != e.sb.SASLPlaintext {
			t.Fatalf("find v3: %v at %s", errName(old.ErrorCode), got)
		}
	})

	t.Run("DescribeGroups", func(t *testing.T) {
		defer e.revokeAlice()
		describe := func(groups ...string) []kmsg.DescribeGroupsResponseGroup {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Version, req.Groups, req.IncludeAuthorizedOperations = 5, groups, true
			return e.alice.mustDo(req).(*kmsg.DescribeGroupsResponse).Groups
		}
		for _, g := range describe("exists", "missing") {
			wantCode(t, "describe "+g.Group, g.ErrorCode, kerr.GroupAuthorizationFailed)
			if g.State != "" || g.ProtocolType != "" || len(g.Members) != 0 || g.AuthorizedOperations != -2147483648 {
				t.Fatalf("denied describe leaks %+v", g)
			}
		}
		e.grant(aliceOnGroups(ops(kadm.OpDescribe), "exists"))
		gs := describe("missing", "exists", "nope")
		if gs[0].Group != "missing" || gs[1].Group != "nope" || gs[2].Group != "exists" {
			t.Fatalf("denied groups come first: %s %s %s", gs[0].Group, gs[1].Group, gs[2].Group)
		}
		wantCode(t, "describe with DESCRIBE", gs[2].ErrorCode, nil)
		if gs[2].State != "Empty" || gs[2].AuthorizedOperations != 256 {
			t.Fatalf("described %s, authorized operations %d, want Empty and 256", gs[2].State, gs[2].AuthorizedOperations)
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead), "exists"))
		if got := describe("exists")[0].AuthorizedOperations; got != 264 {
			t.Fatalf("authorized operations with READ %d, want 264", got)
		}
	})

	t.Run("ListGroups", func(t *testing.T) {
		defer e.revokeAlice()
		list := func() string {
			req := kmsg.NewPtrListGroupsRequest()
			req.Version = 5
			r := e.alice.mustDo(req).(*kmsg.ListGroupsResponse)
			wantCode(t, "list groups", r.ErrorCode, nil)
			var ids []string
			for _, g := range r.Groups {
				ids = append(ids, g.Group)
			}
			return strings.Join(ids, ",")
		}
		e.admin.mustDo(commitReq("other", map[string][]int32{"t": {0}}, 1))
		want(t, "list without ACLs", list(), "")
		e.grant(aliceOnGroups(ops(kadm.OpDescribe), "exists"))
		want(t, "list with DESCRIBE on exists", list(), "exists")
		e.grant(kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpDescribe))
		want(t, "list with CLUSTER DESCRIBE", list(), "exists,other")
	})

	t.Run("DeleteGroups", func(t *testing.T) {
		defer e.revokeAlice()
		del := func(groups ...string) []kmsg.DeleteGroupsResponseGroup {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Version, req.Groups = 2, groups
			return e.alice.mustDo(req).(*kmsg.DeleteGroupsResponse).Groups
		}
		rs := del("missing", "exists", "missing")
		if len(rs) != 2 {
			t.Fatalf("duplicates are answered once: %+v", rs)
		}
		for _, r := range rs {
			wantCode(t, "delete "+r.Group, r.ErrorCode, kerr.GroupAuthorizationFailed)
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead, kadm.OpDescribe), "missing"))
		wantCode(t, "delete with READ", del("missing")[0].ErrorCode, kerr.GroupAuthorizationFailed)
		e.grant(aliceOnGroups(ops(kadm.OpDelete), "missing", "other"))
		rs = del("exists", "missing", "other")
		// The authorized groups first, then the denied ones.
		got := []string{}
		for _, r := range rs {
			got = append(got, r.Group+"="+errName(r.ErrorCode))
		}
		want(t, "delete", strings.Join(got, " "), "missing=GROUP_ID_NOT_FOUND other=NONE exists=GROUP_AUTHORIZATION_FAILED")
	})
}
