package security

import (
	"context"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// unsecuredJWT is an unsecured JWS (alg none) for sub, valid for ttl.
func unsecuredJWT(sub string, ttl time.Duration) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]any{"sub": sub, "exp": time.Now().Add(ttl).Unix(), "iat": time.Now().Unix()}) + "."
}

// TestFranzGoMechanisms: franz-go authenticates with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
// OAUTHBEARER on SASL_PLAINTEXT, with SCRAM and PLAIN on SASL_SSL, over TLS without a client
// certificate, and over mutual TLS with the certificate's RFC 2253 subject as principal; each
// session's principal is what the ACLs see (alice may use topic sec-<case>, nobody else), and
// Metadata names the listener the client came in on.
func TestFranzGoMechanisms(t *testing.T) {
	sb := startSecure(t)
	mtls := sb.PKI.Client("carol", pkix.RDNSequence{
		{{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "example"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "muster"}},
		{{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, Value: "c1"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "carol"}},
	})
	cases := []struct {
		name, addr, principal string
		mech                  sasl.Mechanism
		tls                   bool
		certs                 []*x509Pair
	}{
		{"plain", sb.SASLPlaintext, "User:alice", plainAuth("alice", "alice-secret"), false, nil},
		{"scram256", sb.SASLPlaintext, "User:alice", scram256("alice", "alice-secret"), false, nil},
		{"scram512", sb.SASLPlaintext, "User:alice", scram512("alice", "alice-secret"), false, nil},
		{"oauth", sb.SASLPlaintext, "User:alice", oauth.Auth{Token: unsecuredJWT("alice", time.Hour)}.AsMechanism(), false, nil},
		{"saslssl-scram", sb.SASLSSL, "User:alice", scram512("alice", "alice-secret"), true, nil},
		{"saslssl-plain", sb.SASLSSL, "User:alice", plainAuth("alice", "alice-secret"), true, nil},
		{"tls", sb.SSL, "User:ANONYMOUS", nil, true, nil},
		{"mtls", sb.SSL, "User:CN=carol,UID=c1,O=muster,DC=example", nil, true, []*x509Pair{mtls}},
	}
	sb.createTopic(t, "sec-hidden", 1)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := "sec-" + c.name
			sb.createTopic(t, topic, 1)
			sb.allow(t, kadm.NewACLs().Allow(c.principal).Topics(topic).Operations(kadm.OpWrite, kadm.OpRead))
			var tc = sb.PKI.ClientTLS(c.certs...)
			if !c.tls {
				tc = nil
			}
			cl := client(t, c.addr, c.mech, tc)
			produceConsume(t, cl, topic, "hello "+c.name)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			host, port, _ := net.SplitHostPort(c.addr)
			if len(md.Brokers) != 1 || md.Brokers[0].Host != host || strconv.Itoa(int(md.Brokers[0].Port)) != port {
				t.Fatalf("Metadata brokers %+v, want this listener %s", md.Brokers, c.addr)
			}
			seen := false
			for _, mt := range md.Topics {
				if mt.Topic != nil && *mt.Topic == "sec-hidden" {
					t.Fatalf("all-topics Metadata shows sec-hidden, which %s may not describe", c.principal)
				}
				seen = seen || (mt.Topic != nil && *mt.Topic == topic)
			}
			if !seen {
				t.Fatalf("all-topics Metadata lacks %s", topic)
			}
		})
	}
}

// TestFranzGoHandshakeV0: with SaslHandshake capped at v0, franz-go sends raw SASL tokens
// (no SaslAuthenticate) for PLAIN and SCRAM.
func TestFranzGoHandshakeV0(t *testing.T) {
	sb := startSecure(t)
	sb.createTopic(t, "v0", 1)
	sb.allow(t, kadm.NewACLs().Allow("User:alice").Topics("v0").Operations(kadm.OpWrite, kadm.OpRead))
	v := kversion.Stable()
	v.SetMaxKeyVersion(17, 0)
	for i, m := range []sasl.Mechanism{plainAuth("alice", "alice-secret"), scram256("alice", "alice-secret"), scram512("alice", "alice-secret")} {
		cl := client(t, sb.SASLPlaintext, m, nil, kgo.MaxVersions(v))
		produceConsume(t, cl, "v0", fmt.Sprintf("v0-%d", i))
	}
}
