// Package tlsconf builds a listener's crypto/tls configuration from Kafka's ssl.* keys: PEM
// keystores and truststores (inline or as files) and PKCS12 files, ssl.client.auth, protocols
// and cipher suites; it reloads the files when they change, and turns a client certificate into
// a principal name (RFC 2253 subject, ssl.principal.mapping.rules).
package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Settings are one listener's ssl.* values.
type Settings struct {
	KeystoreType       string // JKS (refused), PKCS12 or PEM
	KeystoreLocation   string
	KeystorePassword   string
	KeyPassword        string
	KeystoreChain      string // PEM, inline
	KeystoreKey        string // PEM, inline
	TruststoreType     string
	TruststoreLocation string
	TruststorePassword string
	TruststoreCerts    string // PEM, inline
	ClientAuth         string // none, requested, required
	EnabledProtocols   []string
	CipherSuites       []string
	MappingRules       string
	// ReloadInterval is how often the files are checked for changes; 0 = never.
	ReloadInterval time.Duration
}

// Manager serves a listener's TLS configuration and keeps it current: when a keystore or
// truststore file changes, the next handshakes use the new material (a file that fails to load
// leaves the previous material in place, with a log line).
type Manager struct {
	set    Settings
	log    *slog.Logger
	mapper *PrincipalMapper
	base   *tls.Config
	cur    atomic.Pointer[tls.Config]
	digest [32]byte // of the files last loaded

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// New loads the material and starts the reload loop (Close stops it).
func New(set Settings, log *slog.Logger) (*Manager, error) {
	if log == nil {
		log = slog.Default()
	}
	mapper, err := ParsePrincipalMapping(set.MappingRules)
	if err != nil {
		return nil, err
	}
	base := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	if err := applyProtocols(base, set); err != nil {
		return nil, err
	}
	switch strings.ToLower(set.ClientAuth) {
	case "", "none":
		base.ClientAuth = tls.NoClientCert
	case "requested":
		base.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		base.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("ssl.client.auth=%q: want none, requested or required", set.ClientAuth)
	}
	m := &Manager{set: set, log: log, mapper: mapper, base: base, stop: make(chan struct{}), done: make(chan struct{})}
	cfg, digest, err := m.load()
	if err != nil {
		return nil, err
	}
	m.cur.Store(cfg)
	m.digest = digest
	if set.ReloadInterval > 0 && (set.KeystoreLocation != "" || set.TruststoreLocation != "") {
		go m.reloadLoop()
	} else {
		close(m.done)
	}
	return m, nil
}

// Config is the tls.Config to serve with: it hands each handshake the current material.
func (m *Manager) Config() *tls.Config {
	return &tls.Config{
		MinVersion: m.base.MinVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return m.cur.Load(), nil
		},
	}
}

// Close stops the reload loop.
func (m *Manager) Close() {
	m.stopOnce.Do(func() { close(m.stop) })
	<-m.done
}

// Principal maps a verified client certificate to a principal name (the mapped RFC 2253 DN).
func (m *Manager) Principal(cert *x509.Certificate) (string, error) {
	dn, err := DistinguishedName(cert)
	if err != nil {
		return "", err
	}
	return m.mapper.Map(dn)
}

func (m *Manager) reloadLoop() {
	defer close(m.done)
	t := time.NewTicker(m.set.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		d, err := m.fileDigest()
		if err != nil || d == m.digest {
			continue
		}
		cfg, digest, err := m.load()
		if err != nil {
			m.log.Warn("TLS material changed but does not load; keeping the previous one", "err", err)
			m.digest = d // do not retry the same broken content every tick
			continue
		}
		m.cur.Store(cfg)
		m.digest = digest
		m.log.Info("TLS keystore/truststore reloaded", "keystore", m.set.KeystoreLocation, "truststore", m.set.TruststoreLocation)
	}
}

