package streamsgroups

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/muster-io/muster/internal/streams/topology"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// TopologyDescriptionStatus values of StreamsGroupDescribe v1 (KIP-1331).
const (
	statusNotRequested int8 = 0
	statusNotStored    int8 = 1
	statusError        int8 = 2
	statusAvailable    int8 = 3
)

// topologyCmd implements --describe --topology: StreamsGroupDescribe v1
// with IncludeTopologyDescription=true for each group. Exit 0 only when
// every group's status is AVAILABLE.
func (r *runner) topologyCmd(ctx context.Context) error {
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return err
	}
	failed := 0
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(r.stdout)
		}
		d, err := r.describeGroup(ctx, g, true)
		if err == nil {
			err = renderTopology(r.stdout, r.stderr, d, r.o.format)
		}
		if err != nil {
			r.printFailure(err)
			failed++
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("the topology of %d of %d streams groups is not available", failed, len(groups))}
	}
	return nil
}

// renderTopology prints d's topology description in format (text, dot or
// mermaid) on stdout, or the KIP-1331 message for a status other than
// AVAILABLE on stderr (then it returns a reportedError).
func renderTopology(stdout, stderr io.Writer, d *describedGroup, format string) error {
	if err := d.groupErr(); err != nil {
		return err
	}
	if d.version < 1 {
		return clikit.Reportf(stderr, "The broker does not support topology descriptions (StreamsGroupDescribe v1, KIP-1331).")
	}
	switch d.TopologyDescriptionStatus {
	case statusAvailable:
	case statusNotStored:
		return clikit.Reportf(stderr, "No topology description is stored for streams group '%s'.", d.Group)
	case statusError:
		return clikit.Reportf(stderr, "The broker failed to fetch the topology description for streams group '%s'. See the broker logs for details.", d.Group)
	case statusNotRequested:
		return clikit.Reportf(stderr, "The broker did not return a topology description for streams group '%s' (status NOT_REQUESTED).", d.Group)
	default:
		return clikit.Reportf(stderr, "Unknown topology description status %d for streams group '%s'.", d.TopologyDescriptionStatus, d.Group)
	}
	desc, err := topology.FromDescribe(d.TopologyDescription)
	if err != nil {
		return fmt.Errorf("invalid topology description of streams group '%s': %w", d.Group, err)
	}
	if desc == nil {
		return clikit.Reportf(stderr, "The broker reported an available topology description for streams group '%s' but sent none.", d.Group)
	}
	var out string
	switch format {
	case "dot":
		out = topology.Dot(desc)
	case "mermaid":
		out = topology.Mermaid(desc)
	default:
		out = topology.Text(desc)
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	_, err = io.WriteString(stdout, out)
	return err
}
