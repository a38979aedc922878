package streamsgroups

import (
	"context"
	"fmt"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// historyCmd implements --describe --history: each group's rebalance history from muster's
// HTTP API (/api/v1/groups/{g}/history), oldest first.
func (r *runner) historyCmd(ctx context.Context) error {
	api, err := clikit.NewHTTPAPI(r.o.HTTPFlag, r.o.ConnFlags)
	if err != nil {
		return err
	}
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return err
	}
	failed := 0
	for i, g := range groups {
		h, err := clikit.FetchHistory(ctx, api, g)
		if err != nil {
			failed++
			fmt.Fprintf(r.stderr, "Error: Reading the rebalance history of streams group '%s' failed due to %s\n", g, err.Error())
			continue
		}
		if i > 0 {
			fmt.Fprintln(r.stdout)
		}
		if len(h.Events) == 0 {
			fmt.Fprintf(r.stdout, "Streams group '%s' has no recorded rebalance.\n", g)
			continue
		}
		clikit.PrintHistory(r.stdout, h)
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("reading the rebalance history failed for %d of %d streams groups", failed, len(groups))}
	}
	return nil
}
