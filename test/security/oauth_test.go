package security

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/muster-io/muster/internal/testutil"
)

// TestOAuthBearerJWKS: with sasl.oauthbearer.jwks.endpoint.url, tokens signed by a key of the
// set authenticate (the principal is the sub claim); an expired token, a token for another
// audience, one signed by another key and an unsecured token fail with
// SASL_AUTHENTICATION_FAILED.
func TestOAuthBearerJWKS(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	b64 := base64.RawURLEncoding
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64.EncodeToString(key.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	os.WriteFile(path, jwks, 0o600)
	b := testutil.Start(t, "listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=OAUTHBEARER",
		"sasl.oauthbearer.jwks.endpoint.url=file://"+path, "sasl.oauthbearer.expected.audience=muster",
		"sasl.oauthbearer.expected.issuer=https://idp.test", "connection.failed.authentication.delay.ms=0")
	addr := b.ListenerAddr("SASL_PLAINTEXT")
	sign := func(k *rsa.PrivateKey, claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := jwt.MapClaims{"sub": "svc-orders", "aud": "muster", "iss": "https://idp.test", "exp": time.Now().Add(time.Hour).Unix()}
	try := func(token string) error {
		cl := client(t, addr, oauth.Auth{Token: token}.AsMechanism(), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		return err
	}
	if err := try(sign(key, good)); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	expired := jwt.MapClaims{"sub": "svc", "aud": "muster", "iss": "https://idp.test", "exp": time.Now().Add(-time.Hour).Unix()}
	wrongAud := jwt.MapClaims{"sub": "svc", "aud": "other", "iss": "https://idp.test", "exp": time.Now().Add(time.Hour).Unix()}
	for name, tok := range map[string]string{
		"expired": sign(key, expired), "audience": sign(key, wrongAud), "other key": sign(other, good),
		"unsecured": unsecuredJWT("svc", time.Hour),
	} {
		if err := try(tok); err == nil || (!isErr(err, kerr.SaslAuthenticationFailed) && !contains(err.Error(), "invalid_token")) {
			t.Fatalf("%s token: %v, want an authentication failure", name, err)
		}
	}
}
