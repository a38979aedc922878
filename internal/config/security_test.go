package config

import (
	"strings"
	"testing"
)

// The documented example server.properties parses, with its listener and per-listener keys.
func TestExampleSecurityProperties(t *testing.T) {
	v, err := ParseFile("../../docs/examples/server-sasl-ssl.properties", nil)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := ParseEndpoints(v.String("listeners"))
	if err != nil || len(eps) != 2 || eps[0].Name != "SASL_SSL" || eps[0].Port != 9093 {
		t.Fatalf("listeners %v %v", eps, err)
	}
	if got := v.MechanismValue("SASL_SSL", "SCRAM-SHA-512", "sasl.jaas.config"); !strings.Contains(got, "ScramLoginModule") {
		t.Fatalf("per-listener JAAS %q", got)
	}
}

func TestListenerKeys(t *testing.T) {
	v, err := Parse(nil, []string{"listeners=CLIENT://:9093,INTERNAL://127.0.0.1:9092", "listener.security.protocol.map=CLIENT:SASL_SSL,INTERNAL:PLAINTEXT",
		"listener.name.client.ssl.client.auth=required", "ssl.client.auth=none", "listener.name.client.plain.sasl.jaas.config=X required;"})
	if err != nil {
		t.Fatal(err)
	}
	if v.ListenerValue("CLIENT", "ssl.client.auth") != "required" || v.ListenerValue("INTERNAL", "ssl.client.auth") != "none" {
		t.Fatal("per-listener override")
	}
	for _, bad := range [][]string{
		{"listeners=PLAINTEXT://:9092,PLAINTEXT://:9093"},
		{"listeners=FOO://:9092"},
		{"listeners=PLAINTEXT://:9092", "advertised.listeners=SSL://h:1"},
		{"listener.security.protocol.map=A:KERBEROS"},
		{"listener.name.x.ssl.client.auth=sometimes"},
		{"listener.name.x.unknown.key=1"},
		{"authorizer.class.name=com.example.MyAuthorizer"},
		{"sasl.server.callback.handler.class=com.example.Handler"},
		{"listeners=PLAINTEXT://:9092", "inter.broker.listener.name=OTHER"},
		{"listeners=PLAINTEXT://:9092", "inter.broker.listener.name=PLAINTEXT", "security.inter.broker.protocol=PLAINTEXT"},
	} {
		if _, err := Parse(nil, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestInterBrokerListener: inter.broker.listener.name (normalised to upper case), else the
// listener named after security.inter.broker.protocol, as Kafka's interBrokerListenerName.
func TestInterBrokerListener(t *testing.T) {
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{nil, "PLAINTEXT"},
		{[]string{"listeners=internal://:9092,CLIENT://:9093", "listener.security.protocol.map=INTERNAL:SSL,CLIENT:SASL_SSL", "inter.broker.listener.name=internal"}, "INTERNAL"},
		{[]string{"listeners=SASL_SSL://:9093", "security.inter.broker.protocol=SASL_SSL"}, "SASL_SSL"},
	} {
		v, err := Parse(nil, c.kv)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.InterBrokerListener(); got != c.want {
			t.Errorf("%v: inter-broker listener %s, want %s", c.kv, got, c.want)
		}
	}
}
