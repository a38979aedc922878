package security

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestGroupHelpers(t *testing.T) {
	a := newAuthz(t, AuthorizerConfig{},
		acl(Group, Literal, "g", "User:alice", OpRead, Allow),
		acl(Group, Prefixed, "team-", "User:alice", OpDescribe, Allow),
		acl(Topic, Literal, "t", "User:alice", OpRead, Allow),
		acl(Cluster, Literal, ClusterName, "User:ops", OpDescribe, Allow),
	)
	alice := Check{A: a, S: sess("alice", "1.1.1.1"), API: 11}
	if alice.Group("g") != nil || alice.Group("other") != kerr.GroupAuthorizationFailed {
		t.Fatal("JoinGroup needs READ on the group")
	}
	if (Check{A: a, S: alice.S, API: 42}).Group("g") != kerr.GroupAuthorizationFailed {
		t.Fatal("DeleteGroups needs DELETE")
	}
	f := alice.ListGroupsFilter()
	if !f("g") || !f("team-a") || f("other") {
		t.Fatal("ListGroups lists the groups alice may describe")
	}
	ops := Check{A: a, S: sess("ops", "1.1.1.1")}.ListGroupsFilter()
	if !ops("anything") {
		t.Fatal("CLUSTER DESCRIBE lists every group")
	}
	if d := alice.DescribableTopics(); !d("t") || d("u") {
		t.Fatal("READ implies DESCRIBE on topics")
	}
	if denied := alice.CreatableTopics([]string{"x", "y"}); len(denied) != 2 {
		t.Fatalf("denied %v", denied)
	}
	for key, want := range map[int16]Operation{93: OpRead, 89: OpDescribe, 47: OpDelete, 10: OpDescribe} {
		if op, ok := GroupOperation(key); !ok || op != want {
			t.Errorf("key %d: %v", key, op)
		}
	}
}

// Denials of named resources are audited, rate-limited, with the resource and the rule; filter
// checks are not.
func TestAuditLog(t *testing.T) {
	var buf bytes.Buffer
	var counted int
	a := newAuthz(t, AuthorizerConfig{Log: slog.New(slog.NewTextHandler(&buf, nil)), OnDenied: func(ResourceType) { counted++ }},
		acl(Topic, Literal, "t", "User:alice", OpRead, Deny))
	s := sess("alice", "10.0.0.7")
	a.Authorize(s, Action{Op: OpRead, Type: Topic, Name: "t", API: 1})
	a.Authorize(s, Action{Op: OpRead, Type: Group, Name: "g", API: 11})
	a.Authorize(s, Action{Op: OpDescribe, Type: Group, Name: "hidden", API: 16, Filter: true})
	out := buf.String()
	for _, want := range []string{`principal=User:alice operation=READ host=10.0.0.7 resource=TOPIC:LITERAL:t request=Fetch`,
		`rule="MatchingAcl(`, `resource=GROUP:LITERAL:g request=JoinGroup`, `rule=DefaultDeny`} {
		if !strings.Contains(out, want) {
			t.Errorf("audit log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") || counted != 2 {
		t.Errorf("filter checks must be silent (counted %d):\n%s", counted, out)
	}
	buf.Reset()
	for i := 0; i < 100; i++ {
		a.Authorize(s, Action{Op: OpWrite, Type: Topic, Name: "t", API: 0})
	}
	if n := strings.Count(buf.String(), "authorization denied"); n > auditLimit {
		t.Errorf("%d audit lines in a burst, limit %d", n, auditLimit)
	}
}
