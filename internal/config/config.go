// Package config parses muster's broker configuration.
//
// Keys are Apache Kafka's broker config names (server.properties syntax: key=value lines,
// '#' or '!' comments, '\' line continuation). muster adds a few keys of its own, each
// documented in the table below. Parse collects every problem (unknown key, bad value, out of
// range) and reports them all at once, so an operator fixes a file in one pass.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a config value.
type Kind int

// The value kinds a key may have.
const (
	Int Kind = iota
	Long
	Bool
	String
	List
	Double
)

// Def describes one config key: its name, kind, default and bounds.
type Def struct {
	Name    string
	Kind    Kind
	Default string
	Min     *int64 // inclusive, numeric kinds only
	Max     *int64 // inclusive, numeric kinds only
	OneOf   []string
	Doc     string
	// FMin and FMax bound a Double key (inclusive).
	FMin, FMax *float64
	// Check is an extra Kafka validator (a Kafka ConfigDef validator such as a compression level
	// range): it returns the detail of Kafka's ConfigException, "" when v is valid.
	Check func(v string) string
}

func i64(v int64) *int64 { return &v }

// Defs is every key muster accepts, with Kafka's defaults unless noted: the broker and group keys
// below, then the log keys (logDefs), then muster's observability keys (observeDefs).
var Defs = append(append(brokerDefs, logDefs...), observeDefs...)

