package clikit

import (
	"time"

	"github.com/spf13/cobra"
)

// Env is what a command takes from the outside world, so tests can pin the
// clock and time zone (--by-duration, --to-datetime without zone).
type Env struct {
	Now func() time.Time
	Loc *time.Location
}

// SystemEnv is the real clock and the local time zone.
func SystemEnv() Env { return Env{Now: time.Now, Loc: time.Local} }

// NewCommand returns a cobra command with the settings the admin commands
// share: the command prints its own errors and usage hint (see Wire), takes
// any positional arguments (it checks them itself) and lists its flags in
// definition order.
func NewCommand(use, short, long string) *cobra.Command {
	cmd := &cobra.Command{
		Use:           use,
		Short:         short,
		Long:          long,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
	}
	cmd.Flags().SortFlags = false
	return cmd
}
