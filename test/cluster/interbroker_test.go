package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/security/securitytest"
)

// saslJAAS is the PLAIN login module of the SASL_PLAINTEXT listener: the users it accepts, and
// the username and password the node itself authenticates to other nodes with.
const saslJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";`

// saslNode prepares a `muster serve` node whose only listener is SASL_PLAINTEXT (PLAIN) with
// the standard authorizer; nodes reach each other on it as User:broker.
func saslNode(t *testing.T, url string, id int32, extra ...string) *node {
	return secureNode(t, url, id, "SASL_PLAINTEXT", nil, extra...)
}

// secureNode is saslNode on a listener of protocol SASL_PLAINTEXT or SASL_SSL (with a server
// certificate of pki, which nodes verify with ssl.truststore.location).
func secureNode(t *testing.T, url string, id int32, protocol string, pki *securitytest.PKI, extra ...string) *node {
	n := newNode(t, url, id)
	l := strings.ToLower(protocol)
	n.extra = []string{"listeners=" + protocol + "://" + n.addr, "inter.broker.listener.name=" + protocol,
		"sasl.enabled.mechanisms=PLAIN", "sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name." + l + ".plain.sasl.jaas.config=" + saslJAAS,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users=User:broker",
		"transaction.state.log.num.partitions=8", "cluster.lease.ttl.ms=2000"}
	if pki != nil {
		n.extra = append(n.extra, "ssl.keystore.type=PEM", "ssl.keystore.location="+pki.Combined(pki.Server("node"), "node-keystore.pem"),
			"ssl.truststore.type=PEM", "ssl.truststore.location="+pki.CAFile)
	}
	n.extra = append(n.extra, extra...)
	return n
}

func userOpt(user, pass string) kgo.Opt {
	return kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism())
}

// TestClusterTransactionsInterBrokerSASL: two nodes whose one listener is SASL_PLAINTEXT (or
// SASL_SSL: nodes verify each other's certificate and host name) with an authorizer and
// inter.broker.listener.name pointing at it. The client, User:alice, may use the topics, groups
// and transactional ids but has no CLUSTER_ACTION; the nodes send each other WriteTxnMarkers
// and AddPartitionsToTxn VerifyOnly as User:broker (a super user). An exactly-once copy with
// franz-go's GroupTransactSession over both nodes completes: every input record is in the
// output exactly once for a read_committed reader.
func TestClusterTransactionsInterBrokerSASL(t *testing.T) {
	for _, protocol := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		t.Run(protocol, func(t *testing.T) {
			var pki *securitytest.PKI
			var tlsOpts []kgo.Opt
			if protocol == "SASL_SSL" {
				pki = securitytest.NewPKI(t)
				tlsOpts = []kgo.Opt{kgo.DialTLSConfig(pki.ClientTLS())}
			}
			url := pgtest.NewDatabase(t)
			copyAcrossNodes(t, []*node{secureNode(t, url, 1, protocol, pki), secureNode(t, url, 2, protocol, pki)}, tlsOpts)
		})
	}
}

func copyAcrossNodes(t *testing.T, ns []*node, tlsOpts []kgo.Opt) {
	var sd []string
	for _, n := range ns {
		n.start()
		sd = append(sd, n.addr)
	}
	for _, n := range ns {
		if out := n.out.String(); !strings.Contains(out, "inter-broker listener") || !strings.Contains(out, "user=broker") {
			t.Fatalf("node %d does not log its inter-broker listener and user:\n%s", n.id, out)
		}
	}
	opts := func(more ...kgo.Opt) []kgo.Opt { return append(append(clientOpts(sd), tlsOpts...), more...) }
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	admin, err := kgo.NewClient(opts(userOpt("broker", "broker-secret"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopics(ctx, 6, 1, nil, "in", "out"); err != nil {
		t.Fatal(err)
	}
	acl := kadm.NewACLs().Allow("User:alice").Topics("*").Groups("*").TransactionalIDs("*").
		Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := adm.CreateACLs(ctx, acl); err != nil {
		t.Fatal(err)
	} else {
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	alice := userOpt("alice", "alice-secret")
	aliceOpts := append(append([]kgo.Opt{}, tlsOpts...), alice)

	const n = 300
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, kgo.StringRecord(fmt.Sprintf("r-%d", i)))
	}
	// The ACLs reach the other node by a notification: until then it refuses alice (its
	// partitions, or IDEMPOTENT_WRITE on InitProducerId, which franz-go keeps as the client's
	// fatal error), and the records refused are produced again by a new client (only those:
	// each input record once).
	for len(recs) > 0 {
		prod, err := kgo.NewClient(opts(alice, kgo.DefaultProduceTopic("in"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))...)
		if err != nil {
			t.Fatal(err)
		}
		var failed []*kgo.Record
		var lastErr error
		results := prod.ProduceSync(ctx, recs...)
		prod.Close()
		for _, r := range results {
			if r.Err != nil {
				failed = append(failed, kgo.StringRecord(string(r.Record.Value)))
				lastErr = r.Err
			}
		}
		if len(failed) > 0 && ctx.Err() != nil {
			t.Fatalf("%d records not produced as alice: %v", len(failed), lastErr)
		}
		if recs = failed; len(recs) > 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}

	runCopiers(t, ctx, adm, sd, n, aliceOpts...)

	readOutExactlyOnce(t, ctx, n, opts(alice)...)
}

// TestClusterInterBrokerMechanismRefused: a cluster node whose inter-broker listener is SASL
// and whose sasl.mechanism.inter.broker.protocol is Kafka's default GSSAPI refuses to start,
// naming the key; so does one whose inter-broker listener is not among its listeners.
func TestClusterInterBrokerMechanismRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	cases := []struct {
		name  string
		extra []string
		want  string
	}{
		{"gssapi", []string{"sasl.mechanism.inter.broker.protocol=GSSAPI"}, "sasl.mechanism.inter.broker.protocol=GSSAPI"},
		{"not enabled", []string{"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512"}, "must be included in sasl.enabled.mechanisms"},
		{"no listener", []string{"inter.broker.listener.name=", "security.inter.broker.protocol=SSL"}, "inter-broker listener SSL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := saslNode(t, url, 7, c.extra...)
			args := []string{"serve", "--data-dir", n.dir, "--http-listen", n.http, "--store", url, "--override", "node.id=7"}
			for _, e := range n.extra {
				args = append(args, "--override", e)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, musterBin, args...).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("want a failed start, got %v:\n%s", err, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("want %q in the output:\n%s", c.want, out)
			}
		})
	}
}