var brokerDefs = []Def{
	{Name: "node.id", Kind: Int, Default: "0", Min: i64(0), Doc: "broker id (Kafka)"},
	{Name: "broker.id", Kind: Int, Default: "-1", Min: i64(-1), Doc: "legacy alias of node.id; ignored when -1"},
	{Name: "advertised.listeners", Kind: String, Default: "", Doc: "NAME://host:port per listener that clients should use; default: the bound address"},
	{Name: "listeners", Kind: String, Default: "", Doc: "NAME://host:port,... listeners (names mapped by listener.security.protocol.map); --listen is a shortcut for one PLAINTEXT listener"},
	{Name: "broker.rack", Kind: String, Default: "", Doc: "rack of this broker (KIP-881/KIP-1101)"},
	{Name: "cluster.store.url", Kind: String, Default: "", Doc: "muster: cluster mode: postgres://user@host:port/db of the PostgreSQL database that muster nodes share (coordinator records, leases, node registry, ACLs, SCRAM credentials); empty: one node on the embedded Pebble store (--store sets it too)"},
	{Name: "cluster.lease.ttl.ms", Kind: Int, Default: "5000", Min: i64(1000), Doc: "muster: time-to-live of a cluster node's registration, which its shard leases live by; a node that stops renewing loses its shards to the others after it"},
	{Name: "cluster.id", Kind: String, Default: "", Doc: "muster: cluster id reported in Metadata; default derived from the data dir"},
	{Name: "log.dirs", Kind: String, Default: "", Doc: "accepted for compatibility; muster stores data in --data-dir"},
	{Name: "log.dir", Kind: String, Default: "", Doc: "accepted for compatibility; muster stores data in --data-dir"},
	{Name: "num.partitions", Kind: Int, Default: "1", Min: i64(1), Doc: "partitions of auto-created topics"},
	{Name: "default.replication.factor", Kind: Int, Default: "1", Min: i64(1), Max: i64(32767)},
	{Name: "auto.create.topics.enable", Kind: Bool, Default: "true"},
	{Name: "producer.id.expiration.ms", Kind: Int, Default: "86400000", Min: i64(1), Doc: "an idempotent producer's sequence state in a partition is dropped this long after its last append there"},
	{Name: "log.retention.ms", Kind: Long, Default: "", Min: i64(-1), Doc: "default retention.ms of topics; wins over log.retention.minutes and log.retention.hours when set; -1 = unlimited"},
	{Name: "log.retention.minutes", Kind: Int, Default: "", Min: i64(-1), Doc: "default retention of topics in minutes; wins over log.retention.hours when set"},
	{Name: "log.retention.hours", Kind: Int, Default: "168", Min: i64(-1), Doc: "default retention of topics in hours (used when neither log.retention.ms nor .minutes is set)"},
	{Name: "log.retention.bytes", Kind: Long, Default: "-1", Min: i64(-1), Doc: "default retention.bytes of topics (per partition); -1 = unlimited"},
	{Name: "log.retention.check.interval.ms", Kind: Long, Default: "300000", Min: i64(1), Doc: "how often retention.ms/retention.bytes are enforced"},
	{Name: "socket.request.max.bytes", Kind: Int, Default: "104857600", Min: i64(1)},
	{Name: "offsets.topic.num.partitions", Kind: Int, Default: "50", Min: i64(1), Doc: "coordinator shards; fixed when the data dir is created"},
	{Name: "offsets.topic.replication.factor", Kind: Int, Default: "1", Min: i64(1), Max: i64(32767)},
	{Name: "offsets.topic.compression.codec", Kind: Int, Default: "0", Min: i64(0), Max: i64(4), Doc: "compression of the record batches written to __consumer_offsets: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd"},
	{Name: "offsets.topic.segment.bytes", Kind: Int, Default: "104857600", Min: i64(1), Doc: "segment.bytes of __consumer_offsets when it is created"},
	{Name: "offset.metadata.max.bytes", Kind: Int, Default: "4096", Min: i64(0)},
	{Name: "offsets.retention.minutes", Kind: Int, Default: "10080", Min: i64(1)},
	{Name: "offsets.retention.ms", Kind: Long, Default: "-1", Min: i64(-1), Doc: "muster: finer retention; wins over offsets.retention.minutes when set"},
	{Name: "offsets.retention.check.interval.ms", Kind: Long, Default: "600000", Min: i64(1)},
	{Name: "transaction.state.log.num.partitions", Kind: Int, Default: "50", Min: i64(1), Doc: "transaction coordinator shards; fixed when the data dir is created"},
	{Name: "transaction.state.log.replication.factor", Kind: Int, Default: "1", Min: i64(1), Max: i64(32767), Doc: "accepted for compatibility; the single node holds the one replica"},
	{Name: "transaction.max.timeout.ms", Kind: Int, Default: "900000", Min: i64(1), Doc: "the largest transaction.timeout.ms a producer may ask for (larger: INVALID_TRANSACTION_TIMEOUT)"},
	{Name: "transactional.id.expiration.ms", Kind: Int, Default: "604800000", Min: i64(1), Doc: "a transactional id with no transaction in progress is removed this long after its last update"},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Kind: Int, Default: "10000", Min: i64(1), Doc: "how often transactions past their timeout are aborted"},
	{Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Kind: Int, Default: "3600000", Min: i64(1), Doc: "how often expired transactional ids are removed"},
	{Name: "transaction.partition.verification.enable", Kind: Bool, Default: "true", Doc: "KIP-890: a transactional produce is verified against the transaction coordinator before it is appended"},
	{Name: "offsets.commit.timeout.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.initial.rebalance.delay.ms", Kind: Int, Default: "3000", Min: i64(0)},
	{Name: "group.min.session.timeout.ms", Kind: Int, Default: "6000", Min: i64(0)},
	{Name: "group.max.session.timeout.ms", Kind: Int, Default: "1800000", Min: i64(0)},
	{Name: "group.max.size", Kind: Int, Default: "2147483647", Min: i64(1)},
	{Name: "group.coordinator.rebalance.protocols", Kind: List, Default: "classic,consumer,streams", OneOf: []string{"classic", "consumer", "streams", "share"}},
	{Name: "group.consumer.session.timeout.ms", Kind: Int, Default: "45000", Min: i64(1)},
	{Name: "group.consumer.min.session.timeout.ms", Kind: Int, Default: "45000", Min: i64(1)},
	{Name: "group.consumer.max.session.timeout.ms", Kind: Int, Default: "60000", Min: i64(1)},
	{Name: "group.consumer.heartbeat.interval.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.consumer.min.heartbeat.interval.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.consumer.max.heartbeat.interval.ms", Kind: Int, Default: "15000", Min: i64(1)},
	{Name: "group.consumer.max.size", Kind: Int, Default: "2147483647", Min: i64(1)},
	{Name: "group.consumer.assignors", Kind: List, Default: "uniform,range", OneOf: []string{"uniform", "range"}},
	{Name: "group.consumer.migration.policy", Kind: String, Default: "bidirectional", OneOf: []string{"disabled", "upgrade", "downgrade", "bidirectional"}},
	{Name: "group.consumer.regex.refresh.interval.ms", Kind: Int, Default: "600000", Min: i64(10000)},
	{Name: "group.consumer.assignment.interval.ms", Kind: Int, Default: "1000", Min: i64(0), Max: i64(15000), Doc: "a consumer group's new target assignment is computed at most once per interval (Kafka 4.3)"},
	{Name: "group.streams.session.timeout.ms", Kind: Int, Default: "45000", Min: i64(1)},
	{Name: "group.streams.min.session.timeout.ms", Kind: Int, Default: "45000", Min: i64(1)},
	{Name: "group.streams.max.session.timeout.ms", Kind: Int, Default: "60000", Min: i64(1)},
	{Name: "group.streams.heartbeat.interval.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.streams.min.heartbeat.interval.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.streams.max.heartbeat.interval.ms", Kind: Int, Default: "15000", Min: i64(1)},
	{Name: "group.streams.max.size", Kind: Int, Default: "2147483647", Min: i64(1)},
	{Name: "group.streams.num.standby.replicas", Kind: Int, Default: "0", Min: i64(0), Max: i64(2)},
	{Name: "group.streams.num.warmup.replicas", Kind: Int, Default: "2", Min: i64(0), Max: i64(100)},
	{Name: "group.streams.initial.rebalance.delay.ms", Kind: Int, Default: "3000", Min: i64(0)},
	{Name: "group.streams.max.standby.replicas", Kind: Int, Default: "2", Min: i64(0), Doc: "upper bound of the streams.num.standby.replicas group config"},
	{Name: "group.share.enable", Kind: Bool, Default: "true", Doc: "muster: serve KIP-932 share groups (Kafka 4.2 enables them with the share.version feature)"},
	{Name: "group.share.max.size", Kind: Int, Default: "200", Min: i64(1), Max: i64(1000), Doc: "the most members a share group may have"},
	{Name: "group.share.max.share.sessions", Kind: Int, Default: "2000", Min: i64(1), Doc: "the most share sessions the broker keeps at once"},
	{Name: "group.share.session.timeout.ms", Kind: Int, Default: "45000", Min: i64(1), Doc: "the timeout to detect failed members of a share group (default of share.session.timeout.ms)"},
	{Name: "group.share.min.session.timeout.ms", Kind: Int, Default: "45000", Min: i64(1)},
	{Name: "group.share.max.session.timeout.ms", Kind: Int, Default: "60000", Min: i64(1)},
	{Name: "group.share.heartbeat.interval.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.share.min.heartbeat.interval.ms", Kind: Int, Default: "5000", Min: i64(1)},
	{Name: "group.share.max.heartbeat.interval.ms", Kind: Int, Default: "15000", Min: i64(1)},
	{Name: "group.share.record.lock.duration.ms", Kind: Int, Default: "30000", Min: i64(1000)},
	{Name: "group.share.min.record.lock.duration.ms", Kind: Int, Default: "15000", Min: i64(1000)},
	{Name: "group.share.max.record.lock.duration.ms", Kind: Int, Default: "60000", Min: i64(1000)},
	{Name: "group.share.delivery.count.limit", Kind: Int, Default: "5", Min: i64(2), Max: i64(10)},
	{Name: "group.share.min.delivery.count.limit", Kind: Int, Default: "2", Min: i64(2), Max: i64(10)},
	{Name: "group.share.max.delivery.count.limit", Kind: Int, Default: "10", Min: i64(2), Max: i64(10)},
	{Name: "group.share.partition.max.record.locks", Kind: Int, Default: "2000", Min: i64(100), Max: i64(10000)},
	{Name: "group.share.min.partition.max.record.locks", Kind: Int, Default: "100", Min: i64(100), Max: i64(10000)},
	{Name: "group.share.max.partition.max.record.locks", Kind: Int, Default: "10000", Min: i64(100), Max: i64(10000)},
	{Name: "group.streams.topology.description.plugin.class", Kind: String, Default: "", Doc: "KIP-1331 plugin: '' (off), memory, disk or http"},
	{Name: "group.streams.topology.description.plugin.max.bytes", Kind: Int, Default: "1048576", Min: i64(1)},
	{Name: "group.streams.topology.description.plugin.http.url", Kind: String, Default: ""},
	{Name: "group.streams.topology.description.backoff.initial.ms", Kind: Long, Default: "30000", Min: i64(1)},
	{Name: "group.streams.topology.description.backoff.max.ms", Kind: Long, Default: "3600000", Min: i64(1)},
	{Name: "group.streams.topology.description.inflight.timeout.ms", Kind: Long, Default: "30000", Min: i64(1)},
	{Name: "muster.max.connections", Kind: Int, Default: "10000", Min: i64(1), Doc: "muster: connections accepted at once; more are closed at accept"},
	{Name: "muster.connection.max.inflight.bytes", Kind: Int, Default: "104857600", Min: i64(1), Doc: "muster: request bytes one connection may have in flight before reading pauses"},
	{Name: "muster.shard.queue.depth", Kind: Int, Default: "4096", Min: i64(1), Doc: "muster: queued operations per coordinator shard before callers wait (backpressure)"},
	{Name: "muster.storage.min.free.bytes", Kind: Long, Default: "1073741824", Min: i64(0), Doc: "muster: free bytes on the data dir's file system below which writes that grow the store (Produce, CreateTopics, CreatePartitions, group writes) are refused with retriable errors; deletes go on. The larger of this and muster.storage.min.free.ratio applies; writes resume at 110 % of it. Keep it at least 256 MiB (Pebble's WAL, flushes and compactions need room); 0 with a ratio of 0 turns the guard off"},
	{Name: "muster.storage.min.free.ratio", Kind: Double, Default: "0.05", FMin: f64(0), FMax: f64(0.9), Doc: "muster: share of the data dir's file system that must stay free (see muster.storage.min.free.bytes)"},
}

