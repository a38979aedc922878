package clikit

import (
	"bufio"
	"crypto/tls"
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
	known := map[string]bool{"client.id": true, "security.protocol": true, "sasl.mechanism": true, "sasl.jaas.config": true}
	if v := props["client.id"]; v != "" {
		opts = append(opts, kgo.ClientID(v))
	}
	proto := strings.ToUpper(props["security.protocol"])
	switch proto {
	case "", "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
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
