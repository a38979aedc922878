// Package securitytest makes TLS material for tests at run time with crypto/x509 (no key material
// is committed): a CA, a server certificate for 127.0.0.1 and localhost, and client
// certificates with chosen subjects, as PEM files, PKCS12 files and tls.Config values.
package securitytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// PKI is a test certificate authority with its files in Dir.
type PKI struct {
	Dir    string
	CA     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	CAFile string // PEM
	t      testing.TB
}

// Pair is a certificate with its key, as PEM files and a tls.Certificate.
type Pair struct {
	CertFile, KeyFile string // PEM files
	CertPEM, KeyPEM   []byte
	TLS               tls.Certificate
	Cert              *x509.Certificate
	Key               *ecdsa.PrivateKey
}

// NewPKI creates a CA in a temporary directory.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "muster test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &PKI{Dir: t.TempDir(), CA: ca, caKey: key, t: t}
	p.CAFile = filepath.Join(p.Dir, "ca.pem")
	writeFile(t, p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return p
}

// Pool is a pool holding the CA.
func (p *PKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return pool
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost, written as name.pem (the
// chain) and name-key.pem.
func (p *PKI) Server(name string) *Pair {
	return p.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost", Organization: []string{"muster"}},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// Client issues a client certificate whose subject is the given RDN sequence (as written in
// the certificate, least specific first).
func (p *PKI) Client(name string, subject pkix.RDNSequence) *Pair {
	raw, err := asn1.Marshal(subject)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.issue(name, &x509.Certificate{RawSubject: raw, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

// ClientCN issues a client certificate with subject CN=cn,OU=test,O=muster.
func (p *PKI) ClientCN(name, cn string) *Pair {
	return p.Client(name, pkix.RDNSequence{
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "muster"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 11}, Value: "test"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: cn}},
	})
}

var serial int64 = 100

func (p *PKI) issue(name string, tmpl *x509.Certificate) *Pair {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	pr := &Pair{Cert: cert, Key: key,
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		CertFile: filepath.Join(p.Dir, name+".pem"), KeyFile: filepath.Join(p.Dir, name+"-key.pem")}
	pr.TLS = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}
	writeFile(p.t, pr.CertFile, pr.CertPEM)
	writeFile(p.t, pr.KeyFile, pr.KeyPEM)
	return pr
}

// Combined writes the key and the chain into one PEM file (ssl.keystore.location with
// ssl.keystore.type=PEM) and returns its path.
func (p *PKI) Combined(pr *Pair, name string) string {
	path := filepath.Join(p.Dir, name)
	writeFile(p.t, path, append(append([]byte{}, pr.KeyPEM...), pr.CertPEM...))
	return path
}

// PKCS12 writes pr as a PKCS12 keystore protected by password and returns its path.
func (p *PKI) PKCS12(pr *Pair, name, password string) string {
	data, err := pkcs12.Modern.Encode(pr.Key, pr.Cert, []*x509.Certificate{p.CA}, password)
	if err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(p.Dir, name)
	writeFile(p.t, path, data)
	return path
}

// PKCS12Trust writes the CA as a PKCS12 truststore and returns its path.
func (p *PKI) PKCS12Trust(name, password string) string {
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{p.CA}, password)
	if err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(p.Dir, name)
	writeFile(p.t, path, data)
	return path
}

// ClientTLS is a client tls.Config trusting the CA, presenting certs if any.
func (p *PKI) ClientTLS(certs ...*Pair) *tls.Config {
	cfg := &tls.Config{RootCAs: p.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12}
	for _, c := range certs {
		cfg.Certificates = append(cfg.Certificates, c.TLS)
	}
	return cfg
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// ClientTLSWith is ClientTLS presenting a certificate from another authority.
func (p *PKI) ClientTLSWith(c *Pair) *tls.Config { return p.ClientTLS(c) }