var defsByName = func() map[string]*Def {
	m := make(map[string]*Def, len(Defs)+len(securityDefs))
	for i := range Defs {
		m[Defs[i].Name] = &Defs[i]
	}
	for i := range securityDefs {
		m[securityDefs[i].Name] = &securityDefs[i]
	}
	return m
}()

// Values is a validated set of config values, keyed by name.
type Values struct {
	raw map[string]string
}

// Parse reads server.properties text (may be nil) and applies overrides (key=value strings,
// later wins). Every problem is collected; the returned error lists them all (one per line).
func Parse(props io.Reader, overrides []string) (*Values, error) {
	raw := map[string]string{}
	var problems []string
	if props != nil {
		kv, err := readProperties(props)
		if err != nil {
			problems = append(problems, err.Error())
		}
		for k, v := range kv {
			raw[k] = v
		}
	}
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			problems = append(problems, fmt.Sprintf("override %q: want key=value", o))
			continue
		}
		raw[k] = strings.TrimSpace(v)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := map[string]bool{}
	for _, k := range keys {
		d, ok := defsByName[k]
		if !ok {
			d = listenerKeyDef(k)
			ok = d != nil
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: unknown config key", k))
			continue
		}
		if err := d.check(raw[k]); err != nil {
			problems = append(problems, fmt.Sprintf("%s=%q: %v", k, raw[k], err))
			bad[k] = true
		}
	}
	// Cross-key checks run on the keys that parsed (a bad key falls back to its default here),
	// so one pass reports every problem.
	good := map[string]string{}
	for k, val := range raw {
		if !bad[k] {
			good[k] = val
		}
	}
	problems = append(problems, (&Values{raw: good}).crossChecks()...)
	v := &Values{raw: raw}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return v, nil
}

