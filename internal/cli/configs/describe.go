package configs

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeResource prints the configs of the target's entities as kafka-configs.sh --describe
// does: a header per entity, then one line per config, sorted by name, with its synonyms; only
// the entity's dynamic configs unless --all.
func describeResource(ctx context.Context, r *runner, tg *target) error {
	entities := []string{tg.name}
	if tg.all {
		var err error
		if entities, err = tg.kind.list(ctx, r); err != nil {
			return err
		}
	}
	for _, e := range entities {
		one := &target{kind: tg.kind, name: e, def: e == "" && tg.kind.hasDefault}
		switch {
		case one.def:
			fmt.Fprintf(r.stdout, "Default configs for %s in the cluster are:\n", tg.kind.name)
		case r.o.all:
			fmt.Fprintf(r.stdout, "All configs for %s %s are:\n", tg.kind.singular, e)
		default:
			fmt.Fprintf(r.stdout, "Dynamic configs for %s %s are:\n", tg.kind.singular, e)
		}
		cfgs, err := r.resourceConfigs(ctx, one, true, r.o.all)
		if err != nil {
			return err
		}
		for _, c := range cfgs {
			var syn []string
			for _, s := range c.ConfigSynonyms {
				syn = append(syn, sourceName(s.Source)+":"+s.Name+"="+javaString(s.Value))
			}
			fmt.Fprintf(r.stdout, "  %s=%s sensitive=%t synonyms={%s}\n", c.Name, javaString(c.Value), c.IsSensitive, strings.Join(syn, ", "))
		}
	}
	return nil
}

// resourceConfigs describes one entity's configs, sorted by name: those whose source is the
// entity's dynamic source, or all of them.
func (r *runner) resourceConfigs(ctx context.Context, tg *target, synonyms, all bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = synonyms
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = tg.kind.resource, tg.name
	req.Resources = append(req.Resources, rr)
	cctx, cancel := r.cl.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, r.cl.Kcl)
	if err != nil {
		return nil, err
	}
	if len(resp.Resources) != 1 {
		return nil, fmt.Errorf("the broker answered %d resources for 1", len(resp.Resources))
	}
	res := resp.Resources[0]
	if res.ErrorCode != 0 {
		return nil, newBrokerError(res.ErrorCode, res.ErrorMessage)
	}
	src := tg.kind.dynamicSource(tg)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, c := range res.Configs {
		if all || c.Source == src {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// sourceName is Kafka's ConfigEntry.ConfigSource name, as kafka-configs.sh prints it.
func sourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "DYNAMIC_TOPIC_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "DYNAMIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "STATIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDefaultConfig:
		return "DEFAULT_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerLoggerConfig:
		return "DYNAMIC_BROKER_LOGGER_CONFIG"
	case kmsg.ConfigSourceClientMetricsConfig:
		return "CLIENT_METRICS_CONFIG"
	case kmsg.ConfigSourceGroupConfig:
		return "DYNAMIC_GROUP_CONFIG"
	}
	return "UNKNOWN"
}

func javaString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func listTopics(ctx context.Context, r *runner) ([]string, error) {
	cctx, cancel := r.cl.Ctx(ctx)
	defer cancel()
	tds, err := r.cl.Adm.ListTopicsWithInternal(cctx)
	if err != nil {
		return nil, err
	}
	return tds.Names(), nil
}

// listBrokers is every broker id, then "" (the cluster default), as Kafka lists them.
func listBrokers(ctx context.Context, r *runner) ([]string, error) {
	cctx, cancel := r.cl.Ctx(ctx)
	defer cancel()
	md, err := r.cl.Adm.BrokerMetadata(cctx)
	if err != nil {
		return nil, err
	}
	ids := md.Brokers.NodeIDs()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out []string
	for _, id := range ids {
		out = append(out, strconv.Itoa(int(id)))
	}
	return append(out, ""), nil
}

func listGroups(ctx context.Context, r *runner) ([]string, error) {
	cctx, cancel := r.cl.Ctx(ctx)
	defer cancel()
	gs, err := r.cl.Adm.ListGroups(cctx)
	if err != nil {
		return nil, err
	}
	return gs.Groups(), nil
}

// alterResource sets and deletes configs of one entity with IncrementalAlterConfigs, as
// kafka-configs.sh --alter does: a config to delete must be one of the entity's dynamic configs.
func alterResource(ctx context.Context, r *runner, tg *target, adds []configEntry, deletes []string) error {
	if len(deletes) > 0 {
		cur, err := r.resourceConfigs(ctx, tg, false, false)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, c := range cur {
			have[c.Name] = true
		}
		var bad []string
		for _, d := range deletes {
			if !have[d] {
				bad = append(bad, d)
			}
		}
		if len(bad) > 0 {
			fmt.Fprintf(r.stderr, "Error: Invalid config(s): %s\n", strings.Join(bad, ","))
			return &reportedError{Msg: "invalid configs to delete"}
		}
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = tg.kind.resource, tg.name
	for _, a := range adds {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = a.name, kmsg.IncrementalAlterConfigOpSet, kadm.StringPtr(a.value)
		rr.Configs = append(rr.Configs, c)
	}
	for _, d := range deletes {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = d, kmsg.IncrementalAlterConfigOpDelete, kadm.StringPtr("")
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	cctx, cancel := r.cl.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, r.cl.Kcl)
	if err != nil {
		return err
	}
	for _, res := range resp.Resources {
		if res.ErrorCode != 0 {
			return newBrokerError(res.ErrorCode, res.ErrorMessage)
		}
	}
	if tg.def {
		fmt.Fprintf(r.stdout, "Completed updating default config for %s in the cluster.\n", tg.kind.name)
	} else {
		fmt.Fprintf(r.stdout, "Completed updating config for %s %s.\n", tg.kind.singular, tg.name)
	}
	return nil
}

// brokerError is an error a broker answered for a resource: its code and message.
type brokerError struct {
	code *kerr.Error
	msg  string
}

func newBrokerError(code int16, msg *string) *brokerError {
	e := &brokerError{code: kerr.ErrorForCode(code).(*kerr.Error)}
	if msg != nil {
		e.msg = *msg
	}
	return e
}

func (e *brokerError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return e.code.Description
}

func (e *brokerError) Unwrap() error { return e.code }
