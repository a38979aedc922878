package configs

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
)

// entityKind is one --entity-type: how its entities are named, listed, described and altered.
// Kinds backed by config resources (topics, brokers, groups) share describeResource and
// alterResource; a kind that is not (users: quotas and SCRAM credentials) brings its own
// describe and alter.
type entityKind struct {
	name     string // as --entity-type takes it: "topics"
	singular string // as the output names it: "topic"
	// resource is the DescribeConfigs/IncrementalAlterConfigs resource type (0: not a config
	// resource).
	resource kmsg.ConfigResourceType
	// hasDefault: the kind has a default entity (--entity-default, "" on the wire).
	hasDefault bool
	// checkName validates an entity name before connecting (nil: any name).
	checkName func(name string) error
	// list returns every entity of the kind, for --describe without a name.
	list func(ctx context.Context, r *runner) ([]string, error)
	// dynamicSource is the config source --describe shows without --all.
	dynamicSource func(tg *target) kmsg.ConfigSource
	// validConfigs lists the configs --add-config takes, for the help text.
	validConfigs func() []string

	describe func(ctx context.Context, r *runner, tg *target) error
	alter    func(ctx context.Context, r *runner, tg *target, adds []configEntry, deletes []string) error
}

// entityKinds are the entity types, in the order the help lists them. A new type is one more
// entry here (and its own file).
var entityKinds = []*entityKind{topicsKind, brokersKind, groupsKind, usersKind}

func kindByName(name string) *entityKind {
	for _, k := range entityKinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

func kindNames() []string {
	out := make([]string, 0, len(entityKinds))
	for _, k := range entityKinds {
		out = append(out, k.name)
	}
	return out
}

var topicsKind = &entityKind{
	name: "topics", singular: "topic", resource: kmsg.ConfigResourceTypeTopic,
	checkName: func(n string) error {
		if msg := topicNameProblem(n); msg != "" {
			return usagef("%s", msg)
		}
		return nil
	},
	list:          listTopics,
	dynamicSource: func(*target) kmsg.ConfigSource { return kmsg.ConfigSourceDynamicTopicConfig },
	validConfigs:  config.TopicNames,
	describe:      describeResource,
	alter:         alterResource,
}

var brokersKind = &entityKind{
	name: "brokers", singular: "broker", resource: kmsg.ConfigResourceTypeBroker, hasDefault: true,
	checkName: checkBrokerID("brokers"),
	list:      listBrokers,
	dynamicSource: func(tg *target) kmsg.ConfigSource {
		if tg.def {
			return kmsg.ConfigSourceDynamicDefaultBrokerConfig
		}
		return kmsg.ConfigSourceDynamicBrokerConfig
	},
	validConfigs: dynamicBrokerConfigs,
	describe:     describeResource,
	alter:        alterResource,
}

var groupsKind = &entityKind{
	name: "groups", singular: "group", resource: kmsg.ConfigResourceTypeGroupConfig,
	list:          listGroups,
	dynamicSource: func(*target) kmsg.ConfigSource { return kmsg.ConfigSourceGroupConfig },
	validConfigs:  config.GroupNames,
	describe:      describeResource,
	alter:         alterResource,
}

func dynamicBrokerConfigs() []string {
	var out []string
	for _, n := range config.Names() {
		if config.DynamicMode(n) != config.ReadOnly {
			out = append(out, n)
		}
	}
	return out
}

// topicNameProblem applies Kafka's Topic.validate ("" when valid).
func topicNameProblem(n string) string {
	switch {
	case n == "":
		return "Topic name is illegal, it can't be empty"
	case n == "." || n == "..":
		return "Topic name cannot be \".\" or \"..\""
	case len(n) > 249:
		return "Topic name is illegal, it can't be longer than 249 characters, topic name: " + n
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "Topic name \"" + n + "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
		}
	}
	return ""
}
