package security

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/acls"
	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/cli/configs"
	"github.com/muster-io/muster/internal/cli/storage"
	"github.com/muster-io/muster/internal/testutil"
)

// adminConfig writes a --command-config for the super user over SASL_SSL with SCRAM-SHA-512,
// trusting the test CA.
func (sb *secBroker) adminConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "admin.properties")
	os.WriteFile(p, []byte(strings.Join([]string{
		"security.protocol=SASL_SSL",
		"sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + sb.PKI.CAFile,
	}, "\n")), 0o600)
	return p
}

func (sb *secBroker) acls(t *testing.T, args ...string) clikittest.Result {
	t.Helper()
	return clikittest.Run(acls.NewCommand(), append([]string{"--bootstrap-server", sb.SASLSSL, "--command-config", sb.adminConfig(t)}, args...)...)
}

// consume joins group as user (SCRAM) and reads n records of topic; it returns the first error.
func consumeGroup(t *testing.T, sb *secBroker, user, group, topic string, n int) error {
	t.Helper()
	cl := client(t, sb.SASLPlaintext, scram256(user, user+"-secret"), nil,
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, e := range fs.Errors() {
			return e.Err
		}
		got += fs.NumRecords()
	}
	return cl.CommitUncommittedOffsets(ctx)
}

