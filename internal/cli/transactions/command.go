// Package transactions is `muster transactions`, which mirrors Kafka's kafka-transactions.sh
// (KIP-664) against any Kafka-compatible cluster: list transactions, describe a transactional
// id, describe the producers of a partition, find hanging transactions and abort one. As in
// Kafka's tool the actions are subcommands (`muster transactions --bootstrap-server b list`);
// `--list`, `--describe`, `--describe-producers`, `--find-hanging` and `--abort` name them too.
// Tables follow Kafka's ToolsUtils.prettyPrintTable; --output json prints the same data as
// JSON.
package transactions

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// options are the parsed flags of the command and its subcommands.
type options struct {
	clikit.ConnFlags
	output string

	list, describe, describeProducers, findHanging, abort bool

	transactionalID string
	durationFilter  int64
	topic           string
	partition       int32
	brokerID        int32
	maxTimeoutMin   int64
	startOffset     int64
	producerID      int64
	producerEpoch   int16
	coordEpoch      int32

	// changed reports whether a flag was given (set by execute).
	changed func(name string) bool
}

// env is what the command takes from the outside world.
type env = clikit.Env

// NewCommand returns the `transactions` cobra command.
func NewCommand() *cobra.Command { return newCommand(clikit.SystemEnv()) }

// action is one of the tool's commands.
type action struct {
	name, help string
	flag       *bool
	flags      func(f *pflag.FlagSet, o *options)
	run        func(ctx context.Context, a *clikit.Admin, o *options, e env, out io.Writer) error
}

func actions(o *options) []action {
	return []action{
		{"list", "list transactions", &o.list, listFlags, runList},
		{"describe", "describe the state of an active transactional-id", &o.describe, describeFlags, runDescribe},
		{"describe-producers", "describe the states of active producers for a topic partition", &o.describeProducers, producerFlags, runDescribeProducers},
		{"abort", "abort a hanging transaction (requires administrative privileges)", &o.abort, abortFlags, runAbort},
		{"find-hanging", "find hanging transactions", &o.findHanging, hangingFlags, runFindHanging},
	}
}

func newCommand(e env) *cobra.Command {
	o := &options{}
	cmd := clikit.NewCommand("transactions", "List, describe and abort transactions; describe producers; find hanging transactions",
		"This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect "+
			"and recover from hanging transactions. It mirrors Kafka's kafka-transactions.sh and works against any "+
			"Kafka-compatible cluster. Commands: list, describe, describe-producers, abort, find-hanging (also as "+
			"--list, --describe, ... flags).")
	pf := cmd.PersistentFlags()
	o.ConnFlags.AddFlags(pf, 30000)
	pf.StringVar(&o.output, "output", "text", "Output format: text or json.")
	acts := actions(o)
	f := cmd.Flags()
	for _, a := range acts {
		f.BoolVar(a.flag, a.name, false, "Run the "+a.name+" command: "+a.help+".")
	}
	for _, a := range acts {
		a.flags(f, o) // the parent's action flags take every subcommand's options
	}
	clikit.Wire(cmd, "", errMessage, func(c *cobra.Command, args []string) error {
		var chosen []action
		for _, a := range acts {
			if *a.flag {
				chosen = append(chosen, a)
			}
		}
		if len(chosen) != 1 {
			return clikit.Usagef("Exactly one command is needed: list, describe, describe-producers, abort or find-hanging")
		}
		return execute(c, o, e, chosen[0])
	})
	for _, a := range acts {
		a := a
		sub := clikit.NewCommand(a.name, a.help, a.help+".")
		a.flags(sub.Flags(), o)
		clikit.Wire(sub, "", errMessage, func(c *cobra.Command, args []string) error {
			return execute(c, o, e, a)
		})
		cmd.AddCommand(sub)
	}
	return cmd
}

// The flag helpers add a flag unless the set has it (the parent takes the flags of every
// subcommand, and some share names).
func strFlag(f *pflag.FlagSet, p *string, name, usage string) {
	if f.Lookup(name) == nil {
		f.StringVar(p, name, "", usage)
	}
}

func int64Flag(f *pflag.FlagSet, p *int64, name string, def int64, usage string) {
	if f.Lookup(name) == nil {
		f.Int64Var(p, name, def, usage)
	}
}

func int32Flag(f *pflag.FlagSet, p *int32, name string, usage string) {
	if f.Lookup(name) == nil {
		f.Int32Var(p, name, 0, usage)
	}
}

func int16Flag(f *pflag.FlagSet, p *int16, name string, usage string) {
	if f.Lookup(name) == nil {
		f.Int16Var(p, name, 0, usage)
	}
}

func execute(c *cobra.Command, o *options, e env, a action) error {
	o.changed = c.Flags().Changed
	if err := o.ConnFlags.Validate(); err != nil {
		return err
	}
	if o.output != "text" && o.output != "json" {
		return clikit.Usagef("--output must be text or json, got %q", o.output)
	}
	adm, err := clikit.NewAdmin(o.ConnFlags, "muster-transactions", c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer adm.Close()
	return a.run(c.Context(), adm, o, e, c.OutOrStdout())
}

func errMessage(err error) string { return err.Error() }

// printTable prints Kafka's ToolsUtils.prettyPrintTable: every cell left-aligned, padded to its
// column's width and followed by a tab.
func printTable(w io.Writer, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i := range headers {
			widths[i] = max(widths[i], len(r[i]))
		}
	}
	line := func(r []string) {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-len(c)))
			b.WriteByte('\t')
		}
		fmt.Fprintln(w, b.String())
	}
	line(headers)
	for _, r := range rows {
		line(r)
	}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func nowMs(e env) int64 { return e.Now().UnixMilli() }

// timeout bounds one broker operation.
func timeout(parent context.Context, a *clikit.Admin) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return a.Ctx(parent)
}
