package data

import (
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// configChange is one resource's requested config change: the whole new set of overrides
// (AlterConfigs, legacy) or incremental operations (IncrementalAlterConfigs).
type configChange struct {
	typ    kmsg.ConfigResourceType
	name   string
	legacy bool
	set    map[string]*string // legacy: the new overrides
	ops    []configOp         // incremental
}

// configOp is one IncrementalAlterConfigs operation.
type configOp struct {
	name  string
	op    kmsg.IncrementalAlterConfigOp
	value *string
}

func kafkaErr(code *kerr.Error, msg string) *apiError {
	return &apiError{code: code, msg: msg, kafkaMsg: true}
}

// preprocess applies the checks Kafka's ConfigAdminManager makes before any resource type is
// considered: duplicate keys, null values (for an operation other than DELETE) and unknown
// operations are INVALID_REQUEST.
func (c *configChange) preprocess() *apiError {
	seen := map[string]bool{}
	var nulls []string
	dup := false
	check := func(name string, value *string, isDelete bool) {
		dup = dup || seen[name]
		seen[name] = true
		if value == nil && !isDelete {
			nulls = append(nulls, name)
		}
	}
	if c.legacy {
		names := make([]string, 0, len(c.set))
		for n := range c.set {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			check(n, c.set[n], false)
		}
	} else {
		for _, o := range c.ops {
			if o.op < kmsg.IncrementalAlterConfigOpSet || o.op > kmsg.IncrementalAlterConfigOpSubtract {
				return kafkaErr(kerr.InvalidRequest, "Unknown operations type "+strconv.Itoa(int(o.op)))
			}
			check(o.name, o.value, o.op == kmsg.IncrementalAlterConfigOpDelete)
		}
	}
	if dup {
		return kafkaErr(kerr.InvalidRequest, "Error due to duplicate config keys")
	}
	if len(nulls) > 0 {
		return kafkaErr(kerr.InvalidRequest, "Null value not supported for : "+strings.Join(nulls, ", "))
	}
	return nil
}

// apply computes the new overrides from current. isList and defaultOf describe the resource's
// configs for APPEND and SUBTRACT, which only LIST configs accept (listErr builds the error).
func (c *configChange) apply(current map[string]string, isList func(string) bool, defaultOf func(string) string, listErr func(op, name string) *apiError) (map[string]string, *apiError) {
	if c.legacy {
		out := make(map[string]string, len(c.set))
		for k, v := range c.set {
			out[k] = *v
		}
		return out, nil
	}
	out := copyMap(current)
	for _, o := range c.ops {
		switch o.op {
		case kmsg.IncrementalAlterConfigOpSet:
			out[o.name] = *o.value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, o.name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			opName := "APPEND"
			if o.op == kmsg.IncrementalAlterConfigOpSubtract {
				opName = "SUBTRACT"
			}
			if !isList(o.name) {
				return nil, listErr(opName, o.name)
			}
			old, ok := out[o.name]
			if !ok {
				old = defaultOf(o.name)
			}
			var parts []string
			for _, s := range strings.Split(old, ",") {
				if s != "" {
					parts = append(parts, s)
				}
			}
			for _, v := range strings.Split(*o.value, ",") {
				if o.op == kmsg.IncrementalAlterConfigOpAppend {
					if !containsStr(parts, v) {
						parts = append(parts, v)
					}
					continue
				}
				for i, s := range parts {
					if s == v {
						parts = append(parts[:i], parts[i+1:]...)
						break
					}
				}
			}
			out[o.name] = strings.Join(parts, ",")
		}
	}
	return out, nil
}

func toPtrMap(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		v := v
		out[k] = &v
	}
	return out
}

