package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/streams/topology"
)

// KIP-1331 TopologyDescriptionStatus values of StreamsGroupDescribe v1.
const (
	tdNotRequested int8 = 0
	tdNotStored    int8 = 1
	tdError        int8 = 2
	tdAvailable    int8 = 3
)

// Topology is GET /api/v1/groups/{g}/topology: a streams group's topology descriptions, the
// current epoch's or (all_epochs) every epoch the plugin holds — during a rolling upgrade the
// previous one too — newest first, with what changed from the previous to the current.
type Topology struct {
	Group string `json:"group"`
	// TopologyEpoch is the group's topology epoch (-1: none yet).
	TopologyEpoch int32 `json:"topology_epoch"`
	// Status is AVAILABLE, NOT_STORED, ERROR or NO_PLUGIN.
	Status string          `json:"status"`
	Note   string          `json:"note,omitempty"`
	Epochs []TopologyEpoch `json:"epochs"`
	// Diff is from the previous epoch to the current one (all_epochs with two epochs).
	Diff *topology.Diff `json:"diff,omitempty"`
}

// TopologyEpoch is one epoch's description: canonical JSON and Kafka's Topology#describe text.
type TopologyEpoch struct {
	Epoch       int32           `json:"epoch"`
	Current     bool            `json:"current"`
	Description json.RawMessage `json:"description"`
	Text        string          `json:"text"`
	desc        *topology.Description
}

// topology reads a group's descriptions.
func (c *Console) topology(ctx context.Context, id string, all bool) (*Topology, error) {
	sum, err := c.groupType(ctx, id)
	if err != nil {
		return nil, err
	}
	if sum.Type != "streams" {
		return nil, badf(fmt.Sprintf("group %s is a %s group; topology descriptions belong to streams groups", id, sum.Type))
	}
	rg, err := c.streamsDescribe(ctx, id, !all)
	if err != nil {
		return nil, err
	}
	t := &Topology{Group: id, TopologyEpoch: -1, Epochs: []TopologyEpoch{}}
	if rg.Topology != nil {
		t.TopologyEpoch = rg.Topology.Epoch
	}
	td := c.d.Coordinator.TopologyDescriptions
	if td == nil {
		t.Status = "NO_PLUGIN"
		t.Note = "No topology description plugin is configured (group.streams.topology.description.plugin.class)."
		return t, nil
	}
	var epochs []api.EpochDescription
	if all {
		if epochs, err = td.AllEpochs(ctx, id); err != nil {
			t.Status, t.Note = "ERROR", "The topology description plugin failed; see the broker log."
			return t, nil
		}
	} else {
		switch rg.TopologyDescriptionStatus {
		case tdAvailable:
			d, err := topology.FromDescribe(rg.TopologyDescription)
			if err != nil || d == nil {
				t.Status, t.Note = "ERROR", "The stored topology description is not valid."
				return t, nil
			}
			epochs = []api.EpochDescription{{Epoch: t.TopologyEpoch, Description: d}}
		case tdError:
			t.Status, t.Note = "ERROR", "The topology description plugin failed; see the broker log."
			return t, nil
		}
	}
	if len(epochs) == 0 {
		t.Status = "NOT_STORED"
		t.Note = "No topology description is stored for this group yet (members push it when the broker asks, KIP-1331)."
		return t, nil
	}
	t.Status = "AVAILABLE"
	for _, e := range epochs {
		raw, _ := e.Description.MarshalJSON()
		t.Epochs = append(t.Epochs, TopologyEpoch{Epoch: e.Epoch, Current: e.Epoch == t.TopologyEpoch, Description: raw,
			Text: topology.Text(e.Description), desc: e.Description})
	}
	if len(t.Epochs) == 2 {
		d := topology.Compare(t.Epochs[1].desc, t.Epochs[0].desc)
		t.Diff = &d
	}
	return t, nil
}

func (c *Console) apiTopology(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathGroup(r)
	if err != nil {
		return nil, err
	}
	q, err := parseQuery(r.URL.RawQuery, "all_epochs")
	if err != nil {
		return nil, err
	}
	all, err := q.boolean("all_epochs", false)
	if err != nil {
		return nil, err
	}
	return c.topology(r.Context(), id, all)
}

// topologyView draws a streams group's descriptions: every epoch the plugin holds, newest first;
// during a rolling upgrade the current graph marks the nodes it added and the previous graph
// the nodes the upgrade removes, and a list names the changed nodes, topics and stores.
func (c *Console) topologyView(ctx context.Context, id string) *topologyView {
	v := &topologyView{}
	t, err := c.topology(ctx, id, true)
	if err != nil {
		v.Note = "The topology description could not be read: " + err.Error()
		return v
	}
	v.Note = t.Note
	var added, removed map[string]bool
	var lines []diffLine
	if t.Diff != nil {
		added, removed = set(t.Diff.AddedNodes), set(t.Diff.RemovedNodes)
		add := func(class, what string, names []string) {
			if len(names) > 0 {
				sign := map[string]string{"added": "+ ", "removed": "− "}[class]
				lines = append(lines, diffLine{Class: class, Text: sign + what + ": " + strings.Join(names, ", ")})
			}
		}
		add("added", "nodes", t.Diff.AddedNodes)
		add("removed", "nodes", t.Diff.RemovedNodes)
		add("added", "topics", t.Diff.AddedTopics)
		add("removed", "topics", t.Diff.RemovedTopics)
		add("added", "stores", t.Diff.AddedStores)
		add("removed", "stores", t.Diff.RemovedStores)
		if len(lines) == 0 {
			lines = []diffLine{{Text: "no change in nodes, topics or stores"}}
		}
	}
	for i, e := range t.Epochs {
		ev := topologyEpochView{Epoch: e.Epoch, Current: e.Current}
		switch {
		case i == 0 && len(t.Epochs) == 2:
			ev.Diff = lines
			ev.Graph = topologyGraph(e.desc, added, nil)
		case i == 1:
			ev.Graph = topologyGraph(e.desc, nil, removed)
		default:
			ev.Graph = topologyGraph(e.desc, nil, nil)
		}
		v.Epochs = append(v.Epochs, ev)
	}
	return v
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
