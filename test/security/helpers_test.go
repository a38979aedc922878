// Package security tests muster's listeners, TLS, SASL and ACL authorization end to end, with
// real clients (franz-go, sarama, kafka-go, confluent-kafka-go, kcat) over loopback and TLS
// material generated at test time.
package security

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/muster-io/muster/internal/security/securitytest"
	"github.com/muster-io/muster/internal/testutil"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";`

// secBroker is a broker with four listeners (PLAINTEXT, SASL_PLAINTEXT, SSL with client
// certificates requested, SASL_SSL), PLAIN users admin/alice/bob, SCRAM users alice and bob
// (both mechanisms, password <user>-secret), the StandardAuthorizer and User:admin as super user.
type secBroker struct {
	*testutil.Broker
	PKI    *securitytest.PKI
	Server *securitytest.Pair
	// Addresses per listener.
	Plaintext, SASLPlaintext, SSL, SASLSSL string
}

func startSecure(t testing.TB, extra ...string) *secBroker {
	t.Helper()
	pki := securitytest.NewPKI(t)
	srv := pki.Server("server")
	overrides := append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config=" + plainJAAS,
		"listener.name.sasl_ssl.plain.sasl.jaas.config=" + plainJAAS,
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + pki.Combined(srv, "keystore.pem"),
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + pki.CAFile,
		"listener.name.ssl.ssl.client.auth=requested",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin",
		"connection.failed.authentication.delay.ms=0",
	}, extra...)
	b := testutil.Start(t, overrides...)
	sb := &secBroker{Broker: b, PKI: pki, Server: srv,
		Plaintext: b.ListenerAddr("PLAINTEXT"), SASLPlaintext: b.ListenerAddr("SASL_PLAINTEXT"),
		SSL: b.ListenerAddr("SSL"), SASLSSL: b.ListenerAddr("SASL_SSL")}
	adm := sb.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ups []kadm.UpsertSCRAM
	for _, u := range []string{"alice", "bob"} {
		ups = append(ups, kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: u + "-secret"},
			kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha512, Iterations: 8192, Password: u + "-secret"})
	}
	res, err := adm.AlterUserSCRAMs(ctx, nil, ups)
	if err != nil {
		t.Fatalf("creating SCRAM users: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("creating SCRAM user %s: %v", r.User, r.Err)
		}
	}
	return sb
}

func plainAuth(user, pass string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: pass}.AsMechanism()
}
func scram256(user, pass string) sasl.Mechanism {
	return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
}
func scram512(user, pass string) sasl.Mechanism {
	return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
}

// client is a franz-go client on addr; with a mechanism it authenticates, with tlsCfg it dials TLS.
func client(t testing.TB, addr string, m sasl.Mechanism, tlsCfg *tls.Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := []kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(1), kgo.RetryTimeout(5 * time.Second), kgo.MetadataMinAge(100 * time.Millisecond)}
	if m != nil {
		all = append(all, kgo.SASL(m))
	}
	if tlsCfg != nil {
		all = append(all, kgo.DialTLSConfig(tlsCfg))
	}
	cl, err := kgo.NewClient(append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// admin is a kadm client for the super user (PLAIN over SASL_PLAINTEXT).
func (sb *secBroker) admin(t testing.TB) *kadm.Client {
	return kadm.NewClient(client(t, sb.SASLPlaintext, plainAuth("admin", "admin-secret"), nil))
}

// allow grants principal the operations on a resource (LITERAL unless prefixed).
func (sb *secBroker) allow(t testing.TB, b *kadm.ACLBuilder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := sb.admin(t).CreateACLs(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create ACL: %v", r.Err)
		}
	}
}

// createTopic creates a topic as the super user.
func (sb *secBroker) createTopic(t testing.TB, name string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := sb.admin(t).CreateTopics(ctx, partitions, 1, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[name]; r.Err != nil {
		t.Fatalf("create topic %s: %v", name, r.Err)
	}
}

// produceConsume produces one record to topic and reads it back (the topic exists).
func produceConsume(t testing.TB, cl *kgo.Client, topic, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	cl.AddConsumeTopics(topic)
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: no record %q", topic, value)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("consume %s: %v", topic, e.Err)
		}
		found := false
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == value {
				found = true
			}
		})
		if found {
			return
		}
	}
}

func isErr(err, want error) bool { return errors.Is(err, want) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
