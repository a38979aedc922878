package consumergroups

import (
	"context"
	"fmt"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// observeCmd implements --describe --history and --describe --lag-status: what only muster
// knows of a group, read from its HTTP API (/api/v1/groups/{g}/history and /lag), for each
// group in turn. A group without history, or not in the latest lag sample, is an error for that
// group (exit 1), as Kafka's tools report a missing group.
func (r *runner) observeCmd(ctx context.Context) error {
	api, err := clikit.NewHTTPAPI(r.o.HTTPFlag, r.o.ConnFlags)
	if err != nil {
		return err
	}
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return err
	}
	what := clikit.Pick(r.o.history, "rebalance history", "lag status")
	failed := 0
	var docs []any
	for i, g := range groups {
		var doc any
		var err error
		if r.o.history {
			var h *clikit.HistoryJSON
			if h, err = clikit.FetchHistory(ctx, api, g); err == nil {
				doc = h
				if !r.json() {
					if i > 0 {
						fmt.Fprintln(r.stdout)
					}
					if len(h.Events) == 0 {
						fmt.Fprintf(r.stdout, "Consumer group '%s' has no recorded rebalance.\n", g)
					} else {
						clikit.PrintHistory(r.stdout, h)
					}
				}
			}
		} else {
			var l *clikit.LagJSON
			if l, err = clikit.FetchLag(ctx, api, g); err == nil {
				doc = l
				if !r.json() {
					if i > 0 {
						fmt.Fprintln(r.stdout)
					}
					clikit.PrintLag(r.stdout, l)
				}
			}
		}
		if err != nil {
			failed++
			clikit.PrintError(r.stderr, "Reading the %s of consumer group '%s' failed due to %s", what, g, err.Error())
			continue
		}
		docs = append(docs, doc)
	}
	if r.json() {
		if docs == nil {
			docs = []any{}
		}
		if err := writeJSON(r.stdout, docs); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("reading the %s failed for %d of %d consumer groups", what, failed, len(groups))}
	}
	return nil
}
