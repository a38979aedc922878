package sasl

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"time"
)

// PlainMechanism is SASL/PLAIN (RFC 4616) with Kafka's PlainSaslServer messages; the users are
// the user_<name>="<password>" options of the listener's PlainLoginModule JAAS config.
type PlainMechanism struct {
	users map[string][32]byte // password digests, compared in constant time
}

// NewPlain returns PLAIN over users (name → password).
func NewPlain(users map[string]string) *PlainMechanism {
	m := &PlainMechanism{users: map[string][32]byte{}}
	for u, p := range users {
		m.users[u] = sha256.Sum256([]byte(p))
	}
	return m
}

// Name implements Mechanism.
func (*PlainMechanism) Name() string { return Plain }

// Start implements Mechanism.
func (m *PlainMechanism) Start() Conversation { return &plainConv{m: m} }

type plainConv struct {
	m    *PlainMechanism
	user string
	done bool
}

func (c *plainConv) AuthorizationID() string { return c.user }
func (c *plainConv) Expiry() time.Time       { return time.Time{} }

// Step checks "[authzid] NUL authcid NUL passwd".
func (c *plainConv) Step(in []byte) ([]byte, bool, error) {
	if c.done {
		return nil, false, &AuthError{"Authentication failed: PLAIN exchange already complete"}
	}
	parts := bytes.Split(in, []byte{0})
	if len(parts) != 3 {
		return nil, false, &AuthError{fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))}
	}
	authz, user, pass := string(parts[0]), string(parts[1]), parts[2]
	switch {
	case user == "":
		return nil, false, &AuthError{"Authentication failed: username not specified"}
	case len(pass) == 0:
		return nil, false, &AuthError{"Authentication failed: password not specified"}
	}
	want, ok := c.m.users[user]
	got := sha256.Sum256(pass)
	if subtle.ConstantTimeCompare(want[:], got[:]) != 1 || !ok {
		return nil, false, &AuthError{"Authentication failed: Invalid username or password"}
	}
	if authz != "" && authz != user {
		return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	c.user, c.done = user, true
	return nil, true, nil
}
