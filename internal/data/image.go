package data

import (
	"sync/atomic"

	"github.com/muster-io/muster/internal/metadata"
)

// imageCache holds the newest metadata.Image of the topic registry (Kafka's MetadataImage as
// the group coordinator reads it). Every committed topic change bumps version (in publish, after
// the registry maps changed); MetadataImage rebuilds the image lazily, at most once per version
// that a reader asks for, so creating many topics in a row costs nothing until the coordinator
// looks.
type imageCache struct {
	version atomic.Uint64
	cur     atomic.Pointer[versionedImage]
}

type versionedImage struct {
	version uint64
	image   *metadata.Image
}

// MetadataImage returns an immutable snapshot of every topic (name, id, partition count) and
// this broker's rack.
func (p *Plane) MetadataImage() *metadata.Image {
	v := p.images.version.Load()
	if c := p.images.cur.Load(); c != nil && c.version == v {
		return c.image
	}
	p.mu.RLock()
	v = p.images.version.Load() // changes bump it after the maps changed, under adminMu
	topics := make([]metadata.Topic, 0, len(p.byName))
	for _, t := range p.byName {
		topics = append(topics, metadata.Topic{Name: t.name, ID: t.id, Partitions: int32(len(t.parts))})
	}
	p.mu.RUnlock()
	im := metadata.NewImage(p.cfg.Rack, topics)
	p.images.cur.Store(&versionedImage{version: v, image: im})
	return im
}
