package config

import (
	"testing"
	"time"
)

func strp(s string) *string { return &s }

// Values are checked with Kafka's ConfigDef messages.
func TestKafkaCheckMessages(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"segment.bytes", "1000", "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"},
		{"retention.ms", "abc", "Invalid value abc for configuration retention.ms: Not a number of type LONG"},
		{"max.message.bytes", "x", "Invalid value x for configuration max.message.bytes: Not a number of type INT"},
		{"min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"},
		{"cleanup.policy", "compact,bogus", "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete"},
		{"message.timestamp.type", "Now", "Invalid value Now for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"},
		{"preallocate", "yes", "Invalid value yes for configuration preallocate: Expected value to be either true or false"},
		{"compression.gzip.level", "12", "Invalid value 12 for configuration compression.gzip.level: Value must be between 1 and 9"},
		{"cleanup.policy", "compact, delete", ""},
		{"min.cleanable.dirty.ratio", "0.01", ""},
	}
	for _, c := range cases {
		d, ok := LookupTopic(c.name)
		if !ok {
			t.Fatalf("no topic config %s", c.name)
		}
		if got := d.KafkaCheck(c.value); got != c.want {
			t.Errorf("%s=%s: %q, want %q", c.name, c.value, got, c.want)
		}
	}
}

// A topic config's default comes from the broker's synonyms in Kafka's precedence.
func TestTopicDefaultsFromBrokerSynonyms(t *testing.T) {
	v := Defaults("log.roll.hours=2", "log.cleaner.min.cleanable.ratio=0.25", "log.cleanup.policy=compact")
	for name, want := range map[string]string{
		"segment.ms": "7200000", "min.cleanable.dirty.ratio": "0.25", "cleanup.policy": "compact",
		"retention.ms": "604800000", "segment.bytes": "1073741824", "max.message.bytes": "1048588",
		"delete.retention.ms": "86400000", "remote.storage.enable": "false",
	} {
		if got := v.TopicDefault(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got := Defaults("log.roll.hours=2", "log.roll.ms=5").TopicDefault("segment.ms"); got != "5" {
		t.Errorf("log.roll.ms must win: %s", got)
	}
	v = Defaults().With(map[string]string{"log.retention.ms": "1000"})
	if got := v.TopicDefault("retention.ms"); got != "1000" {
		t.Errorf("dynamic log.retention.ms: %s", got)
	}
}

// Synonyms list level by level and drop what precedes the described key, as Kafka's
// ConfigHelper does (so retention.ms backed only by log.retention.hours has no synonyms).
func TestLayersSynonyms(t *testing.T) {
	l := Layers{Static: Defaults("log.retention.hours=1"), DynamicDefault: map[string]string{"log.retention.ms": "5000"}}
	s := l.Synonyms("log.retention.ms", BrokerSynonyms("log.retention.ms"))
	if len(s) != 3 || s[0].Source != SourceDynamicDefaultBroker || *s[0].Value != "5000" ||
		s[1].Name != "log.retention.hours" || s[1].Source != SourceStaticBroker || s[2].Source != SourceDefault {
		t.Fatalf("synonyms %+v", s)
	}
	l.DynamicDefault = nil
	if s := l.Synonyms("log.retention.ms", BrokerSynonyms("log.retention.ms")); len(s) != 0 {
		t.Fatalf("want none, got %+v", s)
	}
	if s := l.Synonyms("log.segment.bytes", BrokerSynonyms("log.segment.bytes")); len(s) != 1 || s[0].Source != SourceDefault {
		t.Fatalf("segment bytes %+v", s)
	}
	if got := l.Effective().LogRetentionMs(); got != 3_600_000 {
		t.Fatalf("effective %d", got)
	}
}

func TestValidateTopicConfigs(t *testing.T) {
	v := Defaults()
	cases := []struct {
		cfgs map[string]*string
		want string
	}{
		{map[string]*string{"bogus": strp("1")}, "Unknown topic config name: bogus"},
		{map[string]*string{"retention.ms": nil}, "Null value not supported for topic configs: retention.ms"},
		{map[string]*string{"min.compaction.lag.ms": strp("10"), "max.compaction.lag.ms": strp("5")}, "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"},
		{map[string]*string{"remote.storage.enable": strp("true")}, "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."},
		{map[string]*string{"cleanup.policy": strp("compact,delete"), "segment.ms": strp("100")}, ""},
	}
	for _, c := range cases {
		if got := ValidateTopicConfigs(v, c.cfgs); got != c.want {
			t.Errorf("%v: %q, want %q", c.cfgs, got, c.want)
		}
	}
}

// Group configs are bounded by the broker's group.* min/max keys; a value set before the
// bounds narrowed is capped when read.
func TestGroupConfigs(t *testing.T) {
	v := Defaults()
	cases := []struct {
		cfgs map[string]*string
		want string
	}{
		{map[string]*string{"consumer.session.timeout.ms": strp("50000")}, ""},
		{map[string]*string{"consumer.session.timeout.ms": strp("1000")}, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."},
		{map[string]*string{"streams.num.standby.replicas": strp("3")}, "streams.num.standby.replicas must be less than or equal to 2"},
		{map[string]*string{"consumer.heartbeat.interval.ms": strp("x")}, "Invalid value x for configuration consumer.heartbeat.interval.ms: Not a number of type INT"},
		{map[string]*string{"nope": strp("1")}, "Unknown group config name: nope"},
		{map[string]*string{"share.auto.offset.reset": strp("by_duration:PT1H")}, ""},
		{map[string]*string{"share.auto.offset.reset": strp("sometime")}, "Invalid value sometime for configuration share.auto.offset.reset: String must be one of: latest, earliest, by_duration:PnDTnHnMn.nS"},
	}
	for _, c := range cases {
		if got := ValidateGroupConfigs(v, c.cfgs); got != c.want {
			t.Errorf("%v: %q, want %q", c.cfgs, got, c.want)
		}
	}
	v2 := Defaults("group.consumer.min.heartbeat.interval.ms=1000", "group.consumer.heartbeat.interval.ms=1000")
	if got := ValidateGroupConfigs(v2, map[string]*string{"consumer.heartbeat.interval.ms": strp("5000"), "consumer.session.timeout.ms": strp("45000")}); got != "" {
		t.Fatal(got)
	}
	g := NewGroupConfig(map[string]string{"consumer.session.timeout.ms": "59000"})
	if g.ConsumerSessionTimeout(v) != 59*time.Second || g.ConsumerHeartbeatInterval(v) != 5*time.Second {
		t.Fatal("effective group config")
	}
	narrow := Defaults("group.consumer.max.session.timeout.ms=50000")
	if g.ConsumerSessionTimeout(narrow) != 50*time.Second {
		t.Fatal("override must be capped to the broker's current max")
	}
}
