package streamsgroups

import (
	"context"
	"fmt"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// validStates are the streams group states (Kafka's GroupState values for
// GroupType.STREAMS), spelled as the broker reports them.
var validStates = []string{"Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead"}

// parseStates parses a --state list (Kafka's groupStatesFromString).
func parseStates(in string) ([]string, error) { return clikit.ParseNameList(in, validStates, "state") }

// list implements --list [--state [s,...]]: ids one per line, or with
// --state a "GROUP STATE" table (group column max(15, longest id) wide).
func (r *runner) list(ctx context.Context) error {
	var states []string
	if r.o.state != "" {
		states, _ = parseStates(r.o.state) // validated already
	}
	groups, err := r.cl.listStreamsGroups(ctx, states)
	if err != nil {
		return err
	}
	if !r.o.stateSet {
		for _, g := range groups {
			fmt.Fprintln(r.stdout, g.Group)
		}
		return nil
	}
	w := 15
	for _, g := range groups {
		w = max(w, len(g.Group))
	}
	writeRow(r.stdout, []int{w}, "GROUP", "STATE")
	for _, g := range groups {
		writeRow(r.stdout, []int{w}, g.Group, g.State)
	}
	return nil
}

// groupIDs resolves --group / --all-groups.
func (r *runner) groupIDs(ctx context.Context) ([]string, error) {
	if !r.o.allGroups {
		return r.o.groups, nil
	}
	listed, err := r.cl.listStreamsGroups(ctx, nil)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, g := range listed {
		ids = append(ids, g.Group)
	}
	return ids, nil
}
