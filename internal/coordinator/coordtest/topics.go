package coordtest

import "github.com/muster-io/muster/internal/metadata"

// Topics stands for the data plane: a topic set whose image the Harness hands its shard before
// every step, and which the adapters' Topics interface can use too.
type Topics struct {
	*metadata.Set
}

// NewTopics is an empty topic set.
func NewTopics() *Topics { return &Topics{metadata.NewSet()} }

// CreateTopic implements the adapters' Topics (streams internal topics): an existing topic is
// kept as it is.
func (t *Topics) CreateTopic(name string, partitions int32, _ map[string]string) error {
	if _, ok := t.Image().Topic(name); !ok {
		t.Add(name, partitions)
	}
	return nil
}

// MetadataImage implements the adapters' Topics.
func (t *Topics) MetadataImage() *metadata.Image { return t.Image() }
