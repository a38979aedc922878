package config

import (
	"strings"
	"testing"
)

// Every problem is reported in one pass: bad values, unknown keys and cross-key problems of the
// keys that did parse.
func TestEveryProblemAtOnce(t *testing.T) {
	_, err := Parse(nil, []string{"node.id=x", "foo=1", "advertised.listeners=garbage",
		"group.min.session.timeout.ms=9000000", "group.consumer.min.session.timeout.ms=70000"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"node.id=\"x\"", "foo: unknown config key", "advertised.listeners=\"garbage\"",
		"group.min.session.timeout.ms must not exceed", "group.consumer.min.session.timeout.ms=70000 must not exceed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
