package security

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metric reads one sample of the broker's /metrics (0 when absent).
func (sb *secBroker) metric(t *testing.T, pattern string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + sb.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile("(?m)^" + pattern + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestReauthentication: with connections.max.reauth.ms, SaslAuthenticate v1+ answers the
// session lifetime; franz-go re-authenticates on the same connection (KIP-368) and keeps
// producing; a raw client that lets its session expire is closed at its next request.
func TestReauthentication(t *testing.T) {
	sb := startSecure(t, "connections.max.reauth.ms=2500")
	sb.createTopic(t, "reauth", 1)
	sb.allow(t, kadm.NewACLs().Allow("User:alice").Topics("reauth").Operations(kadm.OpWrite, kadm.OpRead))

	r := authedRaw(t, sb, "alice")
	r.mustDo(metadataReq())
	time.Sleep(2700 * time.Millisecond)
	if _, err := r.do(metadataReq()); err == nil {
		t.Fatal("a request after the session expired was answered")
	}

	r2 := dialRaw(t, sb.SASLPlaintext, nil)
	r2.mustDo(handshake(1, "PLAIN"))
	resp := r2.mustDo(authenticate(1, []byte("\x00alice\x00alice-secret"))).(*kmsg.SASLAuthenticateResponse)
	if resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 2500 {
		t.Fatalf("session lifetime %d ms, want (0, 2500]", resp.SessionLifetimeMillis)
	}

	cl := client(t, sb.SASLPlaintext, scram256("alice", "alice-secret"), nil, kgo.DisableIdempotentWrite())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; i < 8; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("produce %d across re-authentications: %v", i, err)
		}
		time.Sleep(700 * time.Millisecond)
	}
	if n := sb.metric(t, `muster_authentications_total\{listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-256",reauthentication="true",result="success"\}`); n < 1 {
		t.Fatalf("no successful re-authentication counted (%v)", n)
	}
}

// TestSecurityMetrics: failed and successful authentications are counted per listener and
// mechanism, authorization denials per resource type.
func TestSecurityMetrics(t *testing.T) {
	sb := startSecure(t)
	cl := client(t, sb.SASLPlaintext, plainAuth("alice", "wrong"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	r := authedRaw(t, sb, "bob")
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "secret"
	rt.Partitions = append(rt.Partitions, kmsg.NewListOffsetsRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	r.mustDo(req)
	if n := sb.metric(t, `muster_authentications_total\{listener="SASL_PLAINTEXT",mechanism="PLAIN",reauthentication="false",result="failure"\}`); n < 1 {
		t.Fatalf("failed PLAIN authentications: %v", n)
	}
	if n := sb.metric(t, `muster_authentications_total\{listener="SASL_PLAINTEXT",mechanism="PLAIN",reauthentication="false",result="success"\}`); n < 2 {
		t.Fatalf("successful PLAIN authentications: %v", n)
	}
	if n := sb.metric(t, `muster_authorization_denials_total\{resource_type="topic"\}`); n < 1 {
		t.Fatalf("topic denials: %v", n)
	}
}