// TestConsumerGroupWithConsumerACLs: `muster acls --add --allow-principal User:bob --consumer
// --group g --topic t` grants exactly what a consumer group needs; without the topic ACLs it
// fails cleanly with TOPIC_AUTHORIZATION_FAILED. --list shows the bindings; --remove deletes them.
func TestConsumerGroupWithConsumerACLs(t *testing.T) {
	sb := startSecure(t)
	sb.createTopic(t, "orders", 2)
	admin := client(t, sb.SASLPlaintext, plainAuth("admin", "admin-secret"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	res := sb.acls(t, "--add", "--allow-principal", "User:bob", "--consumer", "--group", "g", "--topic", "orders")
	res.Expect(t, 0, "*", "")
	for _, want := range []string{
		"Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n \t(principal=User:bob, host=*, operation=DESCRIBE, permissionType=ALLOW) \n",
		"Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)`: \n \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Fatalf("--add output lacks\n%s\ngot:\n%s", want, res.Stdout)
		}
	}
	if err := consumeGroup(t, sb, "bob", "g", "orders", 10); err != nil {
		t.Fatalf("consumer group with --consumer ACLs: %v", err)
	}
	list := sb.acls(t, "--list", "--topic", "orders")
	list.Expect(t, 0, "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n"+
		" \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n"+
		" \t(principal=User:bob, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n", "")
	rm := sb.acls(t, "--remove", "--force", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "orders")
	rm.Expect(t, 0, "Removed ACL (principal=User:bob, host=*, operation=READ, permissionType=ALLOW) on `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`\n", "")
	if err := consumeGroup(t, sb, "bob", "g", "orders", 10); !isErr(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("without topic READ: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// Prefixed patterns and --list by principal.
	sb.acls(t, "--add", "--allow-principal", "User:alice", "--producer", "--topic", "logs-", "--resource-pattern-type", "prefixed").Expect(t, 0, "*", "")
	cl := client(t, sb.SASLPlaintext, scram512("alice", "alice-secret"), nil, kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "logs-eu", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("--producer on a PREFIXED pattern (with CREATE): %v", err)
	}
	byPrincipal := sb.acls(t, "--list", "--principal", "User:alice")
	if !strings.Contains(byPrincipal.Stdout, "name=logs-, patternType=PREFIXED") || strings.Contains(byPrincipal.Stdout, "User:bob") {
		t.Fatalf("--list --principal User:alice:\n%s", byPrincipal.Stdout)
	}
	sb.acls(t, "--add", "--topic", "x").Expect(t, 1, "", "*")                                                                    // no principal
	sb.acls(t, "--add", "--allow-principal", "User:x", "--resource-pattern-type", "match", "--topic", "x").Expect(t, 1, "", "*") // match is for filters
}

// TestScramUsersCLIAndRestart: `muster configs` users (kafka-configs.sh --entity-type users)
// creates, describes and deletes SCRAM credentials; credentials and ACLs survive a restart; the
// offline bootstrap (`muster storage format --add-scram`) creates the first admin of a fresh data
// dir.
func TestScramUsersCLIAndRestart(t *testing.T) {
	dir := t.TempDir()
	storage := clikittest.Run(storageCommand(), "format", "--data-dir", dir, "--add-scram", "SCRAM-SHA-512=[name=root,password=root-secret,iterations=8192]")
	storage.Expect(t, 0, "Added SCRAM-SHA-512 credential for user root to "+dir+"\n", "")
	b := testutil.StartIn(t, dir, nil, "listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"authorizer.class.name=acl", "super.users=User:root", "connection.failed.authentication.delay.ms=0")
	addr := b.ListenerAddr("SASL_PLAINTEXT")
	root := client(t, addr, scram512("root", "root-secret"), nil)
	admin := newCLIAdmin(t, addr, "root", "root-secret")
	cfg := cliConfig(t, "root", "root-secret")
	configsCmd := func(args ...string) clikittest.Result {
		return clikittest.Run(configs.NewCommand(), append([]string{"--bootstrap-server", addr, "--command-config", cfg}, args...)...)
	}
	configsCmd("--alter", "--entity-type", "users", "--entity-name", "carol",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-secret]").
		Expect(t, 0, "Completed updating config for user carol.\n", "")
	configsCmd("--describe", "--entity-type", "users", "--entity-name", "carol").
		Expect(t, 0, "SCRAM credential configs for user-principal 'carol' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n", "")
	var out strings.Builder
	ctx := context.Background()
	authOK := func(addr string, m string) error {
		var mech = scram256("carol", "carol-secret")
		if m == "512" {
			mech = scram512("carol", "carol-secret")
		}
		cl := client(t, addr, mech, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
		if err == nil {
			_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		}
		return err
	}
	if err := authOK(addr, "256"); err != nil {
		t.Fatalf("carol SCRAM-SHA-256: %v", err)
	}
	if err := configs.AlterUsers(ctx, admin, &out, []string{"carol"}, "", []string{"SCRAM-SHA-512"}); err != nil {
		t.Fatal(err)
	}
	if err := authOK(addr, "512"); !isErr(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("deleted SCRAM-SHA-512 credential: %v", err)
	}
	if err := configs.AlterUsers(ctx, admin, &out, []string{"carol"}, "", []string{"SCRAM-SHA-512"}); err == nil || !strings.Contains(err.Error(), "RESOURCE_NOT_FOUND") {
		t.Fatalf("deleting a missing credential: %v", err)
	}
	if err := configs.AlterUsers(ctx, admin, &out, []string{"carol"}, "SCRAM-SHA-256=[iterations=100,password=x]", nil); err == nil || !strings.Contains(err.Error(), "Too few iterations") {
		t.Fatalf("100 iterations: %v", err)
	}
	if _, err := kmsgACL("User:carol", "kept").RequestWith(ctx, root); err != nil {
		t.Fatal(err)
	}
	nb := b.Restart()
	addr = nb.ListenerAddr("SASL_PLAINTEXT")
	if err := authOK(addr, "256"); err != nil {
		t.Fatalf("carol after restart: %v", err)
	}
	if n := nb.Authorizer().Count(); n != 1 {
		t.Fatalf("%d ACLs after restart, want 1", n)
	}
}

func kmsgACL(principal, topic string) *kmsg.CreateACLsRequest {
	req := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, topic, kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	req.Creations = append(req.Creations, c)
	return req
}

// cliConfig writes a --command-config for user over SASL_PLAINTEXT with SCRAM-SHA-512.
func cliConfig(t *testing.T, user, pass string) string {
	p := filepath.Join(t.TempDir(), "c.properties")
	os.WriteFile(p, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="`+user+`" password="`+pass+`";`+"\n"), 0o600)
	return p
}

func newCLIAdmin(t *testing.T, addr, user, pass string) *clikit.Admin {
	t.Helper()
	adm, err := clikit.NewAdmin(clikit.ConnFlags{Bootstrap: addr, CommandConfig: cliConfig(t, user, pass), TimeoutMs: 10000}, "muster-configs", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(adm.Close)
	return adm
}

func storageCommand() *cobraCommand { return storage.NewCommand() }