// fileDigest hashes the keystore and truststore files' contents.
func (m *Manager) fileDigest() ([32]byte, error) {
	h := sha256.New()
	for _, p := range []string{m.set.KeystoreLocation, m.set.TruststoreLocation} {
		if p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return [32]byte{}, err
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	return [32]byte(h.Sum(nil)), nil
}

func (m *Manager) load() (*tls.Config, [32]byte, error) {
	digest, err := m.fileDigest()
	if err != nil {
		return nil, digest, err
	}
	cert, err := loadKeystore(m.set)
	if err != nil {
		return nil, digest, err
	}
	cfg := m.base.Clone()
	cfg.Certificates = []tls.Certificate{cert}
	pool, err := loadTruststore(m.set)
	if err != nil {
		return nil, digest, err
	}
	if pool != nil {
		cfg.ClientCAs = pool
	} else if cfg.ClientAuth != tls.NoClientCert {
		return nil, digest, errors.New("ssl.client.auth needs a truststore (ssl.truststore.location or ssl.truststore.certificates) to verify client certificates")
	}
	return cfg, digest, nil
}

func applyProtocols(cfg *tls.Config, set Settings) error {
	if len(set.EnabledProtocols) > 0 {
		cfg.MinVersion, cfg.MaxVersion = 0, 0
		for _, p := range set.EnabledProtocols {
			var v uint16
			switch p {
			case "TLSv1.2":
				v = tls.VersionTLS12
			case "TLSv1.3":
				v = tls.VersionTLS13
			default:
				return fmt.Errorf("ssl.enabled.protocols: %s is not supported (TLSv1.2, TLSv1.3)", p)
			}
			if cfg.MinVersion == 0 || v < cfg.MinVersion {
				cfg.MinVersion = v
			}
			if v > cfg.MaxVersion {
				cfg.MaxVersion = v
			}
		}
	}
	if len(set.CipherSuites) > 0 {
		byName := map[string]uint16{}
		for _, s := range tls.CipherSuites() {
			byName[s.Name] = s.ID
		}
		for _, n := range set.CipherSuites {
			if id, ok := byName[n]; ok {
				cfg.CipherSuites = append(cfg.CipherSuites, id)
			} else if !strings.HasPrefix(n, "TLS_AES_") && !strings.HasPrefix(n, "TLS_CHACHA20_") {
				return fmt.Errorf("ssl.cipher.suites: unknown or insecure suite %s", n)
			}
		}
	}
	return nil
}

// loadKeystore returns the listener's certificate and key.
func loadKeystore(set Settings) (tls.Certificate, error) {
	typ := strings.ToUpper(set.KeystoreType)
	if set.KeystoreChain != "" || set.KeystoreKey != "" {
		if typ != "PEM" {
			return tls.Certificate{}, errors.New("ssl.keystore.certificate.chain and ssl.keystore.key need ssl.keystore.type=PEM")
		}
		return pemPair([]byte(set.KeystoreChain), []byte(set.KeystoreKey), set.KeyPassword)
	}
	if set.KeystoreLocation == "" {
		return tls.Certificate{}, errors.New("a TLS listener needs a keystore: ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key with ssl.keystore.type=PEM")
	}
	data, err := os.ReadFile(set.KeystoreLocation)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location: %w", err)
	}
	switch typ {
	case "PEM":
		return pemPair(data, data, set.KeyPassword)
	case "PKCS12":
		key, leaf, cas, err := pkcs12.DecodeChain(data, set.KeystorePassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s (PKCS12): %w", set.KeystoreLocation, err)
		}
		c := tls.Certificate{PrivateKey: key.(crypto.PrivateKey), Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, ca := range cas {
			c.Certificate = append(c.Certificate, ca.Raw)
		}
		return c, nil
	default:
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.type=%s: JKS keystores are not supported; convert with keytool -importkeystore -deststoretype PKCS12, or use PEM", set.KeystoreType)
	}
}

// pemPair parses a PEM chain and key. An encrypted key (ssl.key.password) is refused: Go's
// standard library decrypts only the insecure legacy PEM encryption.
func pemPair(chain, key []byte, keyPassword string) (tls.Certificate, error) {
	if bytes.Contains(key, []byte("ENCRYPTED")) || keyPassword != "" {
		return tls.Certificate{}, errors.New("encrypted private keys (ssl.key.password) are not supported; store the key unencrypted with restricted file permissions, or use a PKCS12 keystore")
	}
	c, err := tls.X509KeyPair(chain, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("PEM keystore: %w", err)
	}
	return c, nil
}

// loadTruststore returns the CA pool client certificates are verified against (nil: none).
func loadTruststore(set Settings) (*x509.CertPool, error) {
	typ := strings.ToUpper(set.TruststoreType)
	var certs []*x509.Certificate
	switch {
	case set.TruststoreCerts != "":
		if typ != "PEM" {
			return nil, errors.New("ssl.truststore.certificates needs ssl.truststore.type=PEM")
		}
		cs, err := pemCerts([]byte(set.TruststoreCerts))
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.certificates: %w", err)
		}
		certs = cs
	case set.TruststoreLocation != "":
		data, err := os.ReadFile(set.TruststoreLocation)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		switch typ {
		case "PEM":
			certs, err = pemCerts(data)
		case "PKCS12":
			certs, err = pkcs12.DecodeTrustStore(data, set.TruststorePassword)
		default:
			return nil, fmt.Errorf("ssl.truststore.type=%s: JKS truststores are not supported; use PEM or PKCS12", set.TruststoreType)
		}
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location %s: %w", set.TruststoreLocation, err)
		}
	default:
		return nil, nil
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return out, nil
}
