package broker

import (
	"github.com/muster-io/muster/internal/coordinator"
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

// refreshImage hands a shard the data plane's newest metadata image before each operation
// (the engine's Refresh): the same pointer until topics change, so most calls compare one
// pointer.
func refreshImage(p *data.Plane) func(st *coordinator.State) {
	return func(st *coordinator.State) {
		if im := p.MetadataImage(); im != st.Image {
			st.SetImage(im)
		}
	}
}
