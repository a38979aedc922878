package sharegroups

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// validStates are the share group states (Kafka's ShareGroupState).
var validStates = []string{"Empty", "Stable", "Dead"}

// parseStates parses a --state list.
func parseStates(in string) ([]string, error) { return clikit.ParseNameList(in, validStates, "state") }

// listShareGroups lists share groups (ListGroups v5 type filter "share"), optionally in the
// given states, sorted by id.
func (r *runner) listShareGroups(parent context.Context, states []string) ([]kadm.ListedGroup, error) {
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	listed, err := r.cl.Adm.ListGroupsByType(ctx, []string{"share"}, states...)
	if err != nil {
		return nil, err
	}
	var out []kadm.ListedGroup
	for _, g := range listed.Sorted() {
		if !strings.EqualFold(g.GroupType, "share") {
			continue
		}
		if len(states) > 0 && clikit.Canonical(g.State, states) == "" {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

type listedJSON struct {
	Group string `json:"group"`
	State string `json:"state"`
}

// list implements --list [--state [s,...]].
func (r *runner) list(ctx context.Context) error {
	var states []string
	if r.o.state != "" {
		states, _ = parseStates(r.o.state) // validated already
	}
	groups, err := r.listShareGroups(ctx, states)
	if err != nil {
		return err
	}
	if r.json() {
		out := []listedJSON{}
		for _, g := range groups {
			out = append(out, listedJSON{Group: g.Group, State: g.State})
		}
		return r.writeJSON(out)
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
	clikit.WriteRow(r.stdout, []int{w}, "GROUP", "STATE")
	for _, g := range groups {
		clikit.WriteRow(r.stdout, []int{w}, g.Group, g.State)
	}
	return nil
}

// groupIDs resolves --group / --all-groups.
func (r *runner) groupIDs(ctx context.Context) ([]string, error) {
	if !r.o.allGroups {
		return r.o.groups, nil
	}
	listed, err := r.listShareGroups(ctx, nil)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, g := range listed {
		ids = append(ids, g.Group)
	}
	return ids, nil
}
