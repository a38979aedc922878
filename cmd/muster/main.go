// Command muster is a Kafka-compatible broker with a complete group coordinator, and the admin
// tools that go with it:
//
//	muster serve                 run the broker (embedded Pebble store in --data-dir)
//	muster consumer-groups ...   kafka-consumer-groups.sh against any Kafka-compatible cluster
//	muster streams-groups ...    kafka-streams-groups.sh against any Kafka-compatible cluster
//	muster share-groups ...      kafka-share-groups.sh against any Kafka-compatible cluster
//	muster configs ...           kafka-configs.sh: describe and alter topic, broker, group and user (SCRAM) configs
//	muster acls ...              kafka-acls.sh: add, remove and list ACLs
//	muster storage format ...    kafka-storage.sh format --add-scram: bootstrap SCRAM users offline
//	muster cluster status        cluster mode: nodes, their coordinator shards, lease epochs and expiries
//
// Benchmarks live in their own command, cmd/muster-bench, so this binary carries no benchmark code.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/cli/acls"
	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/cli/cluster"
	"github.com/muster-io/muster/internal/cli/configs"
	"github.com/muster-io/muster/internal/cli/consumergroups"
	"github.com/muster-io/muster/internal/cli/sharegroups"
	"github.com/muster-io/muster/internal/cli/storage"
	"github.com/muster-io/muster/internal/cli/streamsgroups"
	"github.com/muster-io/muster/internal/cli/transactions"
)

func main() {
	root := &cobra.Command{
		Use:           "muster",
		Short:         "A Kafka-compatible broker whose heart is the group coordinator",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), consumergroups.NewCommand(), streamsgroups.NewCommand(), sharegroups.NewCommand(),
		configs.NewCommand(), acls.NewCommand(), storage.NewCommand(), transactions.NewCommand(), cluster.NewCommand())
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
