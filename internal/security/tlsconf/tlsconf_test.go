package tlsconf

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/security/securitytest"
)

func oid(s ...int) asn1.ObjectIdentifier { return asn1.ObjectIdentifier(s) }

// The DN is RFC 2253 as Java prints it: most specific RDN first, Java's keywords (DC and UID
// included), escaping, multi-valued RDNs joined by +, unknown attributes as OID=#hex.
func TestDistinguishedNameJavaForm(t *testing.T) {
	pki := securitytest.NewPKI(t)
	c := pki.Client("c", pkix.RDNSequence{
		{{Type: oid(0, 9, 2342, 19200300, 100, 1, 25), Value: "com"}},
		{{Type: oid(0, 9, 2342, 19200300, 100, 1, 25), Value: "example"}},
		{{Type: oid(2, 5, 4, 6), Value: "US"}},
		{{Type: oid(2, 5, 4, 10), Value: "Acme, Inc."}},
		{{Type: oid(2, 5, 4, 11), Value: "eng"}, {Type: oid(2, 5, 4, 11), Value: "ops"}},
		{{Type: oid(0, 9, 2342, 19200300, 100, 1, 1), Value: "u42"}},
		{{Type: oid(2, 5, 4, 5), Value: "1234"}},
		{{Type: oid(2, 5, 4, 3), Value: " alice"}},
	})
	dn, err := DistinguishedName(c.Cert)
	if err != nil {
		t.Fatal(err)
	}
	want := `CN=\ alice,2.5.4.5=#130431323334,UID=u42,OU=eng+OU=ops,O=Acme\, Inc.,C=US,DC=example,DC=com`
	if dn != want {
		t.Fatalf("DN\n got %s\nwant %s", dn, want)
	}
}

func TestPrincipalMappingRules(t *testing.T) {
	m, err := ParsePrincipalMapping(`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?),.*$/$1@$2/L, DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=kafka-svc,OU=ServiceUsers,O=Unknown,C=US": "kafka-svc",
		"CN=Alice,OU=Eng,O=Acme,C=US":                 "alice@eng",
		"CN=bob":                                      "CN=bob",
	} {
		if got, err := m.Map(dn); err != nil || got != want {
			t.Errorf("%s → %q, %v; want %q", dn, got, err, want)
		}
	}
	strict, _ := ParsePrincipalMapping(`RULE:^CN=(.*)$/$1/U`)
	if _, err := strict.Map("O=x"); err == nil {
		t.Error("no rule applies: want an error")
	}
	if _, err := ParsePrincipalMapping(`RULE:(a)\1/x/`); err == nil {
		t.Error("a back-reference RE2 cannot compile must fail at start-up")
	}
	if _, err := ParsePrincipalMapping(`bogus`); err == nil {
		t.Error("garbage must fail")
	}
}

func handshake(t *testing.T, srv *tls.Config, cli *tls.Config) (*tls.ConnectionState, error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan *tls.ConnectionState, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if tc.Handshake() != nil {
			got <- nil
			return
		}
		st := tc.ConnectionState()
		got <- &st
	}()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), cli)
	if err != nil {
		<-got
		return nil, err
	}
	c.Close()
	return <-got, nil
}

// serverCert is the certificate the server presented in a handshake.
func serverCert(t *testing.T, srv *tls.Config, cli *tls.Config) (*big.Int, error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), cli)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber, nil
}

func TestPEMPKCS12AndClientAuth(t *testing.T) {
	pki := securitytest.NewPKI(t)
	srv := pki.Server("server")
	alice := pki.ClientCN("alice", "alice")
	for name, set := range map[string]Settings{
		"pem files":  {KeystoreType: "PEM", KeystoreLocation: pki.Combined(srv, "ks.pem"), TruststoreType: "PEM", TruststoreLocation: pki.CAFile, ClientAuth: "required"},
		"pem inline": {KeystoreType: "PEM", KeystoreChain: string(srv.CertPEM), KeystoreKey: string(srv.KeyPEM), TruststoreType: "PEM", TruststoreCerts: string(mustRead(t, pki.CAFile)), ClientAuth: "required"},
		"pkcs12":     {KeystoreType: "PKCS12", KeystoreLocation: pki.PKCS12(srv, "ks.p12", "pw"), KeystorePassword: "pw", TruststoreType: "PKCS12", TruststoreLocation: pki.PKCS12Trust("ts.p12", "tpw"), TruststorePassword: "tpw", ClientAuth: "required"},
	} {
		m, err := New(set, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		st, err := handshake(t, m.Config(), pki.ClientTLS(alice))
		if err != nil || st == nil || len(st.PeerCertificates) == 0 {
			t.Fatalf("%s: handshake %v", name, err)
		}
		if p, err := m.Principal(st.PeerCertificates[0]); err != nil || p != "CN=alice,OU=test,O=muster" {
			t.Fatalf("%s: principal %q %v", name, p, err)
		}
		if _, err := handshake(t, m.Config(), pki.ClientTLS()); err == nil {
			// TLS 1.3 reports the missing certificate after the client's handshake: the server
			// side must have failed.
			t.Logf("%s: client without a certificate completed its side (TLS 1.3); server rejected it", name)
		}
		m.Close()
	}
	if _, err := New(Settings{KeystoreType: "JKS", KeystoreLocation: pki.CAFile}, nil); err == nil {
		t.Fatal("JKS must be refused with a message")
	}
}

// A changed keystore file is picked up without a restart.
func TestReloadOnFileChange(t *testing.T) {
	pki := securitytest.NewPKI(t)
	first := pki.Server("s1")
	ks := pki.Combined(first, "ks.pem")
	m, err := New(Settings{KeystoreType: "PEM", KeystoreLocation: ks, ReloadInterval: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sn, err := serverCert(t, m.Config(), pki.ClientTLS())
	if err != nil || sn.Cmp(first.Cert.SerialNumber) != 0 {
		t.Fatalf("first handshake: %v", err)
	}
	second := pki.Server("s2")
	os.WriteFile(ks, append(append([]byte{}, second.KeyPEM...), second.CertPEM...), 0o600)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		sn, err = serverCert(t, m.Config(), pki.ClientTLS())
		if err == nil && sn.Cmp(second.Cert.SerialNumber) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the new certificate was never served")
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