// ParseFile is Parse over a file path ("" = no file).
func ParseFile(path string, overrides []string) (*Values, error) {
	if path == "" {
		return Parse(nil, overrides)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	return Parse(f, overrides)
}

// Defaults returns the default configuration, with overrides applied; it panics on a bad
// override and is meant for tests.
func Defaults(overrides ...string) *Values {
	v, err := Parse(nil, overrides)
	if err != nil {
		panic(err)
	}
	return v
}

func (v *Values) crossChecks() []string {
	var p []string
	if lo, hi := v.Int("log.cleaner.min.compaction.lag.ms"), v.Int("log.cleaner.max.compaction.lag.ms"); lo > hi {
		p = append(p, fmt.Sprintf("log.cleaner.min.compaction.lag.ms=%d must not exceed log.cleaner.max.compaction.lag.ms=%d", lo, hi))
	}
	if v.Int("group.min.session.timeout.ms") > v.Int("group.max.session.timeout.ms") {
		p = append(p, "group.min.session.timeout.ms must not exceed group.max.session.timeout.ms")
	}
	for _, g := range []string{"consumer", "streams"} {
		pre := "group." + g + "."
		for _, what := range []string{"session.timeout.ms", "heartbeat.interval.ms"} {
			lo, hi, val := v.Int(pre+"min."+what), v.Int(pre+"max."+what), v.Int(pre+what)
			switch {
			case lo > hi:
				p = append(p, fmt.Sprintf("%smin.%s=%d must not exceed %smax.%s=%d", pre, what, lo, pre, what, hi))
			case val < lo || val > hi:
				p = append(p, fmt.Sprintf("%s%s=%d must lie within [%smin.%s, %smax.%s] = [%d, %d]", pre, what, val, pre, what, pre, what, lo, hi))
			}
		}
		if v.Int(pre+"heartbeat.interval.ms") >= v.Int(pre+"session.timeout.ms") {
			p = append(p, pre+"heartbeat.interval.ms must be lower than "+pre+"session.timeout.ms")
		}
	}
	p = append(p, v.listenerChecks()...)
	switch v.String("group.streams.topology.description.plugin.class") {
	case "", "memory", "disk":
	case "http":
		if v.String("group.streams.topology.description.plugin.http.url") == "" {
			p = append(p, "group.streams.topology.description.plugin.class=http needs group.streams.topology.description.plugin.http.url")
		}
	default:
		p = append(p, fmt.Sprintf("group.streams.topology.description.plugin.class=%q: want memory, disk or http", v.String("group.streams.topology.description.plugin.class")))
	}
	return p
}

func (d *Def) check(s string) error {
	switch d.Kind {
	case Int, Long:
		bits := 32
		if d.Kind == Long {
			bits = 64
		}
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return fmt.Errorf("not a %d-bit integer", bits)
		}
		if d.Min != nil && n < *d.Min {
			return fmt.Errorf("must be at least %d", *d.Min)
		}
		if d.Max != nil && n > *d.Max {
			return fmt.Errorf("must be at most %d", *d.Max)
		}
		if d.Check != nil {
			if msg := d.Check(s); msg != "" {
				return errors.New(msg)
			}
		}
	case Bool:
		if _, err := strconv.ParseBool(s); err != nil {
			return errors.New("not a boolean (true/false)")
		}
	case String:
		if len(d.OneOf) > 0 && !contains(d.OneOf, s) {
			return fmt.Errorf("must be one of %s", strings.Join(d.OneOf, ", "))
		}
	case Double:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return errors.New("not a number")
		}
		if d.FMin != nil && f < *d.FMin {
			return fmt.Errorf("must be at least %v", *d.FMin)
		}
		if d.FMax != nil && f > *d.FMax {
			return fmt.Errorf("must be at most %v", *d.FMax)
		}
	case List:
		for _, e := range splitList(s) {
			if len(d.OneOf) > 0 && !contains(d.OneOf, e) {
				return fmt.Errorf("element %q must be one of %s", e, strings.Join(d.OneOf, ", "))
			}
		}
	}
	return nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func (v *Values) get(name string) string {
	if s, ok := v.raw[name]; ok {
		return s
	}
	d, ok := defsByName[name]
	if !ok {
		panic("config: undeclared key " + name)
	}
	return d.Default
}

