package streamsgroups

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// admin is the shared franz-go admin client bounded by --timeout, with the
// streams-group requests below.
type admin struct{ *clikit.Admin }

func newAdmin(o *options, stderr io.Writer) (*admin, error) {
	a, err := clikit.NewAdmin(o.ConnFlags, "muster-streams-groups", stderr)
	if err != nil {
		return nil, err
	}
	return &admin{a}, nil
}

// coordinatorInfo is a group's coordinator as FindCoordinator reports it.
type coordinatorInfo struct {
	id   int32
	host string
	port int32
}

func (c coordinatorInfo) String() string { return fmt.Sprintf("%s:%d  (%d)", c.host, c.port, c.id) }

// findCoordinator looks the group's coordinator up.
func (a *admin) findCoordinator(parent context.Context, group string) (coordinatorInfo, error) {
	ctx, cancel := a.Ctx(parent)
	defer cancel()
	resp := a.Adm.FindGroupCoordinators(ctx, group)
	r, ok := resp[group]
	if !ok {
		return coordinatorInfo{}, fmt.Errorf("no coordinator for group '%s'", group)
	}
	if r.Err != nil {
		return coordinatorInfo{}, r.Err
	}
	return coordinatorInfo{id: r.NodeID, host: r.Host, port: r.Port}, nil
}

// describedGroup is one StreamsGroupDescribe result with its coordinator.
type describedGroup struct {
	kmsg.StreamsGroupDescribeResponseGroup
	coord   coordinatorInfo
	version int16
}

// describe sends StreamsGroupDescribe (API key 89) for one group to its
// coordinator. kgo's Client.Request does not route key 89, so the request
// goes to the coordinator broker directly. withTopology sets
// IncludeTopologyDescription (v1).
func (a *admin) describe(parent context.Context, group string, withTopology bool) (*describedGroup, error) {
	coord, err := a.findCoordinator(parent, group)
	if err != nil {
		return nil, err
	}
	ctx, cancel := a.Ctx(parent)
	defer cancel()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	req.IncludeTopologyDescription = withTopology
	kresp, err := a.Kcl.Broker(int(coord.id)).Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.StreamsGroupDescribeResponse)
	for _, g := range resp.Groups {
		if g.Group == group {
			return &describedGroup{StreamsGroupDescribeResponseGroup: g, coord: coord, version: resp.Version}, nil
		}
	}
	return nil, fmt.Errorf("the broker did not describe group '%s'", group)
}

// groupErr is the group-level error of a describe result, with the
// broker's message when present.
func (g *describedGroup) groupErr() error {
	return clikit.NewBrokerError(g.ErrorCode, g.ErrorMessage)
}

// listStreamsGroups lists streams groups (ListGroups v5 type filter
// "streams"), optionally in the given states, sorted by id.
func (a *admin) listStreamsGroups(parent context.Context, states []string) ([]kadm.ListedGroup, error) {
	ctx, cancel := a.Ctx(parent)
	defer cancel()
	listed, err := a.Adm.ListGroupsByType(ctx, []string{"streams"}, states...)
	if err != nil {
		return nil, err
	}
	var out []kadm.ListedGroup
	for _, g := range listed.Sorted() {
		if !strings.EqualFold(g.GroupType, "streams") {
			continue
		}
		if len(states) > 0 && clikit.Canonical(g.State, states) == "" {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}
