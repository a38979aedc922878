package security

import (
	"strings"
	"testing"

	"github.com/muster-io/muster/internal/broker"
	"github.com/muster-io/muster/internal/config"
)

// TestListenerConfigErrors: start-up refuses contradictory or unsupported listener settings with
// a message naming the keys: --listen together with listeners, GSSAPI, PLAIN without users, an
// unmapped listener name, a TLS listener without a keystore.
func TestListenerConfigErrors(t *testing.T) {
	cases := []struct {
		listen    string
		overrides []string
		want      string
	}{
		{"127.0.0.1:0", []string{"listeners=PLAINTEXT://127.0.0.1:0"}, "both --listen (127.0.0.1:0) and listeners (PLAINTEXT://127.0.0.1:0)"},
		{"", []string{"listeners=SASL_PLAINTEXT://127.0.0.1:0"}, "GSSAPI (Kerberos) is not supported"},
		{"", []string{"listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=PLAIN"}, "listener.name.sasl_plaintext.plain.sasl.jaas.config"},
		{"", []string{"listeners=SSL://127.0.0.1:0"}, "needs a keystore"},
		{"", []string{"listeners=CLIENT://127.0.0.1:0"}, "listener CLIENT has no security protocol"},
	}
	for _, c := range cases {
		vals, err := config.Parse(nil, c.overrides)
		if err != nil {
			if strings.Contains(err.Error(), c.want) {
				continue
			}
			t.Fatalf("%v: config error %v", c.overrides, err)
		}
		b, err := broker.Start(broker.Options{Listen: c.listen, DataDir: t.TempDir(), Config: vals})
		if err == nil {
			b.Close()
			t.Fatalf("%v: started", c.overrides)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: error %q lacks %q", c.overrides, err, c.want)
		}
	}
}

// TestCustomListenerNames: listener names mapped through listener.security.protocol.map, with
// advertised.listeners per name; Metadata and FindCoordinator answer each client with the
// endpoint of the listener it came in on.
func TestCustomListenerNames(t *testing.T) {
	b := startCustom(t)
	for _, name := range []string{"INTERNAL", "CLIENT"} {
		want := map[string]string{"INTERNAL": "internal.example:19092", "CLIENT": "client.example:29092"}[name]
		host, port := findCoordinator(t, b.ListenerAddr(name))
		if got := host + ":" + port; got != want {
			t.Fatalf("FindCoordinator on %s: %s, want %s", name, got, want)
		}
	}
}