// IsSet reports whether name was given explicitly (file or override).
func (v *Values) IsSet(name string) bool { _, ok := v.raw[name]; return ok }

// Int returns an Int or Long key's value.
func (v *Values) Int(name string) int64 {
	n, _ := strconv.ParseInt(v.get(name), 10, 64)
	return n
}

// Ms returns a millisecond key as a duration.
func (v *Values) Ms(name string) time.Duration { return time.Duration(v.Int(name)) * time.Millisecond }

// Bool returns a Bool key's value.
func (v *Values) Bool(name string) bool { b, _ := strconv.ParseBool(v.get(name)); return b }

// String returns a String key's value.
func (v *Values) String(name string) string { return v.get(name) }

// Float returns a Double key's value.
func (v *Values) Float(name string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(v.get(name)), 64)
	return f
}

// List returns a List key's elements.
func (v *Values) List(name string) []string { return splitList(v.get(name)) }

// NodeID is node.id, or broker.id when only that legacy key is set.
func (v *Values) NodeID() int32 {
	if !v.IsSet("node.id") && v.Int("broker.id") >= 0 {
		return int32(v.Int("broker.id"))
	}
	return int32(v.Int("node.id"))
}

// OffsetsRetention is offsets.retention.ms when set, else offsets.retention.minutes.
func (v *Values) OffsetsRetention() time.Duration {
	if ms := v.Int("offsets.retention.ms"); ms >= 0 && v.IsSet("offsets.retention.ms") {
		return time.Duration(ms) * time.Millisecond
	}
	return time.Duration(v.Int("offsets.retention.minutes")) * time.Minute
}

