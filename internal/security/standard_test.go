package security

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAuthz(t testing.TB, cfg AuthorizerConfig, bs ...Binding) *StandardAuthorizer {
	t.Helper()
	a, err := NewStandardAuthorizer(cfg, &MemoryStore{})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range a.CreateACLs(bs) {
		if err != nil {
			t.Fatalf("binding %d: %v", i, err)
		}
	}
	return a
}

func acl(rt ResourceType, pt PatternType, name, principal string, op Operation, perm Permission) Binding {
	return Binding{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: "*", Operation: op, Permission: perm}
}

func sess(user, host string) *Session {
	return NewSession(User(user), host, "PLAINTEXT", Plaintext, "")
}

func TestStandardAuthorizerSemantics(t *testing.T) {
	a := newAuthz(t, AuthorizerConfig{SuperUsers: []string{"User:admin"}},
		acl(Topic, Literal, "orders", "User:alice", OpRead, Allow),
		acl(Topic, Prefixed, "pay-", "User:alice", OpWrite, Allow),
		acl(Topic, Literal, "pay-secret", "User:alice", OpWrite, Deny),
		acl(Topic, Literal, "*", "User:bob", OpDescribe, Allow),
		acl(Group, Literal, "g", "User:*", OpRead, Allow),
		acl(Group, Literal, "g", "User:mallory", OpAll, Deny),
		acl(Topic, Literal, "hosts", "User:carol", OpRead, Allow),
		acl(Cluster, Literal, ClusterName, "User:ops", OpAlterConfigs, Allow),
	)
	a.ix.Load() // built
	hostACL := acl(Topic, Literal, "byhost", "User:carol", OpRead, Allow)
	hostACL.Host = "0:0:0:0:0:0:0:1"
	a.CreateACLs([]Binding{hostACL})
	alice, bob, mallory, admin := sess("alice", "10.0.0.1"), sess("bob", "10.0.0.1"), sess("mallory", "10.0.0.1"), sess("admin", "10.0.0.1")
	cases := []struct {
		s    *Session
		op   Operation
		rt   ResourceType
		name string
		want bool
	}{
		{alice, OpRead, Topic, "orders", true},
		{alice, OpDescribe, Topic, "orders", true}, // implied by READ
		{alice, OpWrite, Topic, "orders", false},
		{alice, OpWrite, Topic, "pay-eu", true}, // PREFIXED
		{alice, OpDescribe, Topic, "pay-eu", true},
		{alice, OpWrite, Topic, "pay-secret", false},   // DENY wins over the PREFIXED ALLOW
		{alice, OpDescribe, Topic, "pay-secret", true}, // a DENY WRITE does not deny DESCRIBE
		{alice, OpWrite, Topic, "pay", false},
		{bob, OpDescribe, Topic, "anything", true}, // LITERAL *
		{bob, OpRead, Topic, "anything", false},
		{alice, OpRead, Group, "g", true}, // User:*
		{mallory, OpRead, Group, "g", false},
		{mallory, OpDescribe, Group, "g", false}, // DENY ALL covers DESCRIBE
		{admin, OpDelete, Topic, "orders", true}, // super user
		{alice, OpRead, Topic, "no-acls-at-all", false},
		{sess("ops", "1.2.3.4"), OpDescribeConfigs, Cluster, ClusterName, true}, // ALTER_CONFIGS implies DESCRIBE_CONFIGS
		{sess("carol", "::1"), OpRead, Topic, "byhost", true},                   // IPv6 forms compare as addresses
		{sess("carol", "127.0.0.1"), OpRead, Topic, "byhost", false},
	}
	for _, c := range cases {
		if got := a.Authorize(c.s, Action{Op: c.op, Type: c.rt, Name: c.name}); got != c.want {
			t.Errorf("%s %s %s:%s = %v, want %v", c.s.PrincipalString(), c.op, c.rt, c.name, got, c.want)
		}
	}
}

func TestAllowEveryoneIfNoACLFound(t *testing.T) {
	a := newAuthz(t, AuthorizerConfig{AllowEveryoneIfNoACLFound: true}, acl(Topic, Literal, "guarded", "User:alice", OpRead, Allow))
	if !a.Authorize(sess("bob", "1.1.1.1"), Action{Op: OpWrite, Type: Topic, Name: "open"}) {
		t.Fatal("a topic without ACLs is open with allow.everyone.if.no.acl.found")
	}
	if a.Authorize(sess("bob", "1.1.1.1"), Action{Op: OpRead, Type: Topic, Name: "guarded"}) {
		t.Fatal("an ACL for another user closes the topic to everyone else")
	}
}

func TestAuthorizedOperationsBitfields(t *testing.T) {
	for _, c := range []struct {
		op   Operation
		rt   ResourceType
		want int32
	}{
		{OpRead, Group, 264}, {OpDescribe, Group, 256}, {OpDelete, Group, 320}, {OpAll, Group, 3400},
		{OpRead, Topic, 264}, {OpWrite, Topic, 272}, {OpAll, Topic, 3576},
	} {
		name := "r"
		a := newAuthz(t, AuthorizerConfig{}, acl(c.rt, Literal, name, "User:u", c.op, Allow))
		if got := a.AuthorizedOperations(sess("u", "1.1.1.1"), c.rt, name); got != c.want {
			t.Errorf("%s on %s: %d, want %d", c.op, c.rt, got, c.want)
		}
	}
	a := newAuthz(t, AuthorizerConfig{}, acl(Cluster, Literal, ClusterName, "User:u", OpDescribe, Allow), acl(Cluster, Literal, ClusterName, "User:u", OpAlter, Allow))
	if got := a.AuthorizedOperations(sess("u", "1.1.1.1"), Cluster, ClusterName); got != 384 {
		t.Errorf("cluster DESCRIBE+ALTER: %d, want 384", got)
	}
	if got := AllOperationsBits(Cluster); got != 8096 {
		t.Errorf("cluster ALL: %d", got)
	}
}

