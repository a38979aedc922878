// Package metadata holds the immutable topic metadata snapshot the group coordinator reads
// (Kafka's MetadataImage / TopicsImage): the data plane publishes a new Image whenever topics
// are created, deleted or resized, and the coordinator engine hands the newest one to each shard
// before an operation runs, so an operation sees one consistent view.
package metadata

import "sort"

// Topic is one topic as the coordinator sees it.
type Topic struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// Image is an immutable set of topics plus this broker's rack (every partition's single
// replica is here). A nil *Image knows no topics; methods are safe on nil.
type Image struct {
	byName map[string]Topic
	byID   map[[16]byte]string
	names  []string
	rack   string
}

// NewImage builds an image from topics (copied; names need not be sorted).
func NewImage(rack string, topics []Topic) *Image {
	im := &Image{byName: make(map[string]Topic, len(topics)), byID: make(map[[16]byte]string, len(topics)),
		names: make([]string, 0, len(topics)), rack: rack}
	for _, t := range topics {
		im.byName[t.Name] = t
		im.byID[t.ID] = t.Name
		im.names = append(im.names, t.Name)
	}
	sort.Strings(im.names)
	return im
}

// Topic returns a topic by name.
func (im *Image) Topic(name string) (Topic, bool) {
	if im == nil {
		return Topic{}, false
	}
	t, ok := im.byName[name]
	return t, ok
}

// TopicID returns a topic's id and partition count (ok=false: no such topic).
func (im *Image) TopicID(name string) (id [16]byte, partitions int32, ok bool) {
	t, ok := im.Topic(name)
	return t.ID, t.Partitions, ok
}

// TopicName resolves a topic id.
func (im *Image) TopicName(id [16]byte) (string, bool) {
	if im == nil {
		return "", false
	}
	n, ok := im.byID[id]
	return n, ok
}

// TopicNames lists every topic, sorted. The slice is shared: do not modify it.
func (im *Image) TopicNames() []string {
	if im == nil {
		return nil
	}
	return im.names
}

// Rack is this broker's rack ("" = none).
func (im *Image) Rack() string {
	if im == nil {
		return ""
	}
	return im.rack
}

// Len is the number of topics.
func (im *Image) Len() int {
	if im == nil {
		return 0
	}
	return len(im.names)
}
