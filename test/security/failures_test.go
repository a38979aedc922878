package security

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"
)

// stillServes proves the broker keeps serving others: alice authenticates and lists metadata.
func stillServes(t *testing.T, sb *secBroker) {
	t.Helper()
	cl := client(t, sb.SASLPlaintext, scram256("alice", "alice-secret"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err != nil {
		t.Fatalf("the broker stopped serving: %v", err)
	}
}

// TestAuthenticationFailures: a wrong password, an unknown user, an unknown mechanism and a
// plaintext client on a TLS port each fail as Kafka fails them: SASL_AUTHENTICATION_FAILED with
// Kafka's message (PLAIN names the reason, SCRAM does not reveal whether the user exists), then
// the connection closes; UNSUPPORTED_SASL_MECHANISM with the enabled list, then close; the TLS
// handshake fails. The broker keeps serving others.
func TestAuthenticationFailures(t *testing.T) {
	sb := startSecure(t)
	authFail := func(t *testing.T, mech string, tokens ...[]byte) *kmsg.SASLAuthenticateResponse {
		t.Helper()
		r := dialRaw(t, sb.SASLPlaintext, nil)
		hs := r.mustDo(handshake(1, mech)).(*kmsg.SASLHandshakeResponse)
		if hs.ErrorCode != 0 {
			t.Fatalf("handshake: %v", kerr.ErrorForCode(hs.ErrorCode))
		}
		var resp *kmsg.SASLAuthenticateResponse
		for _, tok := range tokens {
			resp = r.mustDo(authenticate(2, tok)).(*kmsg.SASLAuthenticateResponse)
			if resp.ErrorCode != 0 {
				break
			}
		}
		if !r.closed(5 * time.Second) {
			t.Fatal("connection not closed after a failed authentication")
		}
		return resp
	}
	t.Run("plain wrong password", func(t *testing.T) {
		resp := authFail(t, "PLAIN", []byte("\x00alice\x00nope"))
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != "Authentication failed: Invalid username or password" {
			t.Fatalf("got %d %v", resp.ErrorCode, resp.ErrorMessage)
		}
	})
	t.Run("plain unknown user", func(t *testing.T) {
		resp := authFail(t, "PLAIN", []byte("\x00mallory\x00alice-secret"))
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || *resp.ErrorMessage != "Authentication failed: Invalid username or password" {
			t.Fatalf("got %d %v", resp.ErrorCode, resp.ErrorMessage)
		}
	})
	scramFirst := func(user, pass string) (*scram.ClientConversation, string) {
		c, _ := scram.SHA256.NewClient(user, pass, "")
		conv := c.NewConversation()
		first, _ := conv.Step("")
		return conv, first
	}
	t.Run("scram wrong password", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "SCRAM-SHA-256"))
		conv, first := scramFirst("alice", "nope")
		sf := r.mustDo(authenticate(2, []byte(first))).(*kmsg.SASLAuthenticateResponse)
		final, _ := conv.Step(string(sf.SASLAuthBytes))
		resp := r.mustDo(authenticate(2, []byte(final))).(*kmsg.SASLAuthenticateResponse)
		want := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || *resp.ErrorMessage != want {
			t.Fatalf("got %d %v", resp.ErrorCode, resp.ErrorMessage)
		}
		if !r.closed(5 * time.Second) {
			t.Fatal("not closed")
		}
	})
	t.Run("scram unknown user", func(t *testing.T) {
		_, first := scramFirst("mallory", "x")
		resp := authFail(t, "SCRAM-SHA-256", []byte(first))
		want := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || *resp.ErrorMessage != want {
			t.Fatalf("got %d %v", resp.ErrorCode, resp.ErrorMessage)
		}
	})
	t.Run("franz-go wrong password", func(t *testing.T) {
		cl := client(t, sb.SASLPlaintext, scram512("alice", "wrong"), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if !isErr(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("err %v, want SASL_AUTHENTICATION_FAILED", err)
		}
	})
	t.Run("unknown mechanism", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		hs := r.mustDo(handshake(1, "GSSAPI")).(*kmsg.SASLHandshakeResponse)
		if hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER" {
			t.Fatalf("got %d %v", hs.ErrorCode, hs.SupportedMechanisms)
		}
		if !r.closed(5 * time.Second) {
			t.Fatal("not closed after UNSUPPORTED_SASL_MECHANISM")
		}
	})
	t.Run("plaintext to TLS", func(t *testing.T) {
		r := dialRaw(t, sb.SSL, nil)
		req := kmsg.NewPtrApiVersionsRequest()
		if _, err := r.do(req); err == nil {
			t.Fatal("a plaintext ApiVersions on the TLS listener was answered")
		}
		cl := client(t, sb.SSL, nil, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err == nil {
			t.Fatal("franz-go without TLS reached the TLS listener")
		}
	})
	t.Run("mTLS untrusted certificate", func(t *testing.T) {
		other := newOtherPKI(t)
		cl := client(t, sb.SSL, nil, sb.PKI.ClientTLSWith(other))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err == nil {
			t.Fatal("a certificate from another CA was accepted")
		}
	})
	stillServes(t, sb)
}

