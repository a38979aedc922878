package sasl

import (
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/xdg-go/scram"

	"github.com/muster-io/muster/internal/security"
)

// ScramMechanism is SCRAM-SHA-256 or SCRAM-SHA-512 (RFC 5802, no channel binding) over the
// broker's stored credentials, with Kafka's ScramSaslServer rules: the authorization id is empty
// or the user name; an unknown user and a wrong proof fail alike; delegation-token extensions
// (tokenauth=true) are refused.
type ScramMechanism struct {
	mech   security.ScramMechanism
	creds  *security.ScramCredentials
	server *scram.Server
}

// NewScram returns the mechanism m over creds.
func NewScram(m security.ScramMechanism, creds *security.ScramCredentials) *ScramMechanism {
	hash := scram.SHA256
	if m == security.ScramSHA512 {
		hash = scram.SHA512
	}
	srv, _ := hash.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := creds.Lookup(user, m)
		if !ok || c.Iterations < security.ScramMinIterations {
			return scram.StoredCredentials{}, errUnknownUser
		}
		return scram.StoredCredentials{
			KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: int(c.Iterations)},
			StoredKey:  c.StoredKey, ServerKey: c.ServerKey,
		}, nil
	})
	return &ScramMechanism{mech: m, creds: creds, server: srv}
}

var errUnknownUser = errors.New("unknown user")

// Name implements Mechanism.
func (m *ScramMechanism) Name() string { return m.mech.String() }

// Start implements Mechanism.
func (m *ScramMechanism) Start() Conversation {
	return &scramConv{name: m.mech.String(), mech: m.mech, creds: m.creds, conv: m.server.NewConversation()}
}

type scramConv struct {
	name  string
	mech  security.ScramMechanism
	creds *security.ScramCredentials
	conv  *scram.ServerConversation
	step  int

	first, serverFirst string // the client-first and server-first messages
}

func (c *scramConv) AuthorizationID() string { return c.conv.Username() }
func (c *scramConv) Expiry() time.Time       { return time.Time{} }

// Step runs client-first → server-first, then client-final → server-final. Every failure is
// the generic message: the client learns neither whether the user exists nor what was wrong.
func (c *scramConv) Step(in []byte) ([]byte, bool, error) {
	c.step++
	generic := errors.New(GenericFailure(c.name))
	if c.step == 1 && hasTokenAuth(string(in)) {
		return nil, false, &AuthError{"Authentication failed: delegation tokens are not supported"}
	}
	if c.step == 2 {
		if out, ok, handled := c.prefixedNonceFinal(string(in)); handled {
			if !ok {
				return nil, false, generic
			}
			return []byte(out), true, nil
		}
	}
	out, err := c.conv.Step(string(in))
	if c.step == 1 && err == nil {
		c.first, c.serverFirst = string(in), out
	}
	if err != nil || c.step > 2 {
		return nil, false, generic
	}
	if c.step == 1 {
		if a := c.conv.AuthzID(); a != "" && a != c.conv.Username() {
			return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from username"}
		}
		return []byte(out), false, nil
	}
	if !c.conv.Valid() {
		return nil, false, generic
	}
	return []byte(out), true, nil
}

// hasTokenAuth reports a client-first message carrying the tokenauth=true extension.
func hasTokenAuth(first string) bool {
	for _, f := range strings.Split(first, ",") {
		if f == "tokenauth=true" {
			return true
		}
	}
	return false
}

// prefixedNonceFinal handles a client-final message whose nonce is not the server-first nonce
// but ends with it. librdkafka before 2.1 (Debian's kcat) sends its own nonce again in front;
// Kafka's ScramSaslServer accepts that (it checks endsWith), xdg-go/scram does not, so such a
// message is verified here, by RFC 5802 over the message as sent. handled is false for every
// other message (xdg-go/scram verifies it).
func (c *scramConv) prefixedNonceFinal(final string) (out string, ok, handled bool) {
	if c.serverFirst == "" {
		return "", false, false
	}
	want := strings.TrimPrefix(strings.SplitN(c.serverFirst, ",", 2)[0], "r=")
	fields := strings.Split(final, ",")
	if len(fields) < 3 || !strings.HasPrefix(fields[1], "r=") {
		return "", false, false
	}
	got := fields[1][2:]
	if got == want || !strings.HasSuffix(got, want) {
		return "", false, false
	}
	last := fields[len(fields)-1]
	if !strings.HasPrefix(last, "p=") || fields[0] != "c=biws" {
		return "", false, true
	}
	proof, err := base64.StdEncoding.DecodeString(last[2:])
	cred, found := c.creds.Lookup(c.conv.Username(), c.mech)
	// client-first-bare: the client-first message without its GS2 header ("n,,", "n,a=x,").
	parts := strings.SplitN(c.first, ",", 3)
	if err != nil || !found || len(parts) != 3 {
		return "", false, true
	}
	authMsg := parts[2] + "," + c.serverFirst + "," + strings.Join(fields[:len(fields)-1], ",")
	h := c.mech.Hash()
	mac := hmac.New(h, cred.StoredKey)
	mac.Write([]byte(authMsg))
	sig := mac.Sum(nil)
	if len(proof) != len(sig) {
		return "", false, true
	}
	for i := range sig {
		sig[i] ^= proof[i] // the client key
	}
	d := h()
	d.Write(sig)
	if !hmac.Equal(d.Sum(nil), cred.StoredKey) {
		return "", false, true
	}
	smac := hmac.New(h, cred.ServerKey)
	smac.Write([]byte(authMsg))
	return "v=" + base64.StdEncoding.EncodeToString(smac.Sum(nil)), true, true
}
