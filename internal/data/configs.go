package data

import (
	"context"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicConfigEntries lists t's configs (all of them, or those in names),
// sorted by name: overrides as DYNAMIC_TOPIC_CONFIG, the rest as
// DEFAULT_CONFIG with IsDefault set (retention defaults are the broker's).
func (p *Plane) topicConfigEntries(t *topic, names []string) []kmsg.DescribeConfigsResponseResourceConfig {
	if names == nil {
		for n := range topicConfigDefs {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range names {
		def, ok := topicConfigDefs[n]
		if !ok {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.ConfigType = n, def.typ
		v := p.topicDefault(n, def.def)
		if ov, ok := t.configs[n]; ok {
			v, c.Source = ov, kmsg.ConfigSourceDynamicTopicConfig
		} else {
			c.Source, c.IsDefault = kmsg.ConfigSourceDefaultConfig, true
		}
		c.Value = &v
		out = append(out, c)
	}
	return out
}

// topicDefault is the value topic config name takes when not overridden:
// def, or for retention.ms and retention.bytes the broker's setting.
func (p *Plane) topicDefault(name, def string) string {
	switch name {
	case cfgRetentionMs:
		return strconv.FormatInt(p.cfg.LogRetentionMs, 10)
	case cfgRetentionBytes:
		return strconv.FormatInt(p.cfg.LogRetentionBytes, 10)
	}
	return def
}

// brokerConfigs are the broker configs DescribeConfigs reports.
func (p *Plane) brokerConfigs() map[string]struct {
	v   string
	typ kmsg.ConfigType
} {
	type e = struct {
		v   string
		typ kmsg.ConfigType
	}
	return map[string]e{
		"broker.id":                        {strconv.Itoa(int(p.cfg.NodeID)), kmsg.ConfigTypeInt},
		"node.id":                          {strconv.Itoa(int(p.cfg.NodeID)), kmsg.ConfigTypeInt},
		"broker.rack":                      {p.cfg.Rack, kmsg.ConfigTypeString},
		"num.partitions":                   {strconv.Itoa(int(p.cfg.NumPartitions)), kmsg.ConfigTypeInt},
		"default.replication.factor":       {strconv.Itoa(int(p.cfg.DefaultReplicationFactor)), kmsg.ConfigTypeInt},
		"auto.create.topics.enable":        {strconv.FormatBool(p.cfg.AutoCreateTopics), kmsg.ConfigTypeBoolean},
		"advertised.listeners":             {"PLAINTEXT://" + p.cfg.AdvertisedHost + ":" + strconv.Itoa(int(p.cfg.AdvertisedPort)), kmsg.ConfigTypeString},
		"message.max.bytes":                {strconv.Itoa(defaultMaxMessageBytes), kmsg.ConfigTypeInt},
		"log.message.timestamp.type":       {timestampCreateTime, kmsg.ConfigTypeString},
		"log.retention.ms":                 {strconv.FormatInt(p.cfg.LogRetentionMs, 10), kmsg.ConfigTypeLong},
		"log.retention.bytes":              {strconv.FormatInt(p.cfg.LogRetentionBytes, 10), kmsg.ConfigTypeLong},
		"log.retention.check.interval.ms":  {strconv.FormatInt(p.cfg.RetentionCheckInterval.Milliseconds(), 10), kmsg.ConfigTypeLong},
		"producer.id.expiration.ms":        {strconv.FormatInt(p.cfg.ProducerIDExpiration.Milliseconds(), 10), kmsg.ConfigTypeInt},
		"log.cleanup.policy":               {"delete", kmsg.ConfigTypeList},
		"min.insync.replicas":              {"1", kmsg.ConfigTypeInt},
		"offsets.topic.replication.factor": {"1", kmsg.ConfigTypeShort},
	}
}

// DescribeConfigs describes topic resources (every Kafka topic config, with
// muster's overrides) and this broker's resource (name = NodeID, or "" for
// the cluster default). Errors per resource: UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REQUEST (another broker, or an unsupported resource type).
// Synonyms (v1+) list the value's own source only; documentation is null.
func (p *Plane) DescribeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			t, _ := p.lookup(rr.ResourceName)
			if t == nil {
				sr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				msg := "topic " + rr.ResourceName + " does not exist"
				sr.ErrorMessage = &msg
				break
			}
			sr.Configs = p.topicConfigEntries(t, rr.ConfigNames)
		case kmsg.ConfigResourceTypeBroker:
			if rr.ResourceName != "" && rr.ResourceName != strconv.Itoa(int(p.cfg.NodeID)) {
				sr.ErrorCode = kerr.InvalidRequest.Code
				msg := "unexpected broker id " + rr.ResourceName
				sr.ErrorMessage = &msg
				break
			}
			all := p.brokerConfigs()
			names := rr.ConfigNames
			if names == nil {
				for n := range all {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			for _, n := range names {
				e, ok := all[n]
				if !ok {
					continue
				}
				c := kmsg.NewDescribeConfigsResponseResourceConfig()
				v := e.v
				c.Name, c.Value, c.ConfigType = n, &v, e.typ
				c.ReadOnly = true
				c.Source = kmsg.ConfigSourceStaticBrokerConfig
				sr.Configs = append(sr.Configs, c)
			}
		default:
			sr.ErrorCode = kerr.InvalidRequest.Code
			msg := "unsupported resource type"
			sr.ErrorMessage = &msg
		}
		if req.Version >= 1 && req.IncludeSynonyms {
			for i := range sr.Configs {
				c := &sr.Configs[i]
				s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				s.Name, s.Value, s.Source = c.Name, c.Value, c.Source
				c.ConfigSynonyms = append(c.ConfigSynonyms, s)
			}
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}
