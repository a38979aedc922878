package config

import "testing"

// TestLogRetentionPrecedence: log.retention.ms beats .minutes beats .hours
// (Kafka's precedence); negative means unlimited (-1).
func TestLogRetentionPrecedence(t *testing.T) {
	cases := []struct {
		overrides []string
		want      int64
	}{
		{nil, 168 * 3_600_000},
		{[]string{"log.retention.hours=1"}, 3_600_000},
		{[]string{"log.retention.hours=1", "log.retention.minutes=2"}, 120_000},
		{[]string{"log.retention.hours=1", "log.retention.minutes=2", "log.retention.ms=5"}, 5},
		{[]string{"log.retention.ms=-1"}, -1},
		{[]string{"log.retention.hours=-1"}, -1},
		{[]string{"log.retention.ms=0"}, 0},
	}
	for _, c := range cases {
		if got := Defaults(c.overrides...).LogRetentionMs(); got != c.want {
			t.Errorf("%v: %d, want %d", c.overrides, got, c.want)
		}
	}
	v := Defaults()
	if v.Int("log.retention.bytes") != -1 || v.Ms("log.retention.check.interval.ms").Minutes() != 5 ||
		v.Ms("producer.id.expiration.ms").Hours() != 24 {
		t.Fatal("retention/producer defaults")
	}
	if _, err := Parse(nil, []string{"log.retention.ms=-2"}); err == nil {
		t.Fatal("log.retention.ms=-2 accepted")
	}
	if _, err := Parse(nil, []string{"producer.id.expiration.ms=0"}); err == nil {
		t.Fatal("producer.id.expiration.ms=0 accepted")
	}
}
