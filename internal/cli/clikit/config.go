package clikit

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// parseProperties reads a Java .properties file: "key=value", "key: value"
// or "key value" lines, '#'/'!' comments, trailing-backslash continuations.
func parseProperties(r io.Reader) (map[string]string, error) {
	props := make(map[string]string)
	sc := bufio.NewScanner(r)
	var pending string
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if pending == "" && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			pending += strings.TrimSuffix(line, "\\")
			continue
		}
		line = pending + line
		pending = ""
		i := strings.IndexAny(line, "=: \t")
		if i < 0 {
			props[line] = ""
			continue
		}
		key := line[:i]
		val := strings.TrimLeft(line[i:], " \t")
		if val != "" && (val[0] == '=' || val[0] == ':') {
			val = val[1:]
		}
		props[key] = strings.TrimSpace(val)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return props, nil
}

var jaasKV = regexp.MustCompile(`(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// clientOptions turns --command-config properties into kgo options. Supported
// keys: client.id, security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT,
// SASL_SSL), sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and
// sasl.jaas.config (username="..." password="..."). Every other key (trust
// stores, Kerberos, timeouts, ...) is accepted and ignored; with --verbose a
// note is printed on stderr for each ignored key.
func clientOptions(props map[string]string, verbose bool, stderr io.Writer) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	known := map[string]bool{"client.id": true, "security.protocol": true, "sasl.mechanism": true, "sasl.jaas.config": true,
		"ssl.truststore.location": true, "ssl.truststore.certificates": true, "ssl.truststore.type": true,
		"ssl.keystore.location": true, "ssl.keystore.type": true, "ssl.keystore.certificate.chain": true, "ssl.keystore.key": true,
		"ssl.endpoint.identification.algorithm": true}
	if v := props["client.id"]; v != "" {
		opts = append(opts, kgo.ClientID(v))
	}
	proto := strings.ToUpper(props["security.protocol"])
	switch proto {
	case "", "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		cfg, err := clientTLS(props)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	default:
		return nil, Usagef("Invalid security.protocol '%s' in --command-config", props["security.protocol"])
	}
	if strings.HasPrefix(proto, "SASL_") {
		mech := strings.ToUpper(props["sasl.mechanism"])
		if mech == "" {
			mech = "GSSAPI" // Kafka's default
		}
		creds := map[string]string{}
		for _, m := range jaasKV.FindAllStringSubmatch(props["sasl.jaas.config"], -1) {
			creds[m[1]] = strings.ReplaceAll(m[2], `\"`, `"`)
		}
		user, pass := creds["username"], creds["password"]
		switch mech {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		default:
			return nil, Usagef("Unsupported sasl.mechanism '%s' in --command-config (supported: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", mech)
		}
	}
	if verbose {
		var ignored []string
		for k := range props {
			if !known[k] {
				ignored = append(ignored, k)
			}
		}
		sort.Strings(ignored)
		for _, k := range ignored {
			fmt.Fprintf(stderr, "Ignoring unsupported client config '%s'.\n", k)
		}
	}
	return opts, nil
}

// CommandConfigOpts loads a --command-config properties file into franz-go
// options (see clientOptions; other keys ignored, noted on stderr with
// verbose). An empty path gives no options; an unreadable file or a bad
// value is a *UsageError.
func CommandConfigOpts(path string, verbose bool, stderr io.Writer) ([]kgo.Opt, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Usagef("Cannot read --command-config file: %v", err)
	}
	defer f.Close()
	props, err := parseProperties(f)
	if err != nil {
		return nil, Usagef("Cannot read --command-config file: %v", err)
	}
	return clientOptions(props, verbose, stderr)
}

// clientTLS builds the client's TLS configuration from PEM material: ssl.truststore.location
// or ssl.truststore.certificates (CAs; default: the system's), ssl.keystore.location (key and
// chain in one PEM file) or ssl.keystore.certificate.chain with ssl.keystore.key (a client
// certificate for mutual TLS), and ssl.endpoint.identification.algorithm (empty: no host name
// check, as Kafka's clients).
func clientTLS(props map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var ca []byte
	switch {
	case props["ssl.truststore.certificates"] != "":
		ca = []byte(props["ssl.truststore.certificates"])
	case props["ssl.truststore.location"] != "":
		b, err := os.ReadFile(props["ssl.truststore.location"])
		if err != nil {
			return nil, Usagef("Cannot read ssl.truststore.location: %v", err)
		}
		ca = b
	}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, Usagef("ssl.truststore: no PEM certificate found (only PEM truststores are supported)")
		}
		cfg.RootCAs = pool
	}
	chain, key := []byte(props["ssl.keystore.certificate.chain"]), []byte(props["ssl.keystore.key"])
	if loc := props["ssl.keystore.location"]; loc != "" {
		b, err := os.ReadFile(loc)
		if err != nil {
			return nil, Usagef("Cannot read ssl.keystore.location: %v", err)
		}
		chain, key = b, b
	}
	if len(chain) > 0 {
		c, err := tls.X509KeyPair(chain, key)
		if err != nil {
			return nil, Usagef("ssl.keystore: %v (only unencrypted PEM keystores are supported)", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	if alg, ok := props["ssl.endpoint.identification.algorithm"]; ok && alg == "" {
		// Kafka's clients skip the host name check then, but still verify the chain.
		cfg.InsecureSkipVerify = true
		roots := cfg.RootCAs
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			var certs []*x509.Certificate
			for _, r := range raw {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return err
				}
				certs = append(certs, c)
			}
			if len(certs) == 0 {
				return fmt.Errorf("no server certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range certs[1:] {
				inter.AddCert(c)
			}
			_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return cfg, nil
}

// ReadProperties reads a Java .properties file (key=value, key: value or
// key value; '#'/'!' comments; trailing-backslash continuations).
func ReadProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseProperties(f)
}
