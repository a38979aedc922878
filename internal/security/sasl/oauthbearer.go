package sasl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// OAuthConfig is the OAUTHBEARER validation of a listener (Kafka's sasl.oauthbearer.* keys).
type OAuthConfig struct {
	// JWKS validates signed tokens; nil accepts unsecured tokens (alg "none"), as Kafka's default
	// OAuthBearerUnsecuredValidatorCallbackHandler does: for development only.
	JWKS *JWKS
	// ExpectedAudience, if set, must intersect the token's aud.
	ExpectedAudience []string
	// ExpectedIssuer, if set, must equal the token's iss.
	ExpectedIssuer string
	// SubClaim names the claim holding the principal (sasl.oauthbearer.sub.claim.name, "sub").
	SubClaim string
	// ClockSkew is the allowed skew on exp, nbf and iat.
	ClockSkew time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// OAuthBearerMechanism is SASL/OAUTHBEARER (RFC 7628) with Kafka's server behaviour: a token that
// does not validate is answered with an error challenge ({"status":"invalid_token"}); the
// client's reply to it ends the exchange with a failure.
type OAuthBearerMechanism struct{ cfg OAuthConfig }

// NewOAuthBearer returns the mechanism.
func NewOAuthBearer(cfg OAuthConfig) *OAuthBearerMechanism {
	if cfg.SubClaim == "" {
		cfg.SubClaim = "sub"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &OAuthBearerMechanism{cfg: cfg}
}

// Name implements Mechanism.
func (*OAuthBearerMechanism) Name() string { return OAuthBearer }

// Start implements Mechanism.
func (m *OAuthBearerMechanism) Start() Conversation { return &oauthConv{m: m} }

type oauthConv struct {
	m       *OAuthBearerMechanism
	user    string
	expiry  time.Time
	failure string // set after an error challenge was sent
	done    bool
}

func (c *oauthConv) AuthorizationID() string { return c.user }
func (c *oauthConv) Expiry() time.Time       { return c.expiry }

func (c *oauthConv) Step(in []byte) ([]byte, bool, error) {
	if c.failure != "" {
		// The client's answer to the error challenge (a single 0x01): the exchange fails.
		return nil, false, &AuthError{c.failure}
	}
	if c.done {
		return nil, false, &AuthError{"Authentication failed: OAUTHBEARER exchange already complete"}
	}
	authz, token, err := parseClientInitial(in)
	if err != nil {
		return nil, false, &AuthError{"Authentication failed: " + err.Error()}
	}
	sub, exp, err := c.m.validate(token)
	if err != nil {
		c.failure = "Authentication failed: " + err.Error()
		return []byte(`{"status":"invalid_token"}`), false, nil
	}
	if authz != "" && authz != sub {
		return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from the token's principal"}
	}
	c.user, c.expiry, c.done = sub, exp, true
	return nil, true, nil
}

// parseClientInitial reads "n,[a=authzid],\x01auth=Bearer <token>\x01[key=value\x01]*\x01".
func parseClientInitial(in []byte) (authz, token string, err error) {
	gs2, rest, ok := bytes.Cut(in, []byte{0x01})
	if !ok {
		return "", "", fmt.Errorf("invalid OAUTHBEARER initial response")
	}
	h := string(gs2)
	if !strings.HasPrefix(h, "n,") || !strings.HasSuffix(h, ",") {
		return "", "", fmt.Errorf("invalid OAUTHBEARER GS2 header (channel binding is not supported)")
	}
	if a := strings.TrimSuffix(h[2:], ","); a != "" {
		v, ok := strings.CutPrefix(a, "a=")
		if !ok {
			return "", "", fmt.Errorf("invalid OAUTHBEARER authorization id")
		}
		authz = strings.NewReplacer("=2C", ",", "=3D", "=").Replace(v)
	}
	if !bytes.HasSuffix(rest, []byte{0x01}) {
		return "", "", fmt.Errorf("invalid OAUTHBEARER initial response: missing terminator")
	}
	for _, kv := range bytes.Split(rest[:len(rest)-1], []byte{0x01}) {
		if len(kv) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(kv, []byte{'='})
		if !ok {
			return "", "", fmt.Errorf("invalid OAUTHBEARER key/value pair")
		}
		if string(k) == "auth" {
			scheme, tok, ok := strings.Cut(string(v), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
				return "", "", fmt.Errorf("invalid OAUTHBEARER auth value (want Bearer <token>)")
			}
			token = strings.TrimSpace(tok)
		}
	}
	if token == "" {
		return "", "", fmt.Errorf("OAUTHBEARER initial response has no token")
	}
	return authz, token, nil
}

// validate checks a token and returns its principal and expiry.
func (m *OAuthBearerMechanism) validate(token string) (string, time.Time, error) {
	if m.cfg.JWKS == nil {
		return m.validateUnsecured(token)
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}),
		jwt.WithExpirationRequired(), jwt.WithLeeway(m.cfg.ClockSkew), jwt.WithTimeFunc(m.cfg.Now),
	}
	if m.cfg.ExpectedIssuer != "" {
		opts = append(opts, jwt.WithIssuer(m.cfg.ExpectedIssuer))
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, m.cfg.JWKS.keyFunc, opts...)
	if err != nil {
		return "", time.Time{}, err
	}
	return m.checkClaims(claims)
}

// validateUnsecured accepts an unsecured JWS (header alg "none", empty signature), as Kafka's
// OAuthBearerUnsecuredJws does, and checks exp and the principal claim.
func (m *OAuthBearerMechanism) validateUnsecured(token string) (string, time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] != "" {
		return "", time.Time{}, fmt.Errorf("an unsecured JWS has three parts and an empty signature")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil || header.Alg != "none" {
		return "", time.Time{}, fmt.Errorf("unsecured JWS header must have alg \"none\"")
	}
	claims := jwt.MapClaims{}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return "", time.Time{}, fmt.Errorf("unsecured JWS claims: %v", err)
	}
	if _, err := claims.GetExpirationTime(); err != nil {
		return "", time.Time{}, err
	}
	return m.checkClaims(claims)
}

func (m *OAuthBearerMechanism) checkClaims(claims jwt.MapClaims) (string, time.Time, error) {
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return "", time.Time{}, fmt.Errorf("token has no exp claim")
	}
	now := m.cfg.Now()
	if now.After(exp.Add(m.cfg.ClockSkew)) {
		return "", time.Time{}, fmt.Errorf("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if len(m.cfg.ExpectedAudience) > 0 {
		aud, _ := claims.GetAudience()
		if !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(m.cfg.ExpectedAudience, a) }) {
			return "", time.Time{}, fmt.Errorf("token audience %v is not expected", []string(aud))
		}
	}
	if m.cfg.ExpectedIssuer != "" {
		if iss, _ := claims.GetIssuer(); iss != m.cfg.ExpectedIssuer {
			return "", time.Time{}, fmt.Errorf("token issuer %q is not expected", iss)
		}
	}
	sub, _ := claims[m.cfg.SubClaim].(string)
	if strings.TrimSpace(sub) == "" {
		return "", time.Time{}, fmt.Errorf("token has no %q claim", m.cfg.SubClaim)
	}
	return sub, exp.Time, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
