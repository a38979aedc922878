// Package sasl holds the server side of muster's SASL mechanisms: PLAIN (users from the
// listener's JAAS config), SCRAM-SHA-256 and SCRAM-SHA-512 (github.com/xdg-go/scram over stored
// salted keys) and OAUTHBEARER (unsecured JWS for development, or JWKS-validated JWTs). The
// connection state machine that drives them (SaslHandshake, SaslAuthenticate, raw v0 tokens)
// lives in the server.
package sasl

import (
	"time"
)

// Mechanism names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
	GSSAPI      = "GSSAPI"
)

// Mechanism starts server conversations of one SASL mechanism.
type Mechanism interface {
	Name() string
	// Start begins the exchange of one authentication.
	Start() Conversation
}

// Conversation is one authentication exchange.
type Conversation interface {
	// Step consumes the client's next token and returns the server's answer. done reports a
	// successful end (the client is authenticated); an error is a failed authentication.
	Step(in []byte) (out []byte, done bool, err error)
	// AuthorizationID is the authenticated name (the principal's name), valid once done.
	AuthorizationID() string
	// Expiry is when the credential stops being valid (an OAuth token's exp); zero if never.
	Expiry() time.Time
}

// AuthError is an authentication failure whose message the client may see (Kafka's
// SaslAuthenticationException); other errors are reported with a generic message.
type AuthError struct{ Msg string }

func (e *AuthError) Error() string { return e.Msg }

// GenericFailure is the message of a failure that must not reveal why (unknown user or wrong
// proof: SaslServerAuthenticator's answer to a SaslException).
func GenericFailure(mechanism string) string {
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism
}
