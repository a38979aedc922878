package broker

import (
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/metadata"
)

// topics is the data plane as the coordinator's adapters see it.
type topics struct{ p *data.Plane }

func (t topics) MetadataImage() *metadata.Image { return t.p.MetadataImage() }

func (t topics) CreateTopic(name string, partitions int32, configs map[string]string) error {
	_, err := t.p.CreateTopic(name, partitions, configs)
	return err
}

// refreshShard hands a shard the data plane's newest metadata image and the newest snapshot of
// the groups' dynamic configs before each operation (the engine's Refresh): the same pointers
// until topics or group configs change, so most calls compare two pointers.
func refreshShard(p *data.Plane, groupConfigs *api.GroupConfigView) func(st *coordinator.State) {
	return func(st *coordinator.State) {
		if im := p.MetadataImage(); im != st.Image {
			st.SetImage(im)
		}
		groupConfigs.Refresh(st)
	}
}