func TestAuthorizeByResourceType(t *testing.T) {
	u := sess("u", "1.1.1.1")
	cases := []struct {
		name string
		bs   []Binding
		want bool
	}{
		{"none", nil, false},
		{"literal allow", []Binding{acl(Topic, Literal, "t", "User:u", OpWrite, Allow)}, true},
		{"literal allow denied by same literal", []Binding{acl(Topic, Literal, "t", "User:u", OpWrite, Allow), acl(Topic, Literal, "t", "User:u", OpWrite, Deny)}, false},
		{"literal allow denied by prefix", []Binding{acl(Topic, Literal, "ab", "User:u", OpWrite, Allow), acl(Topic, Prefixed, "a", "User:u", OpWrite, Deny)}, false},
		{"prefixed allow not dominated by a literal deny", []Binding{acl(Topic, Prefixed, "ab", "User:u", OpWrite, Allow), acl(Topic, Literal, "ab", "User:u", OpWrite, Deny)}, true},
		{"wildcard deny", []Binding{acl(Topic, Literal, "t", "User:u", OpWrite, Allow), acl(Topic, Literal, "*", "User:u", OpWrite, Deny)}, false},
		{"other op", []Binding{acl(Topic, Literal, "t", "User:u", OpRead, Allow)}, false},
	}
	for _, c := range cases {
		a := newAuthz(t, AuthorizerConfig{}, c.bs...)
		if got := a.AuthorizeByResourceType(u, OpWrite, Topic); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCreateDeleteDescribeACLs(t *testing.T) {
	a := newAuthz(t, AuthorizerConfig{})
	b := acl(Topic, Literal, "t", "User:u", OpRead, Allow)
	errs := a.CreateACLs([]Binding{b, b, acl(Cluster, Literal, "other", "User:u", OpAlter, Allow), acl(Topic, Literal, "t", "nocolon", OpRead, Allow)})
	if errs[0] != nil || errs[1] != nil || errs[2] == nil || errs[3] == nil {
		t.Fatalf("errs %v", errs)
	}
	if a.Count() != 1 {
		t.Fatalf("create is idempotent: %d ACLs", a.Count())
	}
	a.CreateACLs([]Binding{acl(Topic, Prefixed, "t", "User:u", OpWrite, Allow), acl(Topic, Literal, "*", "User:v", OpRead, Allow), acl(Topic, Literal, "x", "User:v", OpRead, Allow)})
	name := "t"
	match := Filter{ResourceType: kmsg.ACLResourceTypeAny, ResourceName: &name, PatternType: kmsg.ACLResourcePatternTypeMatch, Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}
	if got := a.DescribeACLs(match); len(got) != 3 {
		t.Fatalf("MATCH t: %v", got)
	}
	del, err := a.DeleteACLs([]Filter{match})
	if err != nil || len(del[0]) != 3 || a.Count() != 1 {
		t.Fatalf("delete: %v %v, left %d", del, err, a.Count())
	}
}

// BenchmarkAuthorize: one check against 1k, 10k and 100k ACLs over 1,000 principals (topics
// "team<T>.svc<S>.<name>": a third LITERAL names, a third PREFIXED "team<T>." and
// "team<T>.svc<S>.", a third on groups), for a principal with and without a matching ACL. The
// cost must not grow with the ACL count.
func BenchmarkAuthorize(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		var bs []Binding
		for i := 0; i < n; i++ {
			p := fmt.Sprintf("User:u%d", i%1000)
			team, svc := i%97, i%13
			switch i % 3 {
			case 0:
				bs = append(bs, acl(Topic, Literal, fmt.Sprintf("team%d.svc%d.events-%d", team, svc, i), p, OpRead, Allow))
			case 1:
				if i%2 == 0 {
					bs = append(bs, acl(Topic, Prefixed, fmt.Sprintf("team%d.", team), p, OpWrite, Allow))
				} else {
					bs = append(bs, acl(Topic, Prefixed, fmt.Sprintf("team%d.svc%d.", team, svc), p, OpRead, Allow))
				}
			default:
				bs = append(bs, acl(Group, Literal, fmt.Sprintf("group-%d", i), p, OpRead, Allow))
			}
		}
		a := newAuthz(b, AuthorizerConfig{}, bs...)
		names := []string{"team42.svc3.events-7", "team7.svc1.orders", "team96.svc12.payments-eu-west-1", "unrelated"}
		for _, who := range []string{"u42", "nobody"} {
			s := sess(who, "10.1.2.3")
			b.Run(fmt.Sprintf("acls=%d/%s", n, who), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					a.Authorize(s, Action{Op: OpDescribe, Type: Topic, Name: names[i%len(names)], Filter: true})
				}
			})
		}
	}
}
