package streamsgroups

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/streams/topology"
)

// topologyEpochsJSON is GET /api/v1/groups/{g}/topology?all_epochs=true.
type topologyEpochsJSON struct {
	Group         string `json:"group"`
	TopologyEpoch int32  `json:"topology_epoch"`
	Status        string `json:"status"`
	Note          string `json:"note"`
	Epochs        []struct {
		Epoch       int32           `json:"epoch"`
		Current     bool            `json:"current"`
		Description json.RawMessage `json:"description"`
	} `json:"epochs"`
	Diff *topology.Diff `json:"diff"`
}

// allEpochsCmd implements --describe --topology --all-epochs: every topology description the
// plugin holds for each group (the current epoch's and, during a rolling upgrade, the previous
// one's), newest first, each in --format, then what changed between them. It reads muster's
// HTTP API (the Kafka protocol carries only the current epoch's description).
func (r *runner) allEpochsCmd(ctx context.Context) error {
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
		if i > 0 {
			fmt.Fprintln(r.stdout)
		}
		var t topologyEpochsJSON
		if err := api.Get(ctx, "/groups/"+clikit.PathEscape(g)+"/topology?all_epochs=true", &t); err != nil {
			failed++
			fmt.Fprintf(r.stderr, "Error: Reading the topology descriptions of streams group '%s' failed due to %s\n", g, err.Error())
			continue
		}
		if t.Status != "AVAILABLE" {
			failed++
			fmt.Fprintf(r.stderr, "No topology description is available for streams group '%s' (%s). %s\n", g, t.Status, t.Note)
			continue
		}
		for j, e := range t.Epochs {
			d, err := topology.Unmarshal(e.Description)
			if err != nil {
				return fmt.Errorf("invalid topology description of streams group '%s' at epoch %d: %w", g, e.Epoch, err)
			}
			if j > 0 {
				fmt.Fprintln(r.stdout)
			}
			role := "current"
			if !e.Current {
				role = "previous: members still run it"
			}
			fmt.Fprintf(r.stdout, "# Streams group '%s', topology epoch %d (%s)\n", g, e.Epoch, role)
			switch r.o.format {
			case "dot":
				fmt.Fprint(r.stdout, topology.Dot(d))
			case "mermaid":
				fmt.Fprint(r.stdout, topology.Mermaid(d))
			default:
				fmt.Fprint(r.stdout, topology.Text(d))
			}
		}
		if t.Diff != nil && len(t.Epochs) == 2 {
			fmt.Fprintf(r.stdout, "\n# Changes from topology epoch %d to %d\n", t.Epochs[1].Epoch, t.Epochs[0].Epoch)
			for _, l := range []struct {
				sign, what string
				names      []string
			}{{"+", "nodes", t.Diff.AddedNodes}, {"-", "nodes", t.Diff.RemovedNodes}, {"+", "topics", t.Diff.AddedTopics},
				{"-", "topics", t.Diff.RemovedTopics}, {"+", "stores", t.Diff.AddedStores}, {"-", "stores", t.Diff.RemovedStores}} {
				if len(l.names) > 0 {
					fmt.Fprintf(r.stdout, "%s %s: %s\n", l.sign, l.what, strings.Join(l.names, ", "))
				}
			}
			if t.Diff.Empty() {
				fmt.Fprintln(r.stdout, "no change in nodes, topics or stores")
			}
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("the topology descriptions of %d of %d streams groups are not available", failed, len(groups))}
	}
	return nil
}