// alterConfigs validates one resource's change and, unless validateOnly, applies it durably and
// at once. Kafka's rules per resource type:
//
//   - TOPIC: the topic's new overrides must pass Kafka's LogConfig validation
//     (INVALID_CONFIG); the topic must exist (UNKNOWN_TOPIC_OR_PARTITION); "" is
//     INVALID_REQUEST, a bad name INVALID_TOPIC_EXCEPTION. Retention, cleanup policy, segment,
//     compaction and size settings apply from the next append, retention check or cleaning.
//   - BROKER: "" (the cluster default) or this broker's id (else INVALID_REQUEST); only the keys
//     Kafka marks dynamic (DynamicBrokerConfig) may change, others are INVALID_REQUEST "Cannot
//     update these configs dynamically"; a bad value is INVALID_REQUEST (KAFKA-13609); an unknown
//     key INVALID_CONFIG. Topics without an override follow the new defaults at once.
//   - GROUP: Kafka's GroupConfig validation with the broker's group.* bounds (INVALID_CONFIG);
//     "" is INVALID_REQUEST. The group need not exist.
func (p *Plane) alterConfigs(c *configChange, validateOnly bool) *apiError {
	if aerr := c.preprocess(); aerr != nil {
		return aerr
	}
	switch c.typ {
	case kmsg.ConfigResourceTypeTopic:
		return p.alterTopicConfigs(c, validateOnly)
	case kmsg.ConfigResourceTypeBroker:
		return p.alterBrokerConfigs(c, validateOnly)
	case kmsg.ConfigResourceTypeGroupConfig:
		return p.alterGroupConfigs(c, validateOnly)
	}
	return kafkaErr(kerr.InvalidRequest, "Unknown resource type "+strconv.Itoa(int(c.typ)))
}

func notListErr(op, name string) *apiError {
	return kafkaErr(kerr.InvalidConfig, "Can't "+op+" to key "+name+" because its type is not LIST.")
}

func (p *Plane) alterTopicConfigs(c *configChange, validateOnly bool) *apiError {
	if c.name == "" {
		return kafkaErr(kerr.InvalidRequest, "Default topic resources are not allowed.")
	}
	if msg := validTopicName(c.name); msg != "" {
		return errf(kerr.InvalidTopicException, "%s", msg)
	}
	p.adminMu.Lock()
	defer p.adminMu.Unlock()
	t, parts := p.lookup(c.name)
	current := map[string]string{}
	if t != nil {
		p.mu.RLock()
		current = t.configs
		p.mu.RUnlock()
	}
	isList := func(n string) bool { d, ok := config.LookupTopic(n); return ok && d.Kind == config.List }
	defaultOf := func(n string) string { d, _ := config.LookupTopic(n); return d.Default }
	next, aerr := c.apply(current, isList, defaultOf, notListErr)
	if aerr != nil {
		return aerr
	}
	eff := p.effective()
	if msg := config.ValidateTopicConfigs(eff, toPtrMap(next)); msg != "" {
		return kafkaErr(kerr.InvalidConfig, msg)
	}
	if t == nil {
		return kafkaErr(kerr.UnknownTopicOrPartition, "The topic '"+c.name+"' does not exist.")
	}
	if validateOnly {
		return nil
	}
	for k, v := range next {
		next[k] = strings.TrimSpace(v)
	}
	rec := topicRecordFor(t, int32(len(parts)), next)
	if err := p.commit(diskguard.Configs, func() error { return p.db.Set(topicKey(t.name), rec, pebble.Sync) }); err != nil {
		p.log.Error("alter topic configs", "topic", t.name, "err", err)
		return errf(kerr.KafkaStorageError, "%v", err)
	}
	p.mu.Lock() // the broker configs in force cannot change under p.mu (setBrokerConfigs)
	t.configs = next
	t.lc.Store(newLogConfig(p.effective(), next))
	p.mu.Unlock()
	p.cleaner.poke()
	p.log.Info("topic configs changed", "topic", t.name, "configs", next)
	return nil
}

