package sharegroups

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// options are the parsed flags.
type options struct {
	clikit.ConnFlags
	output string

	list, describe, deleteGroups, deleteOffsets, resetOffsets bool

	groups    []string
	allGroups bool
	topics    []string
	allTopics bool

	state            string
	stateSet         bool
	offsets, members bool

	dryRun, execute, export bool

	clikit.ResetScenario
}

// env is what the command takes from the outside world (tests pin it).
type env = clikit.Env

// NewCommand returns the `share-groups` cobra command.
func NewCommand() *cobra.Command { return newCommand(clikit.SystemEnv()) }

func newCommand(e env) *cobra.Command {
	o := &options{}
	cmd := clikit.NewCommand("share-groups", "List, describe and delete share groups, reset or delete their offsets",
		"This tool helps to list share groups, describe a share group (offsets, members, state), "+
			"delete share groups, and reset or delete their share-partition start offsets. It mirrors "+
			"Kafka's kafka-share-groups.sh.")
	f := cmd.Flags()
	o.ConnFlags.AddFlags(f, 30000)
	f.StringVar(&o.output, "output", "text", "Output format: text or json.")

	f.BoolVar(&o.list, "list", false, "List all share groups.")
	f.BoolVar(&o.describe, "describe", false, "Describe share group, members and offset lag.")
	f.BoolVar(&o.deleteGroups, "delete", false, "Delete the given share groups (they must be empty).")
	f.BoolVar(&o.deleteOffsets, "delete-offsets", false, "Delete the share-partition state of topics of a share group. Supports one group at a time.")
	f.BoolVar(&o.resetOffsets, "reset-offsets", false, "Reset the share-partition start offsets of a share group (it must be empty); needs --dry-run or --execute.")

	f.StringArrayVar(&o.groups, "group", nil, "The share group to act on (repeatable).")
	f.BoolVar(&o.allGroups, "all-groups", false, "Apply to all share groups.")
	f.StringArrayVar(&o.topics, "topic", nil, "The topic to act on, with --reset-offsets optionally with partitions: topic1:0,1,2 (repeatable).")
	f.BoolVar(&o.allTopics, "all-topics", false, "Consider all topics of the group in --reset-offsets.")

	clikit.OptionalStringFlag(f, &o.state, "state", "With --describe: show the group state. With --list: show states, optionally filtered (e.g. --state=Stable,Empty).")
	f.BoolVar(&o.offsets, "offsets", false, "Describe the group's share-partitions with their start offsets and lag (default describe view).")
	f.BoolVar(&o.members, "members", false, "Describe the members of the group.")

	f.BoolVar(&o.dryRun, "dry-run", false, "Only show the new start offsets of --reset-offsets, without applying them.")
	f.BoolVar(&o.execute, "execute", false, "Execute the reset.")
	f.BoolVar(&o.export, "export", false, "With --reset-offsets: print the new offsets as CSV (topic,partition,offset; group first with several groups).")
	o.ResetScenario.AddFlags(f, "Reset start offsets shifting the current start offset by 'n' (positive or negative).")

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
	a, err := clikit.NewAdmin(o.ConnFlags, "muster-share-groups", c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer a.Close()
	r := &runner{o: o, env: e, cl: a, stdout: c.OutOrStdout(), stderr: c.ErrOrStderr()}
	switch {
	case o.list:
		return r.list(ctx)
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
	cl     *clikit.Admin
	stdout io.Writer
	stderr io.Writer
}

func (r *runner) json() bool { return r.o.output == "json" }

// writeJSON prints v as one indented JSON document.
func (r *runner) writeJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(r.stdout, string(b))
	return err
}

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
	if o.output != "text" && o.output != "json" {
		return usagef("Invalid output format '%s'. Valid formats are: text, json", o.output)
	}
	if err := clikit.CheckGroupScope(o.groups, o.allGroups, ""); err != nil {
		return err
	}
	if o.list && (len(o.groups) > 0 || o.allGroups) {
		return usagef("Option [%s] can't be used along with option [list]", clikit.Pick(o.allGroups, "all-groups", "group"))
	}
	if (len(o.topics) > 0 || o.allTopics) && !o.resetOffsets && !o.deleteOffsets {
		return usagef("Option [%s] can only be used with options [reset-offsets] or [delete-offsets]", clikit.Pick(o.allTopics, "all-topics", "topic"))
	}
	if (o.members || o.offsets) && !o.describe {
		return usagef("Option [%s] can only be used with option [describe]", clikit.Pick(o.members, "members", "offsets"))
	}
	if o.stateSet && !o.describe && !o.list {
		return usagef("Option [state] can only be used with options [describe] or [list]")
	}
	specs := o.Specifiers()
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
		if clikit.Count(o.members, o.offsets, o.stateSet) > 1 {
			return usagef("Option [describe] takes at most one of these options: [members], [offsets], [state]")
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
		if len(o.topics) == 0 || o.allTopics {
			return usagef("Option [delete-offsets] takes one or more [topic]")
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
		if clikit.Count(len(o.topics) > 0, o.allTopics) != 1 {
			return usagef("Option [reset-offsets] takes one of these options: [all-topics], [topic]")
		}
		if _, err := clikit.ParseTopicArgs(o.topics); err != nil {
			return err
		}
		if err := o.CheckTimes(); err != nil {
			return err
		}
	}
	return nil
}

// usagef is a bad invocation (printed as "Error: msg" plus a usage hint).
var usagef = clikit.Usagef

// reportedError is a failure whose message is already on stderr.
type reportedError = clikit.ReportedError

// failedPrefix starts the message of a runtime failure (Kafka's tool text).
const failedPrefix = "Executing share group command failed due to "

// writeTable prints rows (the first is the header) with widths max(15, longest cell).
var writeTable = clikit.WriteTable
