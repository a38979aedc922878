package streamsgroups

import (
	"context"
	"fmt"
	"strings"
)

// validStates are the streams group states (Kafka's GroupState values for
// GroupType.STREAMS), spelled as the broker reports them.
var validStates = []string{"Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead"}

func normState(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", " ", "").Replace(s))
}

// canonicalState returns the entry of valid matching s (case-insensitive,
// ignoring '_' and blanks, so "not_ready" is "NotReady"), or "".
func canonicalState(s string, valid []string) string {
	for _, v := range valid {
		if normState(s) == normState(v) {
			return v
		}
	}
	return ""
}

// parseStates parses a comma-separated state list.
func parseStates(in string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(in, ",") {
		c := canonicalState(strings.TrimSpace(s), validStates)
		if c == "" {
			return nil, usagef("Invalid state list '%s'. Valid states are: %s", in, strings.Join(validStates, ", "))
		}
		if canonicalState(c, out) == "" {
			out = append(out, c)
		}
	}
	return out, nil
}

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