func (p *Plane) alterBrokerConfigs(c *configChange, validateOnly bool) *apiError {
	if c.name != "" {
		id, err := strconv.Atoi(c.name)
		if err != nil {
			return kafkaErr(kerr.InvalidRequest, "Node id must be an integer, but it is: "+c.name)
		}
		if id != int(p.cfg.NodeID) {
			return kafkaErr(kerr.InvalidRequest, "Unexpected broker id, expected "+p.brokerResource()+", but received "+c.name)
		}
	}
	p.dynMu.Lock()
	defer p.dynMu.Unlock()
	current := p.dynDefault
	if c.name != "" {
		current = p.dynBroker
	}
	isList := func(n string) bool { d, ok := config.Lookup(n); return ok && d.Kind == config.List }
	defaultOf := func(n string) string { d, _ := config.Lookup(n); return d.Default }
	listErr := func(op, name string) *apiError {
		if _, ok := config.Lookup(name); !ok {
			return kafkaErr(kerr.InvalidConfig, "Unknown config name: "+name)
		}
		return kafkaErr(kerr.InvalidConfig, "Config value "+strings.ToLower(op)+" is not allowed for config key: "+name)
	}
	next, aerr := c.apply(current, isList, defaultOf, listErr)
	if aerr != nil {
		return aerr
	}
	names := make([]string, 0, len(next))
	for n := range next {
		names = append(names, n)
	}
	sort.Strings(names)
	var unknown, readOnly []string
	for _, n := range names {
		if _, ok := config.Lookup(n); !ok {
			unknown = append(unknown, n)
		} else if config.DynamicMode(n) == config.ReadOnly {
			readOnly = append(readOnly, n)
		}
	}
	if len(unknown) > 0 {
		return kafkaErr(kerr.InvalidConfig, "Unknown broker config name: "+strings.Join(unknown, ", "))
	}
	if len(readOnly) > 0 {
		return kafkaErr(kerr.InvalidRequest, "Cannot update these configs dynamically: Set("+strings.Join(readOnly, ", ")+")")
	}
	for _, n := range names {
		d, _ := config.Lookup(n)
		if msg := d.KafkaCheck(next[n]); msg != "" {
			return kafkaErr(kerr.InvalidRequest, msg)
		}
	}
	layers := config.Layers{Static: p.cfg.Values, DynamicDefault: p.dynDefault, DynamicBroker: p.dynBroker}
	if c.name == "" {
		layers.DynamicDefault = next
	} else {
		layers.DynamicBroker = next
	}
	if problems := layers.Effective().CrossCheck(); len(problems) > 0 {
		return kafkaErr(kerr.InvalidRequest, strings.Join(problems, "; "))
	}
	if validateOnly {
		return nil
	}
	if err := p.setBrokerConfigs(c.name, next); err != nil {
		p.log.Error("alter broker configs", "err", err)
		return errf(kerr.KafkaStorageError, "%v", err)
	}
	return nil
}

func (p *Plane) alterGroupConfigs(c *configChange, validateOnly bool) *apiError {
	if c.name == "" {
		return kafkaErr(kerr.InvalidRequest, "Default group resources are not allowed.")
	}
	s := p.groupConfigs
	s.writeMu.Lock()
	g, _ := s.Get(c.name)
	isList := func(string) bool { return false }
	defaultOf := func(string) string { return "" }
	next, aerr := c.apply(g.Overrides(), isList, defaultOf, notListErr)
	if aerr != nil {
		s.writeMu.Unlock()
		return aerr
	}
	if msg := config.ValidateGroupConfigs(p.effective(), toPtrMap(next)); msg != "" {
		s.writeMu.Unlock()
		return kafkaErr(kerr.InvalidConfig, msg)
	}
	if validateOnly {
		s.writeMu.Unlock()
		return nil
	}
	for k, v := range next {
		next[k] = strings.TrimSpace(v)
	}
	err := s.set(c.name, next)
	s.writeMu.Unlock()
	if err != nil {
		p.log.Error("alter group configs", "group", c.name, "err", err)
		return errf(kerr.KafkaStorageError, "%v", err)
	}
	s.deliver()
	return nil
}
