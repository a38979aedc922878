// Package configs is `muster configs`, which mirrors Kafka's kafka-configs.sh: describe and
// alter the dynamic configs of topics, brokers (one broker or the cluster default) and groups
// (KIP-848 group configs) of any Kafka-compatible cluster, over DescribeConfigs and
// IncrementalAlterConfigs. The entity types are a table (entityKinds) so further types slot in
// as their own files.
package configs

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// options are the parsed flags.
type options struct {
	clikit.ConnFlags
	describe, alter, all, force bool

	entityTypes    []string
	entityNames    []string
	entityDefault  bool
	addConfig      string
	addConfigFile  string
	deleteConfig   []string
	topic, broker  string
	brokerDefaults bool
	group          string

	// order records, for --entity-name and --entity-default, the order they were given in
	// (Kafka pairs them with the entity types in that order).
	order []string
}

// NewCommand returns the `configs` cobra command.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := clikit.NewCommand("configs", "Describe and alter the dynamic configs of topics, brokers and groups",
		"This tool helps to manipulate and describe entity config for a topic, broker or group. "+
			"It mirrors Kafka's kafka-configs.sh with --bootstrap-server.")
	f := cmd.Flags()
	o.ConnFlags.AddFlags(f, 30000)
	f.BoolVar(&o.describe, "describe", false, "List configs for the given entity.")
	f.BoolVar(&o.alter, "alter", false, "Alter the configuration for the entity.")
	f.BoolVar(&o.all, "all", false, "List all configs for the given entity, including static configs if available.")
	f.StringArrayVar(&o.entityTypes, "entity-type", nil, "Type of entity ("+strings.Join(kindNames(), "/")+").")
	f.Var(&orderedValue{o: o, name: "entity-name", set: func(v string) { o.entityNames = append(o.entityNames, v) }},
		"entity-name", "Name of entity (topic name/broker id/group id).")
	f.Var(&orderedFlag{o: o, name: "entity-default", set: func() { o.entityDefault = true }}, "entity-default",
		"Default entity name for brokers (applies to the corresponding entity type).")
	f.Lookup("entity-default").NoOptDefVal = "true"
	f.StringVar(&o.addConfig, "add-config", "", addConfigHelp())
	f.StringVar(&o.addConfigFile, "add-config-file", "", "Path to a properties file with configs to add. See add-config for a list of valid configurations.")
	f.StringSliceVar(&o.deleteConfig, "delete-config", nil, "config keys to remove 'k1,k2'")
	f.BoolVar(&o.force, "force", false, "Suppress console prompts")
	f.StringVar(&o.topic, "topic", "", "The topic's name.")
	f.StringVar(&o.broker, "broker", "", "The broker's ID.")
	f.BoolVar(&o.brokerDefaults, "broker-defaults", false, "The config defaults for all brokers.")
	f.StringVar(&o.group, "group", "", "The group's ID.")

	clikit.Wire(cmd, failedPrefix, errMessage, func(c *cobra.Command, args []string) error {
		return run(c.Context(), c, o, args)
	})
	return cmd
}

// orderedValue is a repeatable string flag that records its position among the
// entity-name/entity-default flags.
type orderedValue struct {
	o    *options
	name string
	set  func(string)
}

func (v *orderedValue) String() string { return "" }
func (v *orderedValue) Type() string   { return "string" }
func (v *orderedValue) Set(s string) error {
	v.o.order = append(v.o.order, v.name)
	v.set(s)
	return nil
}

// orderedFlag is a boolean flag that records its position like orderedValue.
type orderedFlag struct {
	o    *options
	name string
	set  func()
}

func (v *orderedFlag) String() string   { return "" }
func (v *orderedFlag) Type() string     { return "bool" }
func (v *orderedFlag) IsBoolFlag() bool { return true }
func (v *orderedFlag) Set(s string) error {
	if s != "true" {
		return fmt.Errorf("--%s takes no value", v.name)
	}
	v.o.order = append(v.o.order, v.name)
	v.set()
	return nil
}

func addConfigHelp() string {
	var b strings.Builder
	b.WriteString("Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. The following is a list of valid configurations:")
	for _, k := range entityKinds {
		if names := k.validConfigs(); len(names) > 0 {
			b.WriteString(" For entity-type '" + k.name + "': " + strings.Join(names, ", ") + ".")
		}
	}
	return b.String()
}

// target is the entity the command acts on.
type target struct {
	kind *entityKind
	name string // "" with --entity-default, or when describing every entity of the kind
	def  bool   // the default entity (--entity-default / --broker-defaults)
	all  bool   // --describe without a name: every entity of the kind
}

func run(ctx context.Context, c *cobra.Command, o *options, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(args) > 0 {
		return clikit.Usagef("Found non-option argument '%s'.", args[0])
	}
	tg, err := o.check()
	if err != nil {
		return err
	}
	var adds []configEntry
	if o.alter {
		if adds, err = o.configsToAdd(); err != nil {
			return err
		}
	}
	cl, err := clikit.NewAdmin(o.ConnFlags, "muster-configs", c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer cl.Close()
	r := &runner{o: o, cl: cl, stdout: c.OutOrStdout(), stderr: c.ErrOrStderr()}
	if o.alter {
		return tg.kind.alter(ctx, r, tg, adds, trimAll(o.deleteConfig))
	}
	return tg.kind.describe(ctx, r, tg)
}

// runner carries what every action needs.
type runner struct {
	o      *options
	cl     *clikit.Admin
	stdout io.Writer
	stderr io.Writer
}

func trimAll(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, strings.TrimSpace(x))
	}
	return out
}
