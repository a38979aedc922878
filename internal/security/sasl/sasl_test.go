package sasl

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/security"
)

func TestParseJAAS(t *testing.T) {
	j, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
	  username="admin" password="admin-secret"
	  user_admin="admin-secret" user_alice="al\"ice" bare=word;`)
	if err != nil {
		t.Fatal(err)
	}
	users := j.PlainUsers()
	if j.Flag != "required" || users["admin"] != "admin-secret" || users["alice"] != `al"ice` || len(users) != 2 || j.Options["bare"] != "word" {
		t.Fatalf("%+v", j)
	}
	for _, bad := range []string{"", "X", "X required a=\"b\"", "X maybe;", `X required a="b`, "X required a=b; Y required;"} {
		if _, err := ParseJAAS(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestPlainMessages(t *testing.T) {
	m := NewPlain(map[string]string{"alice": "pw"})
	for in, want := range map[string]string{
		"\x00alice\x00wrong":     "Authentication failed: Invalid username or password",
		"\x00bob\x00pw":          "Authentication failed: Invalid username or password",
		"\x00\x00pw":             "Authentication failed: username not specified",
		"\x00alice\x00":          "Authentication failed: password not specified",
		"bob\x00alice\x00pw":     "Authentication failed: Client requested an authorization id that is different from username",
		"alice":                  "Invalid SASL/PLAIN response: expected 3 tokens, got 1",
		"\x00alice\x00pw\x00one": "Invalid SASL/PLAIN response: expected 3 tokens, got 4",
	} {
		_, _, err := m.Start().Step([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	c := m.Start()
	if _, done, err := c.Step([]byte("alice\x00alice\x00pw")); !done || err != nil || c.AuthorizationID() != "alice" {
		t.Fatalf("good PLAIN: %v %v", done, err)
	}
}

func TestOAuthUnsecured(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := NewOAuthBearer(OAuthConfig{Now: func() time.Time { return now }})
	tok := func(claims map[string]any) string {
		h, _ := json.Marshal(map[string]string{"alg": "none"})
		c, _ := json.Marshal(claims)
		return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c) + "."
	}
	msg := func(token string) []byte { return []byte("n,,\x01auth=Bearer " + token + "\x01\x01") }
	c := m.Start()
	if _, done, err := c.Step(msg(tok(map[string]any{"sub": "svc", "exp": now.Add(time.Hour).Unix()}))); !done || err != nil || c.AuthorizationID() != "svc" {
		t.Fatalf("valid token: %v %v", done, err)
	}
	if !c.Expiry().Equal(now.Add(time.Hour)) {
		t.Fatalf("expiry %v", c.Expiry())
	}
	c = m.Start()
	out, done, err := c.Step(msg(tok(map[string]any{"sub": "svc", "exp": now.Add(-time.Hour).Unix()})))
	if done || err != nil || string(out) != `{"status":"invalid_token"}` {
		t.Fatalf("expired token: %q %v %v", out, done, err)
	}
	if _, _, err := c.Step([]byte{1}); err == nil {
		t.Fatal("the client's answer to the error challenge must fail the exchange")
	}
	for _, bad := range []string{"", "n,,", "y,,\x01auth=Bearer x\x01\x01", "n,,\x01auth=Basic x\x01\x01", "n,,\x01auth=Bearer a.b.c\x01\x01"} {
		out, done, err := m.Start().Step([]byte(bad))
		if done || (err == nil && string(out) != `{"status":"invalid_token"}`) {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// FuzzConversations: arbitrary client tokens never panic and never authenticate.
func FuzzConversations(f *testing.F) {
	creds, _ := security.NewScramCredentials(&security.MemoryStore{})
	c, _ := security.NewScramCredential("alice", security.ScramSHA256, "pw", 4096)
	creds.Upsert(c)
	mechs := []Mechanism{NewPlain(map[string]string{"alice": "correct horse battery staple 42"}), NewScram(security.ScramSHA256, creds), NewOAuthBearer(OAuthConfig{})}
	f.Add(uint8(0), []byte("\x00alice\x00nope"), []byte{})
	f.Add(uint8(1), []byte("n,,n=alice,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Add(uint8(2), []byte("n,,\x01auth=Bearer x.y.\x01\x01"), []byte{1})
	f.Fuzz(func(t *testing.T, which uint8, first, second []byte) {
		conv := mechs[int(which)%len(mechs)].Start()
		_, done, err := conv.Step(first)
		if done && err == nil {
			t.Fatalf("authenticated from %q", first)
		}
		if err == nil {
			if _, done, err := conv.Step(second); done && err == nil {
				t.Fatalf("authenticated from %q, %q", first, second)
			}
		}
	})
}
