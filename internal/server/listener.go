package server

import (
	"crypto/tls"
	"crypto/x509"
	"time"

	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/security/sasl"
)

// Listener is one named Kafka listener (listeners / listener.security.protocol.map): how its
// connections are secured and authenticated, and the endpoint its clients are told to use.
type Listener struct {
	// Name is the listener name ("PLAINTEXT", "SASL_SSL", "CLIENT").
	Name string
	// Protocol is its security protocol.
	Protocol security.Protocol
	// TLS wraps accepted connections (SSL and SASL_SSL); its handshake runs before anything else.
	TLS *tls.Config
	// PrincipalFromCert maps a verified client certificate to a principal name (SSL listeners
	// with ssl.client.auth requested or required); nil: the certificate is ignored.
	PrincipalFromCert func(*x509.Certificate) (string, error)
	// Mechanisms are the enabled SASL mechanisms (SASL listeners), in sasl.enabled.mechanisms
	// order.
	Mechanisms []sasl.Mechanism
	// MaxReauth is connections.max.reauth.ms (KIP-368): a SASL session lasts at most this long and
	// the client re-authenticates on the same connection; 0 = sessions never expire.
	MaxReauth time.Duration
	// MaxSASLReceive is sasl.server.max.receive.size: the largest frame before authentication.
	MaxSASLReceive int32
	// FailedAuthDelay is connection.failed.authentication.delay.ms: the close after a failed
	// authentication waits this long (slowing down password guessing).
	FailedAuthDelay time.Duration
	// AuthTimeout bounds the whole TLS handshake and SASL exchange of a new connection.
	AuthTimeout time.Duration
	// AdvertisedHost and AdvertisedPort are the endpoint of this listener that Metadata,
	// FindCoordinator and DescribeCluster answer with for requests that came in on it.
	AdvertisedHost string
	AdvertisedPort int32
	// OnAuthentication, if set, is told of every authentication attempt: TLS handshakes (mechanism
	// "SSL") and SASL exchanges; reauth marks KIP-368 re-authentications.
	OnAuthentication func(listener, mechanism string, ok, reauth bool)
}

// defaultListener is the one PLAINTEXT listener of Serve.
var defaultListener = &Listener{Name: "PLAINTEXT", Protocol: security.Plaintext}

func (l *Listener) mechanism(name string) sasl.Mechanism {
	for _, m := range l.Mechanisms {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

func (l *Listener) mechanismNames() []string {
	out := make([]string, len(l.Mechanisms))
	for i, m := range l.Mechanisms {
		out[i] = m.Name()
	}
	return out
}

func (l *Listener) authenticated(mech string, ok, reauth bool) {
	if l.OnAuthentication != nil {
		l.OnAuthentication(l.Name, mech, ok, reauth)
	}
}

func (l *Listener) authTimeout() time.Duration {
	if l.AuthTimeout > 0 {
		return l.AuthTimeout
	}
	return 60 * time.Second
}
