package sasl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWKS is the key set of sasl.oauthbearer.jwks.endpoint.url (https://, http:// or file://),
// fetched on first use, again after the refresh interval, and at most once a second when a token
// names an unknown key id (a rotated key).
type JWKS struct {
	url     string
	refresh time.Duration
	client  *http.Client

	mu      sync.Mutex
	keys    map[string]any
	fetched time.Time
	lastTry time.Time
}

// NewJWKS returns the key set at u; nothing is fetched yet.
func NewJWKS(u string, refresh time.Duration) (*JWKS, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http" && p.Scheme != "file") {
		return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url=%q: want an https://, http:// or file:// URL", u)
	}
	if refresh <= 0 {
		refresh = time.Hour
	}
	return &JWKS{url: u, refresh: refresh, client: &http.Client{Timeout: 10 * time.Second}}, nil
}

func (j *JWKS) keyFunc(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	j.mu.Lock()
	defer j.mu.Unlock()
	now := time.Now()
	stale := j.keys == nil || now.Sub(j.fetched) > j.refresh
	_, known := j.keys[kid]
	if (stale || !known) && now.Sub(j.lastTry) > time.Second {
		j.lastTry = now
		if keys, err := j.fetch(); err == nil {
			j.keys, j.fetched = keys, now
		} else if j.keys == nil {
			return nil, fmt.Errorf("fetching the JWKS: %v", err)
		}
	}
	if k, ok := j.keys[kid]; ok {
		return k, nil
	}
	if kid == "" && len(j.keys) == 1 {
		for _, k := range j.keys {
			return k, nil
		}
	}
	return nil, fmt.Errorf("no JWKS key with kid %q", kid)
}

func (j *JWKS) fetch() (map[string]any, error) {
	var data []byte
	p, _ := url.Parse(j.url)
	if p.Scheme == "file" {
		b, err := os.ReadFile(p.Path)
		if err != nil {
			return nil, err
		}
		data = b
	} else {
		resp, err := j.client.Get(j.url)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("HTTP %s", resp.Status)
		}
		if data, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20)); err != nil {
			return nil, err
		}
	}
	return ParseJWKS(data)
}

// ParseJWKS reads a JSON Web Key Set (RFC 7517): RSA and EC (P-256, P-384, P-521) public keys,
// by key id.
func ParseJWKS(data []byte) (map[string]any, error) {
	var set struct {
		Keys []struct {
			Kty, Kid, Use, Crv, N, E, X, Y string
		} `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	out := map[string]any{}
	b64 := base64.RawURLEncoding
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch k.Kty {
		case "RSA":
			n, err1 := b64.DecodeString(k.N)
			e, err2 := b64.DecodeString(k.E)
			if err1 != nil || err2 != nil || len(e) > 4 {
				return nil, fmt.Errorf("JWKS: bad RSA key %q", k.Kid)
			}
			out[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		case "EC":
			var c elliptic.Curve
			switch k.Crv {
			case "P-256":
				c = elliptic.P256()
			case "P-384":
				c = elliptic.P384()
			case "P-521":
				c = elliptic.P521()
			default:
				continue
			}
			x, err1 := b64.DecodeString(k.X)
			y, err2 := b64.DecodeString(k.Y)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("JWKS: bad EC key %q", k.Kid)
			}
			out[k.Kid] = &ecdsa.PublicKey{Curve: c, X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("JWKS has no usable signing key")
	}
	return out, nil
}
