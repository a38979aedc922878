package security

import (
	"net/netip"
)

// Protocol is a listener's security protocol (Kafka's SecurityProtocol).
type Protocol string

// The security protocols of listener.security.protocol.map.
const (
	Plaintext     Protocol = "PLAINTEXT"
	SSL           Protocol = "SSL"
	SASLPlaintext Protocol = "SASL_PLAINTEXT"
	SASLSSL       Protocol = "SASL_SSL"
)

// ParseProtocol returns the protocol named s (case-insensitive), or false.
func ParseProtocol(s string) (Protocol, bool) {
	switch p := Protocol(upper(s)); p {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return p, true
	}
	return "", false
}

// TLS reports whether the protocol runs over TLS.
func (p Protocol) TLS() bool { return p == SSL || p == SASLSSL }

// SASL reports whether the protocol authenticates with SASL.
func (p Protocol) SASL() bool { return p == SASLPlaintext || p == SASLSSL }

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// Session is who a request comes from: the authenticated principal, the client's address and the
// listener it connected to (Kafka's RequestContext / AuthorizableRequestContext). A connection's
// Session is replaced, never mutated, when it authenticates, so a request holds a consistent one.
type Session struct {
	// Principal is the authenticated principal (Anonymous before SASL, or on PLAINTEXT).
	Principal Principal
	// ClientHost is the client's IP address as text ("127.0.0.1", "::1"), as ACL hosts name it.
	ClientHost string
	// Listener is the name of the listener the connection came in on ("PLAINTEXT", "CLIENT").
	Listener string
	// Protocol is that listener's security protocol.
	Protocol Protocol
	// Mechanism is the SASL mechanism that authenticated the principal ("" without SASL).
	Mechanism string

	principal string     // Principal.String(), computed once
	addr      netip.Addr // ClientHost parsed (invalid if it does not parse)
}

// NewSession builds a session; clientHost is the client's IP address text.
func NewSession(p Principal, clientHost, listener string, proto Protocol, mechanism string) *Session {
	s := &Session{Principal: p, ClientHost: clientHost, Listener: listener, Protocol: proto, Mechanism: mechanism}
	s.principal = p.String()
	if a, err := netip.ParseAddr(clientHost); err == nil {
		s.addr = a.Unmap()
	}
	return s
}

// PrincipalString is Principal.String(), without allocating.
func (s *Session) PrincipalString() string {
	if s.principal == "" {
		return s.Principal.String()
	}
	return s.principal
}

// hostMatches reports whether an ACL host (an IP address or "*") names this session's client.
// Addresses compare as addresses (Java prints "0:0:0:0:0:0:0:1" where Go prints "::1"); a host
// that does not parse compares as text.
func (s *Session) hostMatches(host string, addr netip.Addr) bool {
	if host == "*" {
		return true
	}
	if addr.IsValid() && s.addr.IsValid() {
		return addr == s.addr
	}
	return host == s.ClientHost
}
