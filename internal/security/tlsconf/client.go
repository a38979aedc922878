package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// ClientConfig is the crypto/tls configuration a node dials another node's TLS listener with
// (Kafka's inter-broker client reads the listener's ssl.* keys): the truststore verifies the
// peer (none set: the system's roots), the keystore, when set, is presented as the client
// certificate (for ssl.client.auth), and endpointIdentification is
// ssl.endpoint.identification.algorithm: "https" also checks the peer's host name, "" checks
// the chain only. Files are read once (a restart picks up new ones).
func ClientConfig(set Settings, endpointIdentification string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	if err := applyProtocols(cfg, set); err != nil {
		return nil, err
	}
	if set.KeystoreLocation != "" || set.KeystoreChain != "" || set.KeystoreKey != "" {
		cert, err := loadKeystore(set)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	pool, err := loadTruststore(set)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = pool
	switch strings.ToLower(strings.TrimSpace(endpointIdentification)) {
	case "https":
	case "":
		// Verify the chain but not the host name (Kafka's empty algorithm).
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the peer sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	default:
		return nil, fmt.Errorf("ssl.endpoint.identification.algorithm=%q: want https or empty", endpointIdentification)
	}
	return cfg, nil
}
