package topodesc

import (
	"context"
	"sync"

	"github.com/muster-io/muster/internal/streams/topology"
)

// Memory is the "memory" plugin: one description per group held in the
// broker heap (like Kafka's reference InMemoryTopologyDescriptionPlugin; not
// durable). A set replaces the group's description whatever its epoch (last
// writer wins; see Plugin), so memory is bounded by one description of at
// most maxBytes per group. Operations finish synchronously under a short
// lock; the result channel is already filled when a method returns.
type Memory struct {
	maxBytes int
	mu       sync.Mutex
	closed   bool
	groups   map[string]memoryEntry
}

type memoryEntry struct {
	epoch int32
	desc  *topology.Description
}

// NewMemory returns a memory plugin accepting descriptions up to maxBytes of
// canonical JSON (<= 0 means no limit).
func NewMemory(maxBytes int) *Memory {
	return &Memory{maxBytes: maxBytes, groups: map[string]memoryEntry{}}
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
	m.groups[groupID] = memoryEntry{epoch: topologyEpoch, desc: c}
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
	e, ok := m.groups[groupID]
	m.mu.Unlock()
	if !ok || e.epoch != topologyEpoch {
		return getDone(nil, nil)
	}
	return getDone(e.desc.Clone(), nil)
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
