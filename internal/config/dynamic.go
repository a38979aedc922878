package config

import (
	"sort"
	"strings"
)

// Mode is how a broker key may change at runtime, as Kafka's DynamicBrokerConfig classifies it.
type Mode int

// The update modes Kafka documents for broker configs.
const (
	ReadOnly    Mode = iota // only in the static config; restart to change
	ClusterWide             // dynamic, for one broker or as the cluster default
	PerBroker               // dynamic, only for a named broker
)

func (m Mode) String() string {
	switch m {
	case ClusterWide:
		return "cluster-wide"
	case PerBroker:
		return "per-broker"
	}
	return "read-only"
}

// dynamicModes are the broker keys of muster's that Kafka lets IncrementalAlterConfigs and
// AlterConfigs change (DynamicBrokerConfig.AllDynamicConfigs: LogCleaner.ReconfigurableConfigs,
// DynamicLogConfig.ReconfigurableConfigs — the first broker synonym of every topic config —
// and the producer state configs). Every other key is read-only.
var dynamicModes = map[string]Mode{
	// LogCleaner.ReconfigurableConfigs
	"log.cleaner.threads":                 ClusterWide,
	"log.cleaner.dedupe.buffer.size":      ClusterWide,
	"log.cleaner.io.buffer.load.factor":   ClusterWide,
	"log.cleaner.io.buffer.size":          ClusterWide,
	"message.max.bytes":                   ClusterWide,
	"log.cleaner.io.max.bytes.per.second": ClusterWide,
	"log.cleaner.backoff.ms":              ClusterWide,
	// DynamicLogConfig.ReconfigurableConfigs
	"log.segment.bytes":                   ClusterWide,
	"log.roll.ms":                         ClusterWide,
	"log.roll.jitter.ms":                  ClusterWide,
	"log.index.size.max.bytes":            ClusterWide,
	"log.flush.interval.messages":         ClusterWide,
	"log.flush.interval.ms":               ClusterWide,
	"log.retention.bytes":                 ClusterWide,
	"log.retention.ms":                    ClusterWide,
	"log.index.interval.bytes":            ClusterWide,
	"log.cleaner.delete.retention.ms":     ClusterWide,
	"log.cleaner.min.compaction.lag.ms":   ClusterWide,
	"log.cleaner.max.compaction.lag.ms":   ClusterWide,
	"log.segment.delete.delay.ms":         ClusterWide,
	"log.cleaner.min.cleanable.ratio":     ClusterWide,
	"log.cleanup.policy":                  ClusterWide,
	"unclean.leader.election.enable":      ClusterWide,
	"min.insync.replicas":                 ClusterWide,
	"compression.type":                    ClusterWide,
	"compression.gzip.level":              ClusterWide,
	"compression.lz4.level":               ClusterWide,
	"compression.zstd.level":              ClusterWide,
	"log.preallocate":                     ClusterWide,
	"log.message.timestamp.type":          ClusterWide,
	"log.message.timestamp.before.max.ms": ClusterWide,
	"log.message.timestamp.after.max.ms":  ClusterWide,
	"log.local.retention.ms":              ClusterWide,
	"log.local.retention.bytes":           ClusterWide,
	// DynamicProducerStateManagerConfig
	"producer.id.expiration.ms": ClusterWide,
}

// DynamicMode returns how broker key name may change at runtime.
func DynamicMode(name string) Mode { return dynamicModes[name] }

// Lookup returns the broker key called name.
func Lookup(name string) (*Def, bool) {
	d, ok := defsByName[name]
	return d, ok
}

// BrokerSynonyms lists the broker keys that set the same value as name, in Kafka's precedence
// (DynamicBrokerConfig.brokerConfigSynonyms): log.retention.ms/.minutes/.hours,
// log.roll.ms/.hours, log.roll.jitter.ms/.hours, log.flush.interval.ms and
// log.flush.scheduler.interval.ms; any other key is its own only synonym.
func BrokerSynonyms(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	return []string{name}
}

// Source is where a config value comes from, numbered as Kafka's DescribeConfigs ConfigSource.
type Source int8

// The config sources DescribeConfigs reports.
const (
	SourceDynamicTopic         Source = 1
	SourceDynamicBroker        Source = 2
	SourceDynamicDefaultBroker Source = 3
	SourceStaticBroker         Source = 4
	SourceDefault              Source = 5
	SourceGroup                Source = 8
)

// Synonym is one value a config takes at one level (DescribeConfigs' ConfigSynonyms); Value is
// nil for a key without a value.
type Synonym struct {
	Name   string
	Value  *string
	Source Source
}

// Layers are the levels a broker config value comes from, in Kafka's precedence: the dynamic
// config of this broker, the dynamic cluster default, the static config (file and overrides),
// Kafka's default.
type Layers struct {
	Static         *Values
	DynamicDefault map[string]string
	DynamicBroker  map[string]string
}

// Effective is the configuration in force: Static with the cluster-default dynamic configs and
// then this broker's dynamic configs applied on top.
func (l Layers) Effective() *Values {
	return l.Static.With(l.DynamicDefault).With(l.DynamicBroker)
}

// Synonyms lists the values of name's synonyms level by level (this broker's dynamic configs,
// the dynamic defaults, the static config, Kafka's defaults; within a level in synonym order),
// dropping what precedes name's own first entry, as Kafka's ConfigHelper.configSynonyms does.
// The first entry, if any, is where the value in force comes from.
func (l Layers) Synonyms(name string, synonyms []string) []Synonym {
	var out []Synonym
	add := func(src Source, get func(string) (string, bool)) {
		for _, s := range synonyms {
			if v, ok := get(s); ok {
				v := v
				out = append(out, Synonym{Name: s, Value: &v, Source: src})
			}
		}
	}
	fromMap := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	add(SourceDynamicBroker, fromMap(l.DynamicBroker))
	add(SourceDynamicDefaultBroker, fromMap(l.DynamicDefault))
	add(SourceStaticBroker, func(k string) (string, bool) {
		if l.Static == nil || !l.Static.IsSet(k) {
			return "", false
		}
		return l.Static.raw[k], true
	})
	add(SourceDefault, func(k string) (string, bool) {
		d, ok := defsByName[k]
		if !ok || d.Default == "" {
			return "", false
		}
		return d.Default, true
	})
	for i, s := range out {
		if s.Name == name {
			return out[i:]
		}
	}
	return nil
}

// With returns a copy of v with overrides applied as if they had been given explicitly (nil or
// empty overrides return v itself). The values must have been validated.
func (v *Values) With(overrides map[string]string) *Values {
	if len(overrides) == 0 {
		return v
	}
	raw := make(map[string]string, len(v.raw)+len(overrides))
	for k, x := range v.raw {
		raw[k] = x
	}
	for k, x := range overrides {
		raw[k] = strings.TrimSpace(x)
	}
	return &Values{raw: raw}
}

// Value returns name's value in v and whether it has one (set explicitly, or a non-empty
// default).
func (v *Values) Value(name string) (string, bool) {
	if s, ok := v.raw[name]; ok {
		return s, true
	}
	if d, ok := defsByName[name]; ok && d.Default != "" {
		return d.Default, true
	}
	return "", false
}

// Names lists every broker key, sorted.
func Names() []string {
	out := make([]string, 0, len(Defs))
	for _, d := range Defs {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// CrossCheck lists the problems between keys of v (a minimum above its maximum, …), as Parse
// reports them; a dynamic change must not introduce any.
func (v *Values) CrossCheck() []string { return v.crossChecks() }
