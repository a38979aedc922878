package consumergroups

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// Group states and types as Kafka spells them (ConsumerGroupState, GroupType).
var (
	validStates = []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling"}
	validTypes  = []string{"Consumer", "Classic"}
)

// parseStates parses a --state list (Kafka's groupStatesFromString).
func parseStates(in string) ([]string, error) { return clikit.ParseNameList(in, validStates, "state") }

// parseTypes parses a --type list (Kafka's consumerGroupTypesFromString).
func parseTypes(in string) ([]string, error) { return clikit.ParseNameList(in, validTypes, "types") }

// appendUnique appends s unless ss holds it.
func appendUnique(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}

// displayType renders a ListGroups group type ("classic") as Kafka's
// GroupType does ("Classic").
func displayType(t string) string {
	if c := clikit.Canonical(t, validTypes); c != "" {
		return c
	}
	if t == "" {
		return "Unknown"
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// isConsumerGroup keeps what Kafka's Admin#listConsumerGroups returns:
// classic groups with protocol type "consumer" or "" (offset-only groups) and
// KIP-848 consumer groups; share, streams and connect groups are excluded.
func isConsumerGroup(g kadm.ListedGroup) bool {
	switch strings.ToLower(g.GroupType) {
	case "", "classic", "consumer":
	default:
		return false
	}
	return g.ProtocolType == "consumer" || g.ProtocolType == ""
}

// listedGroup is one row of --list.
type listedGroup struct {
	Group string `json:"group"`
	Type  string `json:"type"`
	State string `json:"state"`
}

// listConsumerGroups lists consumer groups, optionally filtered by Kafka
// canonical states and types (filters are sent to the broker and re-applied
// locally, so brokers that ignore them still give the right answer).
func (r *runner) listConsumerGroups(ctxp context.Context, states, types []string) ([]listedGroup, error) {
	ctx, cancel := r.cl.Ctx(ctxp)
	defer cancel()
	var lowerTypes []string
	for _, t := range types {
		lowerTypes = append(lowerTypes, strings.ToLower(t))
	}
	listed, err := r.cl.Adm.ListGroupsByType(ctx, lowerTypes, states...)
	if err != nil {
		return nil, err
	}
	var out []listedGroup
	for _, g := range listed.Sorted() {
		if !isConsumerGroup(g) {
			continue
		}
		lg := listedGroup{Group: g.Group, Type: displayType(g.GroupType), State: g.State}
		if len(states) > 0 && clikit.Canonical(g.State, states) == "" {
			continue
		}
		if len(types) > 0 && clikit.Canonical(lg.Type, types) == "" {
			continue
		}
		out = append(out, lg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out, nil
}

// list implements --list [--state [s,...]] [--type [t,...]].
func (r *runner) list(ctx context.Context) error {
	var states, types []string
	if r.o.state != "" {
		states, _ = parseStates(r.o.state) // validated already
	}
	if r.o.typ != "" {
		types, _ = parseTypes(r.o.typ)
	}
	groups, err := r.listConsumerGroups(ctx, states, types)
	if err != nil {
		return err
	}
	if r.json() {
		if groups == nil {
			groups = []listedGroup{}
		}
		return writeJSON(r.stdout, struct {
			Groups []listedGroup `json:"groups"`
		}{groups})
	}
	if !r.o.stateSet && !r.o.typSet {
		for _, g := range groups {
			writeRow(r.stdout, nil, g.Group)
		}
		return nil
	}
	w := 15
	for _, g := range groups {
		w = maxLen(w, g.Group)
	}
	widths := []int{w + 10}
	header := []string{"GROUP"}
	if r.o.typSet {
		widths = append(widths, 20)
		header = append(header, "TYPE")
	}
	if r.o.stateSet {
		widths = append(widths, 20)
		header = append(header, "STATE")
	}
	writeRow(r.stdout, widths, header...)
	for _, g := range groups {
		cols := []string{g.Group}
		if r.o.typSet {
			cols = append(cols, g.Type)
		}
		if r.o.stateSet {
			cols = append(cols, g.State)
		}
		writeRow(r.stdout, widths, cols...)
	}
	return nil
}
