package sasl

import (
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
	return &ScramMechanism{mech: m, server: srv}
}

var errUnknownUser = errors.New("unknown user")

// Name implements Mechanism.
func (m *ScramMechanism) Name() string { return m.mech.String() }

// Start implements Mechanism.
func (m *ScramMechanism) Start() Conversation {
	return &scramConv{name: m.mech.String(), conv: m.server.NewConversation()}
}

type scramConv struct {
	name string
	conv *scram.ServerConversation
	step int
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
	out, err := c.conv.Step(string(in))
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