// TestPreAuthenticationGating: before authentication only ApiVersions (once, first) and
// SaslHandshake pass; anything else closes the connection without an answer. On a listener
// without SASL, SaslHandshake answers ILLEGAL_SASL_STATE and the connection stays open; after
// authentication SaslAuthenticate answers ILLEGAL_SASL_STATE.
func TestPreAuthenticationGating(t *testing.T) {
	sb := startSecure(t)
	t.Run("metadata first", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		if _, err := r.do(metadataReq()); err == nil {
			t.Fatal("Metadata answered before authentication")
		}
	})
	t.Run("apiversions then metadata", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		av := r.mustDo(kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
		keys := map[int16]bool{}
		for _, k := range av.ApiKeys {
			keys[k.ApiKey] = true
		}
		if !keys[17] || !keys[36] || !keys[3] {
			t.Fatalf("ApiVersions before authentication lacks keys: %v", keys)
		}
		if _, err := r.do(metadataReq()); err == nil {
			t.Fatal("Metadata answered before authentication")
		}
	})
	t.Run("second apiversions", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(kmsg.NewPtrApiVersionsRequest())
		if _, err := r.do(kmsg.NewPtrApiVersionsRequest()); err == nil {
			t.Fatal("a second ApiVersions was answered during the handshake")
		}
	})
	t.Run("handshake on plaintext listener", func(t *testing.T) {
		r := dialRaw(t, sb.Plaintext, nil)
		hs := r.mustDo(handshake(1, "PLAIN")).(*kmsg.SASLHandshakeResponse)
		if hs.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("got %v", kerr.ErrorForCode(hs.ErrorCode))
		}
		r.mustDo(metadataReq()) // still open
	})
	t.Run("authenticate after authentication", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "PLAIN"))
		if resp := r.mustDo(authenticate(1, []byte("\x00alice\x00alice-secret"))).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
			t.Fatalf("auth: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		r.mustDo(metadataReq())
		again := r.mustDo(authenticate(1, []byte("\x00alice\x00alice-secret"))).(*kmsg.SASLAuthenticateResponse)
		if again.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("got %v", kerr.ErrorForCode(again.ErrorCode))
		}
		hs := r.mustDo(handshake(1, "PLAIN")).(*kmsg.SASLHandshakeResponse)
		if hs.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("handshake after auth: %v", kerr.ErrorForCode(hs.ErrorCode))
		}
	})
	stillServes(t, sb)
}

// TestSASLBadInput: malformed SaslAuthenticate bodies, garbage instead of a request, SCRAM nonce
// tampering, an oversize token and a client that never finishes are each answered or closed,
// and the broker keeps serving.
func TestSASLBadInput(t *testing.T) {
	sb := startSecure(t, "connections.max.idle.ms=600", "sasl.server.max.receive.size=4096")
	t.Run("malformed authenticate body", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "PLAIN"))
		f := r.frame(authenticate(1, []byte("x")))
		binary.BigEndian.PutUint32(f[len(f)-5:], 0x7ffffff0) // the bytes length now lies
		r.write(f)
		if !r.closed(5 * time.Second) {
			t.Fatal("not closed")
		}
	})
	t.Run("garbage frame", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.write([]byte{0, 0, 0, 3, 1, 2, 3})
		if !r.closed(5 * time.Second) {
			t.Fatal("not closed")
		}
	})
	t.Run("plain token without separators", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "PLAIN"))
		resp := r.mustDo(authenticate(1, []byte("alice"))).(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || !strings.Contains(*resp.ErrorMessage, "expected 3 tokens") {
			t.Fatalf("got %d %v", resp.ErrorCode, resp.ErrorMessage)
		}
	})
	t.Run("scram garbage first message", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "SCRAM-SHA-512"))
		resp := r.mustDo(authenticate(1, []byte("p=tls-unique,,n=,r="))).(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("got %d", resp.ErrorCode)
		}
	})
	t.Run("scram nonce tampering", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "SCRAM-SHA-256"))
		c, _ := scram.SHA256.NewClient("alice", "alice-secret", "")
		conv := c.NewConversation()
		first, _ := conv.Step("")
		sf := r.mustDo(authenticate(1, []byte(first))).(*kmsg.SASLAuthenticateResponse)
		final, _ := conv.Step(string(sf.SASLAuthBytes))
		// Change the last character of the combined nonce (the server's part).
		i := strings.Index(final, ",p=")
		b := []byte(final)
		b[i-1] ^= 1
		resp := r.mustDo(authenticate(1, b)).(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("a tampered nonce authenticated: %d", resp.ErrorCode)
		}
		if !r.closed(5 * time.Second) {
			t.Fatal("not closed")
		}
	})
	t.Run("oversize token", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "PLAIN"))
		r.write(r.frame(authenticate(1, make([]byte, 8192))))
		if !r.closed(5 * time.Second) {
			t.Fatal("an oversize SASL frame did not close the connection")
		}
	})
	t.Run("oversize raw v0 token", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(0, "PLAIN"))
		r.write([]byte{0, 1, 0, 0}) // announces 65536 bytes
		if !r.closed(5 * time.Second) {
			t.Fatal("not closed")
		}
	})
	t.Run("never finishes", func(t *testing.T) {
		r := dialRaw(t, sb.SASLPlaintext, nil)
		r.mustDo(handshake(1, "SCRAM-SHA-256"))
		start := time.Now()
		if !r.closed(10 * time.Second) {
			t.Fatal("an unfinished handshake was never closed")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("closed after %v, want about connections.max.idle.ms", d)
		}
	})
	t.Run("tls never handshakes", func(t *testing.T) {
		r := dialRaw(t, sb.SASLSSL, nil)
		if !r.closed(10 * time.Second) {
			t.Fatal("a TLS connection without a handshake was never closed")
		}
	})
	stillServes(t, sb)
}

func newOtherPKI(t *testing.T) *x509Pair {
	return otherCA(t).ClientCN("intruder", "alice")
}

var _ = tls.VersionTLS12
