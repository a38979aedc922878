package security

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// BenchmarkGroupAuthorization (a benchmark, not a test): commit and heartbeat throughput over
// PLAINTEXT on a broker without an authorizer against one with the StandardAuthorizer holding
// 10,000 ACLs, where the client (User:ANONYMOUS, not a super user) holds exactly the ACLs it
// needs among 5,000 of its own on other resources (literal and prefixed) and 5,000 of 50 other
// principals. Run with
//
//	go test ./test/security -run '^$' -bench GroupAuthorization -benchtime 5s
func BenchmarkGroupAuthorization(b *testing.B) {
	for _, mode := range []string{"none", "acl10k"} {
		var addr string
		if mode == "none" {
			tb := testutil.Start(b)
			addr = tb.Addr()
			createTopicAt(b, addr, "bench", 8)
			createTopicAt(b, addr, "hb", 4)
		} else {
			sb := startSecure(b)
			sb.createTopic(b, "bench", 8)
			sb.createTopic(b, "hb", 4)
			loadBenchACLs(b, sb)
			addr = sb.Plaintext
		}
		conns := make([]*rawConn, benchConns)
		for i := range conns {
			conns[i] = dialRaw(b, addr, nil)
		}
		b.Run(mode+"/commit", func(b *testing.B) { benchCommit(b, conns, "bench-"+mode+"-", "bench") })
		b.Run(mode+"/heartbeat", func(b *testing.B) { benchHeartbeat(b, conns, "hb-"+mode+"-", "hb") })
	}
}

// createTopicAt creates a topic on a broker without security.
func createTopicAt(b *testing.B, addr, name string, partitions int32) {
	r := dialRaw(b, addr, nil)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 7, 5000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	req.Topics = append(req.Topics, rt)
	if c := r.mustDo(req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; c != 0 {
		b.Fatalf("create %s: %d", name, c)
	}
}

// loadBenchACLs creates the client's ACLs (READ on groups prefixed bench- and hb-, READ on the
// topics bench and hb) and 9,996 others, in batches of 1,000.
func loadBenchACLs(b *testing.B, sb *secBroker) {
	acl := func(rt kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal string) kmsg.CreateACLsRequestCreation {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pattern
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		return c
	}
	const anon = "User:ANONYMOUS"
	all := []kmsg.CreateACLsRequestCreation{
		acl(kmsg.ACLResourceTypeGroup, "bench-", kmsg.ACLResourcePatternTypePrefixed, anon),
		acl(kmsg.ACLResourceTypeGroup, "hb-", kmsg.ACLResourcePatternTypePrefixed, anon),
		acl(kmsg.ACLResourceTypeTopic, "bench", kmsg.ACLResourcePatternTypeLiteral, anon),
		acl(kmsg.ACLResourceTypeTopic, "hb", kmsg.ACLResourcePatternTypeLiteral, anon),
	}
	for i := 0; len(all) < 10000; i++ {
		principal := anon
		if i%2 == 1 {
			principal = fmt.Sprintf("User:user-%d", i%50)
		}
		switch i % 4 {
		case 0, 1:
			all = append(all, acl(kmsg.ACLResourceTypeTopic, fmt.Sprintf("topic-%d", i), kmsg.ACLResourcePatternTypeLiteral, principal))
		case 2:
			all = append(all, acl(kmsg.ACLResourceTypeGroup, fmt.Sprintf("group-%d", i), kmsg.ACLResourcePatternTypeLiteral, principal))
		default:
			all = append(all, acl(kmsg.ACLResourceTypeTopic, fmt.Sprintf("p%d-", i), kmsg.ACLResourcePatternTypePrefixed, principal))
		}
	}
	admin := authedRaw(b, sb, "admin")
	for len(all) > 0 {
		n := min(1000, len(all))
		req := kmsg.NewPtrCreateACLsRequest()
		req.Version, req.Creations = 3, all[:n]
		for _, r := range admin.mustDo(req).(*kmsg.CreateACLsResponse).Results {
			if r.ErrorCode != 0 {
				b.Fatalf("create ACL: %d", r.ErrorCode)
			}
		}
		all = all[n:]
	}
}
