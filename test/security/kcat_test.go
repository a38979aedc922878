package security

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// kcatPath finds kcat; it skips locally when absent but fails in CI, where .ci/run installs it.
func kcatPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kcat is not installed; .ci/run installs it with apt-get install kcat")
		}
		t.Skip("kcat not installed (apt-get install kcat)")
	}
	return p
}

// TestKcat: kcat (Debian's librdkafka 2.0.2) produces and consumes over SASL_PLAINTEXT with
// SCRAM-SHA-512 and PLAIN, over SASL_SSL with SCRAM-SHA-256, and over SSL with a client
// certificate; a wrong password fails.
func TestKcat(t *testing.T) {
	kcat := kcatPath(t)
	sb := startSecure(t)
	sb.createTopic(t, "kcat", 1)
	sb.allow(t, kadm.NewACLs().Allow("User:alice", "User:CN=kcat,OU=test,O=muster").Topics("kcat").Operations(kadm.OpWrite, kadm.OpRead))
	cert := sb.PKI.ClientCN("kcat", "kcat")
	cases := []struct {
		name string
		addr string
		args []string
	}{
		{"scram512", sb.SASLPlaintext, []string{"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"}},
		{"plain", sb.SASLPlaintext, []string{"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"}},
		{"saslssl-scram256", sb.SASLSSL, []string{"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-256", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-X", "ssl.ca.location=" + sb.PKI.CAFile}},
		{"mtls", sb.SSL, []string{"-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + sb.PKI.CAFile, "-X", "ssl.certificate.location=" + cert.CertFile, "-X", "ssl.key.location=" + cert.KeyFile}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			val := "kcat-" + c.name
			p := exec.CommandContext(ctx, kcat, append([]string{"-b", c.addr, "-t", "kcat", "-P", "-X", "acks=all"}, c.args...)...)
			p.Stdin = strings.NewReader(val + "\n")
			if out, err := p.CombinedOutput(); err != nil {
				t.Fatalf("kcat -P: %v: %s", err, out)
			}
			cons := exec.CommandContext(ctx, kcat, append([]string{"-b", c.addr, "-t", "kcat", "-C", "-e", "-o", "beginning", "-f", "%s\n"}, c.args...)...)
			var stdout, stderr bytes.Buffer
			cons.Stdout, cons.Stderr = &stdout, &stderr
			if err := cons.Run(); err != nil {
				t.Fatalf("kcat -C: %v: %s", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), val+"\n") {
				t.Fatalf("kcat consumed %q, want %q among them", stdout.String(), val)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bad := exec.CommandContext(ctx, kcat, "-b", sb.SASLPlaintext, "-L", "-m", "5", "-X", "security.protocol=SASL_PLAINTEXT",
		"-X", "sasl.mechanisms=SCRAM-SHA-256", "-X", "sasl.username=alice", "-X", "sasl.password=nope")
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "uthentication") {
		t.Fatalf("kcat with a wrong password: %v: %s", err, out)
	}
}
