package security

import (
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/streams/topology"
)

// Authorization of KIP-848 consumer groups and KIP-1071 streams groups with KIP-1331 topology
// descriptions (KafkaApis with Kafka 4.0's topic checks).

// cgHeartbeat is a KIP-848 join of member on r, subscribed by names or by a regex.
func cgHeartbeat(r *rawConn, group, member string, names []string, regex string) *kmsg.ConsumerGroupHeartbeatResponse {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = 1, group, member, 0, 60000
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if regex != "" {
		req.SubscribedTopicRegex = &regex
	} else {
		req.SubscribedTopicNames = names
	}
	return r.mustDo(req).(*kmsg.ConsumerGroupHeartbeatResponse)
}

// assignedTopics names the topics of a heartbeat's assignment, sorted.
func (e *groupEnv) assignedTopics(a *kmsg.ConsumerGroupHeartbeatResponseAssignment) string {
	var out []string
	if a != nil {
		for _, t := range a.Topics {
			for _, name := range []string{"t", "u", "orders-eu", "orders-us", "orders-secret"} {
				if ti, ok := e.sb.Plane().Topic(name); ok && ti.ID == t.TopicID {
					out = append(out, name)
				}
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// TestAuthorizeConsumerGroupAPIs: ConsumerGroupHeartbeat needs READ on the group and DESCRIBE on
// every subscribed topic name; ConsumerGroupDescribe needs DESCRIBE on the group and on every
// topic its members are assigned, with the KIP-430 bitfield when asked.
func TestAuthorizeConsumerGroupAPIs(t *testing.T) {
	e := startGroupEnv(t, "group.consumer.assignment.interval.ms=0")
	if r := cgHeartbeat(e.admin, "cg", "admin-member-1", []string{"t"}, ""); r.ErrorCode != 0 || e.assignedTopics(r.Assignment) != "t" {
		t.Fatalf("admin join: %v %s", errName(r.ErrorCode), e.assignedTopics(r.Assignment))
	}

	t.Run("ConsumerGroupHeartbeat", func(t *testing.T) {
		defer e.revokeAlice()
		for _, g := range []string{"cg", "cg2"} {
			r := cgHeartbeat(e.alice, g, "alice-member-1", []string{"t"}, "")
			wantCode(t, "heartbeat "+g, r.ErrorCode, kerr.GroupAuthorizationFailed)
			if r.MemberID != nil || r.MemberEpoch != 0 || r.Assignment != nil {
				t.Fatalf("denied heartbeat leaks %+v", r)
			}
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead), "cg2"))
		e.grant(aliceOnTopics(ops(kadm.OpDescribe), "t"))
		// Every subscribed name must be describable, whether or not the topic exists.
		r := cgHeartbeat(e.alice, "cg2", "alice-member-1", []string{"t", "nosuch"}, "")
		wantCode(t, "heartbeat subscribing an undescribable topic", r.ErrorCode, kerr.TopicAuthorizationFailed)
		if r.ErrorMessage != nil || r.MemberEpoch != 0 {
			t.Fatalf("denied subscription: %+v", r)
		}
		if e.groupExists("cg2") {
			t.Fatal("a denied heartbeat created the group")
		}
		e.grant(aliceOnTopics(ops(kadm.OpDescribe), "nosuch"))
		r = cgHeartbeat(e.alice, "cg2", "alice-member-1", []string{"t", "nosuch"}, "")
		wantCode(t, "heartbeat with DESCRIBE on every name", r.ErrorCode, nil)
		if got := e.assignedTopics(r.Assignment); got != "t" {
			t.Fatalf("assigned %q", got)
		}
	})

	t.Run("RegexResolvesOnlyDescribableTopics", func(t *testing.T) {
		defer e.revokeAlice()
		for _, n := range []string{"orders-eu", "orders-us", "orders-secret"} {
			e.sb.createTopic(t, n, 1)
		}
		e.grant(aliceOnGroups(ops(kadm.OpRead), "rx"))
		e.grant(aliceOnTopics(ops(kadm.OpRead), "orders-eu"))
		e.grant(aliceOnTopics(ops(kadm.OpDescribe), "orders-us"))
		// No topic check at request time for a regex: it resolves to the describable matches.
		r := cgHeartbeat(e.alice, "rx", "alice-member-rx", nil, "orders-.*")
		wantCode(t, "regex heartbeat", r.ErrorCode, nil)
		if got := e.assignedTopics(r.Assignment); got != "orders-eu,orders-us" {
			t.Fatalf("regex resolved to %q, want the describable orders-eu,orders-us", got)
		}
	})

	t.Run("ConsumerGroupDescribe", func(t *testing.T) {
		defer e.revokeAlice()
		describe := func(groups ...string) []kmsg.ConsumerGroupDescribeResponseGroup {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups, req.IncludeAuthorizedOperations = groups, true
			return e.alice.mustDo(req).(*kmsg.ConsumerGroupDescribeResponse).Groups
		}
		for _, g := range describe("cg", "missing") {
			wantCode(t, "describe "+g.Group, g.ErrorCode, kerr.GroupAuthorizationFailed)
			if g.State != "" || len(g.Members) != 0 || g.ErrorMessage != nil {
				t.Fatalf("denied describe leaks %+v", g)
			}
		}
		e.grant(aliceOnGroups(ops(kadm.OpDescribe), "cg", "missing"))
		gs := describe("cg", "missing")
		wantCode(t, "describe a missing group", gs[1].ErrorCode, kerr.GroupIDNotFound)
		g := gs[0]
		wantCode(t, "describe a group assigned an undescribable topic", g.ErrorCode, kerr.TopicAuthorizationFailed)
		if g.ErrorMessage == nil || *g.ErrorMessage != "The group has described topic(s) that the client is not authorized to describe." || len(g.Members) != 0 || g.State != "" {
			t.Fatalf("topic-denied describe: %+v", g)
		}
		e.grant(aliceOnTopics(ops(kadm.OpDescribe), "t"))
		g = describe("cg")[0]
		wantCode(t, "describe with DESCRIBE on the group and its topics", g.ErrorCode, nil)
		if len(g.Members) != 1 || g.AuthorizedOperations != 256 {
			t.Fatalf("described %d members, authorized operations %d (want 1, 256)", len(g.Members), g.AuthorizedOperations)
		}
	})
}

// groupExists reports whether the super user lists group.
func (e *groupEnv) groupExists(group string) bool {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	for _, g := range e.admin.mustDo(req).(*kmsg.ListGroupsResponse).Groups {
		if g.Group == group {
			return true
		}
	}
	return false
}

// sgHeartbeat is a streams join of member with a topology reading source (and, with changelog,
// a state store's changelog topic).
func sgHeartbeat(r *rawConn, group, member string, source, changelog string) *kmsg.StreamsGroupHeartbeatResponse {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, member, 0, 30000
	req.ProcessID = kmsg.StringPtr("proc-" + member)
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	sub.SubtopologyID, sub.SourceTopics = "0", []string{source}
	if changelog != "" {
		ti := kmsg.NewTopicInfo()
		ti.Topic = changelog
		sub.StateChangelogTopics = []kmsg.TopicInfo{ti}
	}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub}
	req.Topology = &topo
	return r.mustDo(req).(*kmsg.StreamsGroupHeartbeatResponse)
}

func pushDescription(t *testing.T, r *rawConn, group, member string) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
	t.Helper()
	d, err := topology.NewBuilder().Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"t"}, "KSTREAM-SINK-0000000001").
		Sink("KSTREAM-SINK-0000000001", "out").Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	req.Group, req.MemberID, req.TopologyEpoch, req.TopologyDescription = group, member, 0, d.ToRequest()
	return r.mustDo(req).(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
}

