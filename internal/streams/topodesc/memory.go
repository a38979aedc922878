package topodesc

import (
	"context"
	"slices"
	"sync"

	"github.com/muster-io/muster/internal/streams/topology"
)

// Memory is the "memory" plugin: a group's descriptions held in the broker
// heap (like Kafka's reference InMemoryTopologyDescriptionPlugin; not
// durable), at most two per group (see Plugin), each of at most maxBytes. Operations finish synchronously under a short
// lock; the result channel is already filled when a method returns.
type Memory struct {
	maxBytes int
	mu       sync.Mutex
	closed   bool
	groups   map[string][]memoryEntry // at most two, the latest set first
}

type memoryEntry struct {
	epoch int32
	desc  *topology.Description
}

// NewMemory returns a memory plugin accepting descriptions up to maxBytes of
// canonical JSON (<= 0 means no limit).
func NewMemory(maxBytes int) *Memory {
	return &Memory{maxBytes: maxBytes, groups: map[string][]memoryEntry{}}
}

// Name returns "memory".
func (m *Memory) Name() string { return "memory" }

// SetTopology stores a copy of d for groupID at topologyEpoch.
func (m *Memory) SetTopology(ctx context.Context, groupID string, topologyEpoch int32, d *topology.Description) <-chan error {
	if err := ctx.Err(); err != nil {
		return errDone(err)
	}
	if _, err := checkSet(groupID, topologyEpoch, d, m.maxBytes); err != nil {
		return errDone(err)
	}
	c := d.Clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errDone(ErrClosed)
	}
	es := append([]memoryEntry{{epoch: topologyEpoch, desc: c}}, m.groups[groupID]...)
	var stored []int32
	for _, e := range es {
		stored = append(stored, e.epoch)
	}
	drop := keepEpochs(stored[1:], topologyEpoch)
	kept := es[:1]
	for _, e := range es[1:] {
		if e.epoch != topologyEpoch && !slices.Contains(drop, e.epoch) {
			kept = append(kept, e)
		}
	}
	m.groups[groupID] = kept
	return errDone(nil)
}

// GetTopology returns a copy of the stored description if it was set at
// topologyEpoch, else (nil, nil).
func (m *Memory) GetTopology(ctx context.Context, groupID string, topologyEpoch int32) <-chan GetResult {
	if err := ctx.Err(); err != nil {
		return getDone(nil, err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return getDone(nil, ErrClosed)
	}
	var found *topology.Description
	for _, e := range m.groups[groupID] {
		if e.epoch == topologyEpoch {
			found = e.desc
		}
	}
	m.mu.Unlock()
	if found == nil {
		return getDone(nil, nil)
	}
	return getDone(found.Clone(), nil)
}

// DeleteTopology forgets groupID's description, if any.
func (m *Memory) DeleteTopology(ctx context.Context, groupID string) <-chan error {
	if err := ctx.Err(); err != nil {
		return errDone(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errDone(ErrClosed)
	}
	delete(m.groups, groupID)
	return errDone(nil)
}

// StoredEpochs lists groupID's stored epochs, ascending.
func (m *Memory) StoredEpochs(ctx context.Context, groupID string) <-chan EpochsResult {
	if err := ctx.Err(); err != nil {
		return epochsDone(nil, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return epochsDone(nil, ErrClosed)
	}
	out := []int32{}
	for _, e := range m.groups[groupID] {
		out = append(out, e.epoch)
	}
	slices.Sort(out)
	return epochsDone(out, nil)
}

// DeleteTopologyEpoch forgets one epoch of groupID's descriptions.
func (m *Memory) DeleteTopologyEpoch(ctx context.Context, groupID string, topologyEpoch int32) <-chan error {
	if err := ctx.Err(); err != nil {
		return errDone(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errDone(ErrClosed)
	}
	es := slices.DeleteFunc(m.groups[groupID], func(e memoryEntry) bool { return e.epoch == topologyEpoch })
	if len(es) == 0 {
		delete(m.groups, groupID)
	} else {
		m.groups[groupID] = es
	}
	return errDone(nil)
}

// Len returns the number of groups with a stored description.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.groups)
}

// Close drops all descriptions; later calls deliver ErrClosed.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.groups = nil
	return nil
}
