package broker

import (
	"github.com/muster-io/muster/internal/data"
)

// topicSource adapts the data plane to the coordinator's TopicSource.
type topicSource struct{ p *data.Plane }

func (t topicSource) TopicID(name string) ([16]byte, int32, bool) {
	ti, ok := t.p.Topic(name)
	return ti.ID, ti.Partitions, ok
}

func (t topicSource) TopicName(id [16]byte) (string, bool) {
	ti, ok := t.p.TopicByID(id)
	return ti.Name, ok
}

func (t topicSource) TopicNames() []string {
	ts := t.p.Topics()
	out := make([]string, len(ts))
	for i, ti := range ts {
		out[i] = ti.Name
	}
	return out
}

func (t topicSource) Rack() string { return t.p.Rack() }

func (t topicSource) CreateTopic(name string, partitions int32, configs map[string]string) error {
	_, err := t.p.CreateTopic(name, partitions, configs)
	return err
}
