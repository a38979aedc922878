package streamsgroups

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// options are the parsed flags.
type options struct {
	clikit.ConnFlags
	clikit.HTTPFlag
	format string

	// history and allEpochs read what only muster knows, through its HTTP API.
	history, allEpochs bool

	list, describe, deleteGroups, deleteOffsets, resetOffsets bool

	groups         []string
	allGroups      bool
	inputTopics    []string
	allInputTopics bool

	state                      string
	stateSet                   bool
	offsets, members, topology bool

	dryRun, execute, export bool

	clikit.ResetScenario
}

// env is what the command takes from the outside world (tests pin it).
type env = clikit.Env

// NewCommand returns the `streams-groups` cobra command.
func NewCommand() *cobra.Command {
	return newCommand(clikit.SystemEnv())
}

func newCommand(e env) *cobra.Command {
	o := &options{}
	cmd := clikit.NewCommand("streams-groups", "List, describe and delete streams groups, show their topology, reset or delete their offsets",
		"This tool helps to list streams groups, describe a streams group (offsets, members, state, "+
			"topology), delete streams groups, and reset or delete their offsets. It mirrors Kafka's "+
			"kafka-streams-groups.sh.")
	f := cmd.Flags()
	o.ConnFlags.AddFlags(f, 30000)

	f.BoolVar(&o.list, "list", false, "List all streams groups.")
	f.BoolVar(&o.describe, "describe", false, "Describe streams group and list offset lag related to given group.")
	f.BoolVar(&o.deleteGroups, "delete", false, "Delete the given streams groups (they must be inactive).")
	f.BoolVar(&o.deleteOffsets, "delete-offsets", false, "Delete offsets of a streams group. Supports one group at a time.")
	f.BoolVar(&o.resetOffsets, "reset-offsets", false, "Reset offsets of a streams group (it must be inactive); needs --dry-run or --execute.")

	f.StringArrayVar(&o.groups, "group", nil, "The streams group to act on (repeatable).")
	f.BoolVar(&o.allGroups, "all-groups", false, "Apply to all streams groups.")
	f.StringArrayVar(&o.inputTopics, "input-topic", nil, "Input topic to act on, optionally with partitions: topic1:0,1,2 (repeatable).")
	f.BoolVar(&o.allInputTopics, "all-input-topics", false, "Consider all input topics of the group.")

	clikit.OptionalStringFlag(f, &o.state, "state", "With --describe: show the group state. With --list: show states, optionally filtered (e.g. --state=Stable,Empty).")
	f.BoolVar(&o.offsets, "offsets", false, "Describe the group's input partitions with offset lag (default describe view).")
	f.BoolVar(&o.members, "members", false, "Describe the members of the group.")
	f.BoolVar(&o.topology, "topology", false, "Describe the group's topology description (KIP-1331).")
	f.StringVar(&o.format, "format", "text", "With --topology: text (Kafka's Topology#describe), dot (Graphviz) or mermaid.")
	f.BoolVar(&o.history, "history", false, "With --describe: the group's rebalance history, every group epoch bump with its causes (muster only, through its HTTP API).")
	f.BoolVar(&o.allEpochs, "all-epochs", false, "With --describe --topology: the topology descriptions of the current and, during a rolling upgrade, the previous topology epoch, with what changed (muster only, through its HTTP API).")
	o.HTTPFlag.AddFlags(f)

	f.BoolVar(&o.dryRun, "dry-run", false, "Only show the new offsets of --reset-offsets, without committing them.")
	f.BoolVar(&o.execute, "execute", false, "Execute the offset reset.")
	f.BoolVar(&o.export, "export", false, "With --reset-offsets: print the new offsets as CSV (topic,partition,offset; group first with several groups).")
	o.ResetScenario.AddFlags(f, "Reset offsets shifting current offset by 'n' (positive or negative).")

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
	cl, err := newAdmin(o, c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer cl.Close()
	r := &runner{o: o, env: e, cl: cl, stdout: c.OutOrStdout(), stderr: c.ErrOrStderr()}
	switch {
	case o.list:
		return r.list(ctx)
	case o.describe && o.history:
		return r.historyCmd(ctx)
	case o.describe && o.topology && o.allEpochs:
		return r.allEpochsCmd(ctx)
	case o.describe && o.topology:
		return r.topologyCmd(ctx)
	case o.describe:
		return r.describeCmd(ctx)
	case o.deleteGroups:
		return r.deleteCmd(ctx)
	case o.deleteOffsets:
		return r.deleteOffsetsCmd(ctx)
	default:
		return r.resetCmd(ctx)
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

// finish records optional-value flags and lets "--state Stable" (value
// after a blank) work as in Kafka.
func (o *options) finish(f *pflag.FlagSet, args []string) error {
	o.stateSet = clikit.OptionalValue(f, &o.state, "state")
	o.ResetScenario.Finish(f)
	for _, a := range args {
		if o.list && o.stateSet && o.state == "" {
			o.state = a
			continue
		}
		return usagef("Found non-option argument '%s'.", a)
	}
	return nil
}

func (o *options) validate() error {
	if err := clikit.ExactlyOneAction(o.list, o.describe, o.deleteGroups, o.deleteOffsets, o.resetOffsets); err != nil {
		return err
	}
	if err := o.ConnFlags.Validate(); err != nil {
		return err
	}
	if err := clikit.CheckGroupScope(o.groups, o.allGroups, ""); err != nil {
		return err
	}
	if o.list && (len(o.groups) > 0 || o.allGroups) {
		return usagef("Option [%s] can't be used along with option [list]", clikit.Pick(o.allGroups, "all-groups", "group"))
	}
	if (len(o.inputTopics) > 0 || o.allInputTopics) && !o.resetOffsets && !o.deleteOffsets {
		return usagef("Option [%s] can only be used with options [reset-offsets] or [delete-offsets]", clikit.Pick(o.allInputTopics, "all-input-topics", "input-topic"))
	}
	if (o.members || o.offsets || o.topology) && !o.describe {
		return usagef("Option [%s] can only be used with option [describe]", clikit.Pick(o.members, "members", clikit.Pick(o.offsets, "offsets", "topology")))
	}
	if o.stateSet && !o.describe && !o.list {
		return usagef("Option [state] can only be used with options [describe] or [list]")
	}
	if o.history && !o.describe {
		return usagef("Option [history] can only be used with option [describe]")
	}
	if o.allEpochs && !o.topology {
		return usagef("Option [all-epochs] can only be used with option [topology]")
	}
	if o.Server != "" && !o.history && !o.allEpochs {
		return usagef("Option [http-server] can only be used with options [history] or [all-epochs]")
	}
	if o.format != "text" && !o.topology {
		return usagef("Option [format] can only be used with option [topology]")
	}
	if o.format != "text" && o.format != "dot" && o.format != "mermaid" {
		return usagef("Invalid format '%s'. Valid formats are: text, dot, mermaid", o.format)
	}
	specs := o.resetSpecifiers()
	if (len(specs) > 0 || o.dryRun || o.execute || o.export) && !o.resetOffsets {
		return usagef("Options [to-*, shift-by, by-duration, dry-run, execute, export] can only be used with option [reset-offsets]")
	}
	switch {
	case o.list:
		if o.stateSet && o.state != "" {
			if _, err := parseStates(o.state); err != nil {
				return err
			}
		}
	case o.describe:
		if err := clikit.CheckGroupScope(o.groups, o.allGroups, "describe"); err != nil {
			return err
		}
		if clikit.Count(o.members, o.offsets, o.stateSet, o.topology) > 1 {
			return usagef("Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]")
		}
		if o.history && clikit.Count(o.members, o.offsets, o.stateSet, o.topology) > 0 {
			return usagef("Option [history] can't be used along with options [members], [offsets], [state], [topology]")
		}
		if o.stateSet && o.state != "" {
			return usagef("Option [describe] does not take a value for [state]")
		}
	case o.deleteGroups:
		if err := clikit.CheckGroupScope(o.groups, o.allGroups, "delete"); err != nil {
			return err
		}
	case o.deleteOffsets:
		if len(o.groups) != 1 {
			return usagef("Option [delete-offsets] takes exactly one [group]")
		}
		if clikit.Count(len(o.inputTopics) > 0, o.allInputTopics) != 1 {
			return usagef("Option [delete-offsets] takes one of these options: [all-input-topics], [input-topic]")
		}
		if _, err := clikit.ParseTopicArgs(o.inputTopics); err != nil {
			return err
		}
	case o.resetOffsets:
		if o.dryRun == o.execute {
			return usagef("Option [reset-offsets] takes exactly one of these options: [dry-run], [execute]")
		}
		if err := clikit.CheckGroupScope(o.groups, o.allGroups, "reset-offsets"); err != nil {
			return err
		}
		if err := clikit.CheckOneScenario(specs, false); err != nil {
			return err
		}
		if clikit.Count(len(o.inputTopics) > 0, o.allInputTopics) != 1 {
			return usagef("Option [reset-offsets] takes one of these options: [all-input-topics], [input-topic]")
		}
		if _, err := clikit.ParseTopicArgs(o.inputTopics); err != nil {
			return err
		}
		if err := o.CheckTimes(); err != nil {
			return err
		}
	}
	return nil
}

func (o *options) resetSpecifiers() []string { return o.Specifiers() }
