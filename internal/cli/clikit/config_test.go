package clikit

import (
	"reflect"
	"strings"
	"testing"
)

// Moved from the consumer-groups reset parsing test with the loader.
func TestCommandConfigProperties(t *testing.T) {
	props, err := parseProperties(strings.NewReader("# c\nclient.id = x\nsasl.jaas.config=a \\\n  b\nssl.truststore.location: /tmp/t\nflag\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"client.id": "x", "sasl.jaas.config": "a b", "ssl.truststore.location": "/tmp/t", "flag": ""}
	if !reflect.DeepEqual(props, want) {
		t.Errorf("props %v, want %v", props, want)
	}
	var errb strings.Builder
	if _, err := clientOptions(map[string]string{"ssl.keystore.password": "k", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`}, true, &errb); err != nil {
		t.Fatal(err)
	}
	if errb.String() != "Ignoring unsupported client config 'ssl.keystore.password'.\n" {
		t.Errorf("stderr %q", errb.String())
	}
	if _, err := clientOptions(map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"}, false, &errb); err == nil {
		t.Error("OAUTHBEARER accepted")
	}
}