// LogRetentionMs is the broker's default topic retention in milliseconds, with Kafka's
// precedence: log.retention.ms, else log.retention.minutes, else log.retention.hours. A
// negative result is -1 (unlimited).
func (v *Values) LogRetentionMs() int64 {
	var ms int64
	switch {
	case v.IsSet("log.retention.ms"):
		ms = v.Int("log.retention.ms")
	case v.IsSet("log.retention.minutes"):
		ms = v.Int("log.retention.minutes") * 60_000
	default:
		ms = v.Int("log.retention.hours") * 3_600_000
	}
	if ms < 0 {
		return -1
	}
	return ms
}

// readProperties parses Java .properties text: key=value, key:value or key value; '#'/'!'
// comments; trailing '\' continues a line.
func readProperties(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var cont strings.Builder
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if cont.Len() == 0 && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\"))
			continue
		}
		cont.WriteString(line)
		full := cont.String()
		cont.Reset()
		i := strings.IndexAny(full, "=: \t")
		var k, val string
		if i < 0 {
			k = full
		} else {
			k = full[:i]
			val = strings.TrimLeft(full[i:], " \t")
			if val != "" && (val[0] == '=' || val[0] == ':') {
				val = strings.TrimLeft(val[1:], " \t")
			}
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading properties (line %d): %w", lineNo, err)
	}
	return out, nil
}