// TestAuthorizeStreamsGroupAPIs: StreamsGroupHeartbeat needs READ on the group, DESCRIBE on every
// topology topic and CREATE for the internal topics it creates (none is created unless all may
// be); the KIP-1331 push needs READ on the group before the plugin or the member is looked at;
// StreamsGroupDescribe needs DESCRIBE on the group (which covers the KIP-1331 topology
// description) and on every topology topic.
func TestAuthorizeStreamsGroupAPIs(t *testing.T) {
	e := startGroupEnv(t)
	const changelog = "sg-store-changelog"
	if r := sgHeartbeat(e.admin, "sg-admin", "admin-1", "t", ""); r.ErrorCode != 0 {
		t.Fatalf("admin streams join: %v", errName(r.ErrorCode))
	}

	for _, g := range []string{"sg-admin", "sg"} {
		r := sgHeartbeat(e.alice, g, "alice-1", "t", changelog)
		wantCode(t, "streams heartbeat "+g, r.ErrorCode, kerr.GroupAuthorizationFailed)
		if r.MemberEpoch != 0 || r.ErrorMessage != nil {
			t.Fatalf("denied streams heartbeat: %+v", r)
		}
		wantCode(t, "push "+g, pushDescription(t, e.alice, g, "alice-1").ErrorCode, kerr.GroupAuthorizationFailed)
	}
	if n := e.topoDescMetric("set_success") + e.topoDescMetric("set_error"); n != 0 {
		t.Fatalf("a denied push called the plugin (%d calls)", n)
	}
	e.grant(aliceOnGroups(ops(kadm.OpRead), "sg"))
	r := sgHeartbeat(e.alice, "sg", "alice-1", "__consumer_offsets", "")
	wantCode(t, "topology with an internal topic", r.ErrorCode, kerr.StreamsInvalidTopology)
	if r.ErrorMessage == nil || *r.ErrorMessage != "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited." {
		t.Fatalf("message %v", r.ErrorMessage)
	}
	wantCode(t, "topology without DESCRIBE on its topics", sgHeartbeat(e.alice, "sg", "alice-1", "t", changelog).ErrorCode, kerr.TopicAuthorizationFailed)
	// The push is past the READ check now: the member is unknown.
	wantCode(t, "push of an unknown member with READ", pushDescription(t, e.alice, "sg", "alice-1").ErrorCode, kerr.UnknownMemberID)

	e.grant(aliceOnTopics(ops(kadm.OpRead), "t", changelog))
	r = sgHeartbeat(e.alice, "sg", "alice-1", "t", changelog)
	wantCode(t, "streams heartbeat with DESCRIBE", r.ErrorCode, nil)
	status := func(r *kmsg.StreamsGroupHeartbeatResponse) string {
		for _, s := range r.Status {
			if s.StatusCode == coordinator.StreamsStatusMissingInternalTopics {
				return s.StatusDetail
			}
		}
		return ""
	}
	if got := status(r); got != "Internal topics are missing: "+changelog+"; Unauthorized to CREATE on topics "+changelog+"." {
		t.Fatalf("MISSING_INTERNAL_TOPICS detail %q", got)
	}
	if e.sb.topicExists(t, changelog) {
		t.Fatal("internal topic created without CREATE")
	}
	e.grant(aliceOnTopics(ops(kadm.OpCreate), changelog))
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "sg", "alice-1", r.MemberEpoch
	hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	deadline := time.Now().Add(10 * time.Second)
	for !e.sb.topicExists(t, changelog) {
		if time.Now().After(deadline) {
			t.Fatal("internal topic not created with CREATE")
		}
		var hr *kmsg.StreamsGroupHeartbeatResponse
		if hb.MemberEpoch == 0 {
			hr = sgHeartbeat(e.alice, "sg", "alice-1", "t", changelog)
		} else {
			hr = e.alice.mustDo(hb).(*kmsg.StreamsGroupHeartbeatResponse)
		}
		if hr.ErrorCode != 0 {
			t.Fatalf("heartbeat: %v %v", errName(hr.ErrorCode), *hr.ErrorMessage)
		}
		hb.MemberEpoch = hr.MemberEpoch
		time.Sleep(20 * time.Millisecond)
	}
	wantCode(t, "push with READ", pushDescription(t, e.alice, "sg", "alice-1").ErrorCode, nil)

	// StreamsGroupDescribe, as bob.
	bob := authedRaw(t, e.sb, "bob")
	grantBob := func(b *kadm.ACLBuilder) { e.grant(b) }
	describe := func(groups ...string) []kmsg.StreamsGroupDescribeResponseGroup {
		req := kmsg.NewPtrStreamsGroupDescribeRequest()
		req.Version, req.Groups, req.IncludeAuthorizedOperations, req.IncludeTopologyDescription = 1, groups, true, true
		return bob.mustDo(req).(*kmsg.StreamsGroupDescribeResponse).Groups
	}
	for _, g := range describe("sg", "missing") {
		wantCode(t, "streams describe "+g.Group, g.ErrorCode, kerr.GroupAuthorizationFailed)
		if g.Topology != nil || g.TopologyDescription != nil || len(g.Members) != 0 {
			t.Fatalf("denied streams describe leaks %+v", g)
		}
	}
	grantBob(kadm.NewACLs().Allow("User:bob").Groups("sg").Operations(kadm.OpDescribe))
	g := describe("sg")[0]
	wantCode(t, "streams describe without DESCRIBE on the topology's topics", g.ErrorCode, kerr.TopicAuthorizationFailed)
	if g.ErrorMessage == nil || *g.ErrorMessage != "The described group uses topics that the client is not authorized to describe." ||
		g.Topology != nil || g.TopologyDescription != nil || len(g.Members) != 0 {
		t.Fatalf("topic-denied streams describe: %+v", g)
	}
	if n := e.topoDescMetric("get_success") + e.topoDescMetric("get_error"); n != 0 {
		t.Fatalf("denied describes called the plugin's getTopology (%d calls)", n)
	}
	grantBob(kadm.NewACLs().Allow("User:bob").Topics("t", changelog).Operations(kadm.OpDescribe))
	g = describe("sg")[0]
	wantCode(t, "streams describe", g.ErrorCode, nil)
	if g.AuthorizedOperations != 256 || len(g.Members) != 1 || g.TopologyDescriptionStatus != coordinator.StreamsTopologyDescriptionAvailable || g.TopologyDescription == nil {
		t.Fatalf("described: operations %d, %d members, topology description status %d", g.AuthorizedOperations, len(g.Members), g.TopologyDescriptionStatus)
	}
}

// topoDescMetric reads a KIP-1331 plugin counter from /metrics.
func (e *groupEnv) topoDescMetric(name string) int {
	e.t.Helper()
	resp, err := http.Get("http://" + e.sb.HTTPAddr() + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	prefix := "muster_group_coordinator_streams_group_topology_description_" + name + "_total "
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, prefix) {
			n, _ := strconv.Atoi(strings.TrimPrefix(l, prefix))
			return n
		}
	}
	e.t.Fatalf("no metric %s", prefix)
	return 0
}
