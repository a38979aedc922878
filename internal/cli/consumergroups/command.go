package consumergroups

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// options are the parsed command-line flags.
type options struct {
	clikit.ConnFlags
	clikit.HTTPFlag
	output string

	// history and lagStatus describe what only muster knows, through its HTTP API.
	history, lagStatus bool

	list, describe, deleteGroups, deleteOffsets, resetOffsets bool

	groups    []string
	allGroups bool
	topics    []string
	allTopics bool

	state, typ       string
	stateSet, typSet bool
	offsets, members bool

	dryRun, execute, export bool

	clikit.ResetScenario
	fromFile string
}

// env is what the command takes from the outside world (tests pin it).
type env = clikit.Env

// NewCommand returns the `consumer-groups` cobra command. The root `muster`
// command adds it as a subcommand; see the package doc for exit-code mapping.
func NewCommand() *cobra.Command {
	return newCommand(clikit.SystemEnv())
}

func newCommand(e env) *cobra.Command {
	o := &options{}
	cmd := clikit.NewCommand("consumer-groups", "List, describe, delete consumer groups and reset or delete their offsets",
		"This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, "+
			"or reset consumer group offsets. It mirrors Kafka's kafka-consumer-groups.sh and works against any "+
			"Kafka-compatible cluster.")
	f := cmd.Flags()
	o.ConnFlags.AddFlags(f, 5000)
	f.StringVar(&o.output, "output", "text", "Output format: text or json.")
	o.HTTPFlag.AddFlags(f)

	f.BoolVar(&o.list, "list", false, "List all consumer groups.")
	f.BoolVar(&o.describe, "describe", false, "Describe consumer group and list offset lag (number of messages not yet processed) related to given group.")
	f.BoolVar(&o.deleteGroups, "delete", false, "Delete the given consumer groups (offsets and ownership information).")
	f.BoolVar(&o.deleteOffsets, "delete-offsets", false, "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.")
	f.BoolVar(&o.resetOffsets, "reset-offsets", false, "Reset offsets of consumer group (group must be inactive). --dry-run (default), --execute, --export.")

	f.StringArrayVar(&o.groups, "group", nil, "The consumer group we wish to act on (repeatable).")
	f.BoolVar(&o.allGroups, "all-groups", false, "Apply to all consumer groups.")
	f.StringArrayVar(&o.topics, "topic", nil, "Topic to act on, optionally with partitions: topic1:0,1,2 (repeatable).")
	f.BoolVar(&o.allTopics, "all-topics", false, "Consider all topics assigned to a group in the reset-offsets process.")

	clikit.OptionalStringFlag(f, &o.state, "state", "With --describe: show the group state. With --list: show states, optionally filtered (e.g. --state=Stable,Empty).")
	clikit.OptionalStringFlag(f, &o.typ, "type", "With --list: show group types, optionally filtered (e.g. --type=classic,consumer).")
	f.BoolVar(&o.offsets, "offsets", false, "Describe the group's partitions with offset lag (default describe view).")
	f.BoolVar(&o.members, "members", false, "Describe the members of the group.")
	f.BoolVar(&o.history, "history", false, "With --describe: the group's rebalance history, every group epoch bump with its causes (muster only, through its HTTP API).")
	f.BoolVar(&o.lagStatus, "lag-status", false, "With --describe: the group's lag status by Burrow's rules over a window of commits (OK, WARNING, ERROR; per partition OK, WARNING, STOP, STALL, REWIND) with time lag (muster only, through its HTTP API).")

	f.BoolVar(&o.dryRun, "dry-run", false, "Only show results without executing changes (default for --reset-offsets).")
	f.BoolVar(&o.execute, "execute", false, "Execute the offset reset.")
	f.BoolVar(&o.export, "export", false, "Export the reset plan as CSV.")

	o.ResetScenario.AddFlags(f, "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
	f.StringVar(&o.fromFile, "from-file", "", "Reset offsets to values defined in CSV file (topic,partition,offset or group,topic,partition,offset).")

	clikit.Wire(cmd, failedPrefix, clikit.ErrMessage, func(c *cobra.Command, args []string) error {
		return run(c.Context(), c, o, e, args)
	})
	return cmd
}

func run(ctx context.Context, c *cobra.Command, o *options, e env, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.finish(c.Flags(), args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	cl, err := newAdmin(o, stderr)
	if err != nil {
		return err
	}
	defer cl.Close()
	r := &runner{o: o, env: e, cl: cl, stdout: stdout, stderr: stderr}
	switch {
	case o.list:
		return r.list(ctx)
	case o.describe && (o.history || o.lagStatus):
		return r.observeCmd(ctx)
	case o.describe:
		return r.describeCmd(ctx)
	case o.deleteGroups:
		return r.deleteGroupsCmd(ctx)
	case o.deleteOffsets:
		return r.deleteOffsetsCmd(ctx)
	default:
		return r.resetOffsetsCmd(ctx)
	}
}

// runner carries what every action needs.
type runner struct {
	o      *options
	env    env
	cl     *admin
	stdout io.Writer
	stderr io.Writer
}

func (r *runner) json() bool { return r.o.output == "json" }

// finish records which optional-value flags were present and assigns stray
// positional arguments to --state / --type given without '=' (pflag cannot
// consume "--state stable" as a value of an optional-value flag; Kafka can).
func (o *options) finish(f *pflag.FlagSet, args []string) error {
	o.stateSet = clikit.OptionalValue(f, &o.state, "state")
	o.typSet = clikit.OptionalValue(f, &o.typ, "type")
	o.ResetScenario.Finish(f)
	for _, a := range args {
		switch {
		case o.list && o.stateSet && o.state == "" && (!o.typSet || o.typ != "" || validStateList(a)):
			o.state = a
		case o.list && o.typSet && o.typ == "":
			o.typ = a
		default:
			return usagef("Found non-option argument '%s'.", a)
		}
	}
	return nil
}

func validStateList(s string) bool {
	_, err := parseStates(s)
	return err == nil
}

func (o *options) validate() error {
	if err := clikit.ExactlyOneAction(o.list, o.describe, o.deleteGroups, o.resetOffsets, o.deleteOffsets); err != nil {
		return err
	}
	if err := o.ConnFlags.Validate(); err != nil {
		return err
	}
	if o.output != "text" && o.output != "json" {
		return usagef("Invalid output format '%s'. Valid formats are: text, json", o.output)
	}
	if err := clikit.CheckGroupScope(o.groups, o.allGroups, ""); err != nil {
		return err
	}
	if (len(o.groups) > 0 || o.allGroups) && o.list {
		return usagef("Option [%s] can't be used along with option [list]", clikit.Pick(o.allGroups, "all-groups", "group"))
	}
	if len(o.topics) > 0 && (o.list || o.describe) {
		return usagef("Option [topic] can't be used along with option [%s]", clikit.Pick(o.list, "list", "describe"))
	}
	if (o.members || o.offsets) && !o.describe {
		return usagef("Option [%s] can only be used with option [describe]", clikit.Pick(o.members, "members", "offsets"))
	}
	if (o.history || o.lagStatus) && !o.describe {
		return usagef("Option [%s] can only be used with option [describe]", clikit.Pick(o.history, "history", "lag-status"))
	}
	if o.Server != "" && !o.history && !o.lagStatus {
		return usagef("Option [http-server] can only be used with options [history] or [lag-status]")
	}
	if o.stateSet && !o.describe && !o.list {
		return usagef("Option [state] can only be used with options [describe] or [list]")
	}
	if o.typSet && !o.list {
		return usagef("Option [type] can only be used with option [list]")
	}
	if o.allTopics && !o.resetOffsets {
		return usagef("Option [all-topics] can only be used with option [reset-offsets]")
	}
	specs := o.resetSpecifiers()
	if (len(specs) > 0 || o.dryRun || o.execute || o.export) && !o.resetOffsets {
		return usagef("Options [to-*, shift-by, by-duration, from-file, dry-run, execute, export] can only be used with option [reset-offsets]")
	}
	switch {
	case o.list:
		if o.stateSet && o.state != "" {
			if _, err := parseStates(o.state); err != nil {
				return err
			}
		}
		if o.typSet && o.typ != "" {
			if _, err := parseTypes(o.typ); err != nil {
				return err
			}
		}
	case o.describe:
		if err := clikit.CheckGroupScope(o.groups, o.allGroups, "describe"); err != nil {
			return err
		}
		if clikit.Count(o.members, o.offsets, o.stateSet) > 1 {
			return usagef("Option [describe] takes at most one of these options: [members], [offsets], [state]")
		}
		if (o.history || o.lagStatus) && clikit.Count(o.members, o.offsets, o.stateSet, o.history, o.lagStatus) > 1 {
			return usagef("Option [%s] can't be used along with options [members], [offsets], [state], [%s]",
				clikit.Pick(o.history, "history", "lag-status"), clikit.Pick(o.history, "lag-status", "history"))
		}
		if o.stateSet && o.state != "" {
			return usagef("Option [describe] does not take a value for [state]")
		}
	case o.deleteGroups:
		if err := clikit.CheckGroupScope(o.groups, o.allGroups, "delete"); err != nil {
			return err
		}
		if len(o.topics) > 0 {
			return usagef("The consumer does not support topic-specific offset deletion from a consumer group.")
		}
	case o.deleteOffsets:
		if len(o.groups) != 1 || len(o.topics) == 0 {
			return usagef("Option [delete-offsets] takes the following options: [group] (exactly one), [topic]")
		}
		if o.allGroups {
			return usagef("Option [delete-offsets] does not take [all-groups]")
		}
		if _, err := clikit.ParseTopicArgs(o.topics); err != nil {
			return err
		}
	case o.resetOffsets:
		if o.dryRun && o.execute {
			return usagef("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
		}
		if err := clikit.CheckGroupScope(o.groups, o.allGroups, "reset-offsets"); err != nil {
			return err
		}
		if err := clikit.CheckOneScenario(specs, true); err != nil {
			return err
		}
		if o.fromFile == "" && !o.allTopics && len(o.topics) == 0 {
			return usagef("One of the reset scopes should be defined: --all-topics, --topic.")
		}
		if o.allTopics && len(o.topics) > 0 {
			return usagef("Option [all-topics] can't be used along with option [topic]")
		}
		if len(o.topics) > 0 {
			if _, err := clikit.ParseTopicArgs(o.topics); err != nil {
				return err
			}
		}
		if o.ByDuration != "" {
			if _, err := clikit.ParseISODuration(o.ByDuration); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *options) resetSpecifiers() []string {
	s := o.Specifiers()
	if o.fromFile != "" {
		s = append(s, "from-file")
	}
	return s
}
