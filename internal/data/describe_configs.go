package data

import (
	"context"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
)

// DescribeConfigs describes TOPIC, BROKER and GROUP resources as Kafka's ConfigHelper does.
//
//   - TOPIC: every topic config with the value in force: the topic's override
//     (DYNAMIC_TOPIC_CONFIG) or the broker's value of its synonym (log.retention.ms, …) from this
//     broker's dynamic configs, the cluster's dynamic defaults, the static config or Kafka's
//     default, with that chain as synonyms. Errors: INVALID_TOPIC_EXCEPTION,
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - BROKER: this broker (name = node id): every broker key, read-only unless Kafka lets it
//     change dynamically; "" (the cluster default): the dynamic default configs only. Another
//     broker id or a non-integer name: INVALID_REQUEST.
//   - GROUP: every group config, the group's override (GROUP_CONFIG) or the broker's group.*
//     default. An empty name: INVALID_REQUEST.
//
// Synonyms (v1+) are returned when IncludeSynonyms is set, documentation (v3+) when
// IncludeDocumentation is. ConfigNames filters the entries (unknown names are skipped).
func (p *Plane) DescribeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	layers := p.layers()
	eff := layers.Effective()
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var entries []kmsg.DescribeConfigsResponseResourceConfig
		var aerr *apiError
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			entries, aerr = p.describeTopic(rr.ResourceName, layers, eff)
		case kmsg.ConfigResourceTypeBroker:
			entries, aerr = p.describeBroker(rr.ResourceName, layers, eff)
		case kmsg.ConfigResourceTypeGroupConfig:
			entries, aerr = p.describeGroup(rr.ResourceName, layers, eff)
		default:
			aerr = errf(kerr.InvalidRequest, "Unsupported resource type: %s", rr.ResourceType)
			aerr.kafkaMsg = true
		}
		if aerr != nil {
			sr.ErrorCode = aerr.code.Code
			if m := aerr.msg; m != "" {
				sr.ErrorMessage = &m
			}
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		for _, c := range entries {
			if rr.ConfigNames != nil && !containsStr(rr.ConfigNames, c.Name) {
				continue
			}
			c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
			if req.Version < 1 || !req.IncludeSynonyms {
				c.ConfigSynonyms = nil
			}
			if req.Version < 3 || !req.IncludeDocumentation {
				c.Documentation = nil
			}
			sr.Configs = append(sr.Configs, c)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func configType(k config.Kind) kmsg.ConfigType {
	switch k {
	case config.Int:
		return kmsg.ConfigTypeInt
	case config.Long:
		return kmsg.ConfigTypeLong
	case config.Bool:
		return kmsg.ConfigTypeBoolean
	case config.String:
		return kmsg.ConfigTypeString
	case config.List:
		return kmsg.ConfigTypeList
	case config.Double:
		return kmsg.ConfigTypeDouble
	}
	return kmsg.ConfigTypeUnknown
}

func synonyms(ss []config.Synonym) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	out := make([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym, 0, len(ss))
	for _, s := range ss {
		k := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		k.Name, k.Value, k.Source = s.Name, s.Value, kmsg.ConfigSource(s.Source)
		out = append(out, k)
	}
	return out
}

func entry(name string, value *string, d *config.Def, readOnly bool, syn []config.Synonym) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.Value, c.ReadOnly = name, value, readOnly
	c.Source = kmsg.ConfigSourceDefaultConfig
	if len(syn) > 0 {
		c.Source = kmsg.ConfigSource(syn[0].Source)
	}
	c.ConfigSynonyms = synonyms(syn)
	c.ConfigType = configType(d.Kind)
	if d.Doc != "" {
		doc := d.Doc
		c.Documentation = &doc
	}
	return c
}

// topicConfigEntries lists t's configs (DescribeConfigs and CreateTopics v5+).
func (p *Plane) topicConfigEntries(t *topic, layers config.Layers, eff *config.Values) []kmsg.DescribeConfigsResponseResourceConfig {
	p.mu.RLock()
	overrides := t.configs
	p.mu.RUnlock()
	var out []kmsg.DescribeConfigsResponseResourceConfig
	names := config.TopicNames()
	for n := range overrides {
		if d, ok := config.LookupTopic(n); ok && d.Internal {
			names = append(names, n) // an internal config shows once set, as in Kafka
		}
	}
	sort.Strings(names)
	for _, n := range names {
		d, _ := config.LookupTopic(n)
		var syn []config.Synonym
		value := eff.TopicDefault(n)
		if ov, ok := overrides[n]; ok {
			value = ov
			v := ov
			syn = append(syn, config.Synonym{Name: n, Value: &v, Source: config.SourceDynamicTopic})
		}
		if d.Server != "" {
			if _, known := config.Lookup(d.Server); known {
				syn = append(syn, layers.Synonyms(d.Server, config.BrokerSynonyms(d.Server))...)
			}
		}
		v := value
		out = append(out, entry(n, &v, &d.Def, false, syn))
	}
	return out
}

func (p *Plane) describeTopic(name string, layers config.Layers, eff *config.Values) ([]kmsg.DescribeConfigsResponseResourceConfig, *apiError) {
	if msg := validTopicName(name); msg != "" {
		return nil, errf(kerr.InvalidTopicException, "%s", msg)
	}
	t, _ := p.lookup(name)
	if t == nil {
		return nil, &apiError{code: kerr.UnknownTopicOrPartition, msg: "The topic '" + name + "' does not exist.", kafkaMsg: true}
	}
	return p.topicConfigEntries(t, layers, eff), nil
}

func (p *Plane) describeBroker(name string, layers config.Layers, eff *config.Values) ([]kmsg.DescribeConfigsResponseResourceConfig, *apiError) {
	perBroker := name != ""
	var names []string
	if perBroker {
		id, err := strconv.Atoi(name)
		if err != nil {
			return nil, &apiError{code: kerr.InvalidRequest, msg: "Broker id must be an integer, but it is: " + name, kafkaMsg: true}
		}
		if id != int(p.cfg.NodeID) {
			return nil, &apiError{code: kerr.InvalidRequest, msg: "Unexpected broker id, expected " + p.brokerResource() + " or empty string, but received " + name, kafkaMsg: true}
		}
		names = config.Names()
	} else {
		for n := range layers.DynamicDefault {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range names {
		d, ok := config.Lookup(n)
		if !ok {
			continue
		}
		var value *string
		if perBroker {
			if v, ok := eff.Value(n); ok {
				value = &v
			}
		} else {
			v := layers.DynamicDefault[n]
			value = &v
		}
		syn := layers.Synonyms(n, config.BrokerSynonyms(n))
		if !perBroker {
			kept := syn[:0:0]
			for _, s := range syn {
				if s.Source == config.SourceDynamicDefaultBroker {
					kept = append(kept, s)
				}
			}
			syn = kept
		}
		out = append(out, entry(n, value, d, config.DynamicMode(n) == config.ReadOnly, syn))
	}
	return out, nil
}

func (p *Plane) describeGroup(group string, layers config.Layers, eff *config.Values) ([]kmsg.DescribeConfigsResponseResourceConfig, *apiError) {
	if group == "" {
		return nil, &apiError{code: kerr.InvalidRequest, msg: "Group name must not be empty", kafkaMsg: true}
	}
	g, _ := p.groupConfigs.Get(group)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range config.GroupNames() {
		d, _ := config.LookupGroup(n)
		value, src := eff.GroupDefault(n), config.SourceDefault
		if ov, ok := g.Get(n); ok {
			value, src = ov, config.SourceGroup
		}
		v := value
		syn := []config.Synonym{{Name: n, Value: &v, Source: src}}
		if d.Server != "" {
			syn = append(syn, layers.Synonyms(d.Server, []string{d.Server})...)
		}
		out = append(out, entry(n, &value, &d.Def, false, syn))
	}
	return out, nil
}
