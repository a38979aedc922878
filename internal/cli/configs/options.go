package configs

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/muster-io/muster/internal/cli/clikit"
)

var usagef = clikit.Usagef

// check validates the invocation as Kafka's ConfigCommandOptions.checkArgs does and returns
// the entity to act on.
func (o *options) check() (*target, error) {
	if o.describe == o.alter {
		return nil, usagef("Command must include exactly one action: --describe, --alter")
	}
	if o.describe {
		for _, f := range []struct {
			set  bool
			name string
		}{{o.addConfig != "", "add-config"}, {len(o.deleteConfig) > 0, "delete-config"}, {o.addConfigFile != "", "add-config-file"}} {
			if f.set {
				return nil, usagef("Option \"[describe]\" can't be used with option \"[%s]\"", f.name)
			}
		}
	}
	specific := map[string]bool{}
	types := append([]string(nil), o.entityTypes...)
	names := o.entityNameList()
	if o.topic != "" {
		types, names, specific["topics"] = append(types, "topics"), append(names, o.topic), true
	}
	if o.broker != "" {
		types, names, specific["brokers"] = append(types, "brokers"), append(names, o.broker), true
	}
	if o.group != "" {
		types, names, specific["groups"] = append(types, "groups"), append(names, o.group), true
	}
	if o.brokerDefaults {
		types, names, specific["brokers"] = append(types, "brokers"), append(names, ""), true
	}
	seen := map[string]bool{}
	var dups []string
	for _, t := range types {
		if seen[t] {
			dups = append(dups, t)
		}
		seen[t] = true
	}
	if len(dups) > 0 {
		return nil, usagef("Duplicate entity type(s) specified: %s", strings.Join(dups, ","))
	}
	for _, t := range types {
		if kindByName(t) == nil {
			return nil, usagef("Invalid entity type %s, the entity type must be one of %s with a --bootstrap-server or --bootstrap-controller argument",
				t, strings.Join(kindNames(), ", "))
		}
	}
	if len(types) == 0 {
		return nil, usagef("At least one entity type must be specified")
	}
	if len(types) > 1 {
		return nil, usagef("Only 'users' and 'clients' entity types may be specified together")
	}
	if (len(o.entityNames) > 0 || len(o.entityTypes) > 0 || o.entityDefault) && len(specific) > 0 {
		return nil, usagef("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
	}
	if strings.TrimSpace(o.Bootstrap) == "" {
		return nil, usagef("One of the required --bootstrap-server or --bootstrap-controller arguments must be specified")
	}
	kind := kindByName(types[0])
	hasName, hasDefault := false, false
	for _, n := range names {
		hasName = hasName || n != ""
		hasDefault = hasDefault || n == ""
	}
	if hasName && kind.checkName != nil {
		for _, n := range names {
			if n == "" {
				continue
			}
			if err := kind.checkName(n); err != nil {
				return nil, err
			}
		}
	}
	if o.describe && hasDefault && !kind.hasDefault {
		return nil, usagef("--entity-default must not be specified with --describe of %s", kind.name)
	}
	if o.alter {
		if kind.hasDefault {
			if !hasName && !hasDefault {
				return nil, usagef("An entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
			}
		} else if !hasName {
			return nil, usagef("An entity name must be specified with --alter of %s", kind.name)
		}
		switch {
		case o.addConfig != "" && o.addConfigFile != "":
			return nil, usagef("Only one of --add-config or --add-config-file must be specified")
		case o.addConfig == "" && o.addConfigFile == "" && len(o.deleteConfig) == 0:
			return nil, usagef("At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter")
		}
		if len(names) != len(types) {
			return nil, usagef("An entity name must be specified for every entity type")
		}
	}
	tg := &target{kind: kind}
	if len(names) == 0 {
		tg.all = true
	} else {
		tg.name, tg.def = names[0], names[0] == ""
	}
	return tg, nil
}

// entityNameList pairs --entity-name and --entity-default in the order given ("" for a
// default).
func (o *options) entityNameList() []string {
	var out []string
	i := 0
	for _, f := range o.order {
		if f == "entity-name" {
			out = append(out, o.entityNames[i])
			i++
		} else {
			out = append(out, "")
		}
	}
	return out
}

func checkBrokerID(kind string) func(string) error {
	return func(n string) error {
		if _, err := strconv.Atoi(n); err != nil {
			return usagef("The entity name for %s must be a valid integer broker id, but it is: %s", kind, n)
		}
		return nil
	}
}

// configEntry is one config to set.
type configEntry struct{ name, value string }

var configKey = regexp.MustCompile(`^[a-zA-Z0-9._-]*$`)

// configsToAdd parses --add-config (k1=v1,k2=[v1,v2],k3=v3: commas inside square brackets do
// not separate entries and the brackets are dropped) or --add-config-file, as Kafka's
// ConfigCommand.parseConfigsToBeAdded does; a later key wins.
func (o *options) configsToAdd() ([]configEntry, error) {
	props := map[string]string{}
	if o.addConfigFile != "" {
		p, err := clikit.ReadProperties(o.addConfigFile)
		if err != nil {
			return nil, usagef("Cannot read --add-config-file: %v", err)
		}
		props = p
	}
	if o.addConfig != "" {
		for _, pair := range splitOutsideBrackets(o.addConfig, ',') {
			kv := splitOutsideBrackets(pair, '=')
			if len(kv) != 2 {
				return nil, usagef("Invalid entity config: all configs to be added must be in the format \"key=val\".")
			}
			k := strings.TrimSpace(kv[0])
			v := strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(kv[1]))
			props[k] = v
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		if !configKey.MatchString(k) {
			return nil, usagef("Invalid character found for config key: %s", k)
		}
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]configEntry, 0, len(names))
	for _, k := range names {
		out = append(out, configEntry{k, props[k]})
	}
	return out, nil
}

// splitOutsideBrackets splits s at sep where sep is not inside square brackets; empty pieces
// are kept except trailing ones (Java's String.split).
func splitOutsideBrackets(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	for len(out) > 1 && out[len(out)-1] == "" && sep == ',' {
		out = out[:len(out)-1]
	}
	return out
}
