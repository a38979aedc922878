package tlsconf

import (
	"crypto/tls"
	"testing"

	"github.com/muster-io/muster/internal/security/securitytest"
)

// TestClientConfig: the inter-broker client trusts the truststore's CAs, checks the peer's host
// name with ssl.endpoint.identification.algorithm=https and only the chain when it is empty,
// and reads a PKCS12 truststore as well as a PEM one.
func TestClientConfig(t *testing.T) {
	pki := securitytest.NewPKI(t)
	srv := pki.Server("srv")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srv.TLS}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	other := securitytest.NewPKI(t)
	pem := Settings{TruststoreType: "PEM", TruststoreLocation: pki.CAFile}
	p12 := Settings{TruststoreType: "PKCS12", TruststoreLocation: pki.PKCS12Trust("trust.p12", "pw"), TruststorePassword: "pw"}
	for _, c := range []struct {
		name       string
		set        Settings
		alg, sni   string
		handshakes bool
	}{
		{"pem https", pem, "https", "localhost", true},
		{"pkcs12 https", p12, "https", "localhost", true},
		{"https wrong host", pem, "https", "wrong.example", false},
		{"empty wrong host", pem, "", "wrong.example", true},
		{"empty other CA", Settings{TruststoreType: "PEM", TruststoreLocation: other.CAFile}, "", "localhost", false},
	} {
		cfg, err := ClientConfig(c.set, c.alg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cfg.ServerName = c.sni
		conn, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err == nil {
			conn.Close()
		}
		if (err == nil) != c.handshakes {
			t.Errorf("%s: handshake error %v, want success %v", c.name, err, c.handshakes)
		}
	}
	if _, err := ClientConfig(pem, "ldaps"); err == nil {
		t.Error("an unknown ssl.endpoint.identification.algorithm was accepted")
	}
}
