package metadata

import (
	"sort"
)

// Set is a mutable set of topics that builds Images of its content; test kits use it to stand
// for the data plane.
type Set struct {
	byName map[string]Topic
	rack   string
	next   byte
	image  *Image
}

// NewSet is an empty topic set.
func NewSet() *Set { return &Set{byName: map[string]Topic{}} }

// Add creates name with partitions (or resizes it, keeping its id) and returns its id. Ids are
// deterministic: 0xAB, 0, ..., n.
func (t *Set) Add(name string, partitions int32) [16]byte {
	tp, ok := t.byName[name]
	if !ok {
		t.next++
		tp = Topic{Name: name}
		tp.ID[0], tp.ID[15] = 0xAB, t.next
	}
	tp.Partitions = partitions
	t.byName[name] = tp
	t.image = nil
	return tp.ID
}

// AddID creates name with the given id and partitions, or resizes it (keeping its id).
func (t *Set) AddID(name string, id [16]byte, partitions int32) {
	tp, ok := t.byName[name]
	if !ok {
		tp = Topic{Name: name, ID: id}
	}
	tp.Partitions = partitions
	t.byName[name] = tp
	t.image = nil
}

// Delete removes a topic.
func (t *Set) Delete(name string) {
	delete(t.byName, name)
	t.image = nil
}

// SetRack sets the broker's rack.
func (t *Set) SetRack(rack string) {
	t.rack = rack
	t.image = nil
}

// ID returns a topic's id.
func (t *Set) ID(name string) [16]byte { return t.byName[name].ID }

// Image is the current snapshot (the same pointer until the set changes).
func (t *Set) Image() *Image {
	if t.image == nil {
		ts := make([]Topic, 0, len(t.byName))
		for _, tp := range t.byName {
			ts = append(ts, tp)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
		t.image = NewImage(t.rack, ts)
	}
	return t.image
}
