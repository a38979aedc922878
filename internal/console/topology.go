package console

import (
	"context"

	"github.com/muster-io/muster/internal/streams/topology"
)

// KIP-1331 TopologyDescriptionStatus values of StreamsGroupDescribe v1.
const (
	tdNotRequested int8 = 0
	tdNotStored    int8 = 1
	tdError        int8 = 2
	tdAvailable    int8 = 3
)

// topologyView reads a streams group's topology description (StreamsGroupDescribe v1 with
// IncludeTopologyDescription) and draws it.
func (c *Console) topologyView(ctx context.Context, id string) *topologyView {
	v := &topologyView{}
	rg, err := c.streamsDescribe(ctx, id, true)
	if err != nil {
		v.Note = "The topology description could not be read: " + err.Error()
		return v
	}
	switch rg.TopologyDescriptionStatus {
	case tdAvailable:
	case tdNotStored:
		v.Note = "No topology description is stored for this group (KIP-1331: configure group.streams.topology.description.plugin.class; members push it when asked)."
		return v
	case tdError:
		v.Note = "The topology description plugin failed; see the broker log."
		return v
	default:
		v.Note = "No topology description is available."
		return v
	}
	d, err := topology.FromDescribe(rg.TopologyDescription)
	if err != nil || d == nil {
		v.Note = "The stored topology description is not valid."
		return v
	}
	epoch := int32(-1)
	if rg.Topology != nil {
		epoch = rg.Topology.Epoch
	}
	v.Epochs = append(v.Epochs, topologyEpochView{Epoch: epoch, Current: true, Graph: topologyGraph(d, nil, nil)})
	return v
}
