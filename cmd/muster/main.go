// Command muster is a Kafka-compatible broker with a complete group coordinator, and the admin
// tools that go with it:
//
//	muster serve                 run the broker (embedded Pebble store in --data-dir)
//	muster consumer-groups ...   kafka-consumer-groups.sh against any Kafka-compatible cluster
//	muster acls ...              kafka-acls.sh: add, remove and list ACLs
//	muster storage format ...    kafka-storage.sh format --add-scram: bootstrap SCRAM users offline
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/cli/acls"
	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/cli/consumergroups"
	"github.com/muster-io/muster/internal/cli/storage"
)

func main() {
	root := &cobra.Command{
		Use:           "muster",
		Short:         "A Kafka-compatible broker whose heart is the group coordinator",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), consumergroups.NewCommand(), acls.NewCommand(), storage.NewCommand())
	for _, extra := range extraCommands {
		root.AddCommand(extra())
	}
	if err := root.Execute(); err != nil {
		var ee *clikit.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.Code)
		}
		var ce interface{ ExitCode() int }
		if errors.As(err, &ce) {
			os.Exit(ce.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// extraCommands are added by other files of this package (streams-groups, bench, ...).
var extraCommands []func() *cobra.Command
