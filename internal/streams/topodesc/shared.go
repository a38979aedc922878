package topodesc

import (
	"context"
	"fmt"

	"github.com/muster-io/muster/internal/streams/topology"
)

// Table is the shared store behind the "postgres" plugin: one row per group holding its latest
// topology epoch and canonical JSON description. Cluster mode's PostgreSQL store implements it
// (internal/store/postgres), so every node reads what any node stored.
type Table interface {
	// PutTopology stores description for group at epoch, replacing the group's row.
	PutTopology(ctx context.Context, group string, epoch int32, description []byte) error
	// GetTopology returns the group's row; found is false when there is none.
	GetTopology(ctx context.Context, group string) (epoch int32, description []byte, found bool, err error)
	// DeleteTopology removes the group's row (no error when there is none).
	DeleteTopology(ctx context.Context, group string) error
}

// Shared is the "postgres" plugin of cluster mode: the disk plugin's contract over a Table that
// every node shares, so a streams group's description survives its coordinator moving to
// another node. Calls run on a fixed pool of workers.
type Shared struct {
	t        Table
	maxBytes int
	pool     *pool
}

// NewShared returns the plugin over t (maxBytes <= 0: no limit).
func NewShared(t Table, maxBytes, workers, queue int) *Shared {
	return &Shared{t: t, maxBytes: maxBytes, pool: newPool(workers, queue)}
}

// Name returns "postgres".
func (s *Shared) Name() string { return "postgres" }

// SetTopology stores d for groupID at topologyEpoch (last writer wins).
func (s *Shared) SetTopology(ctx context.Context, groupID string, topologyEpoch int32, d *topology.Description) <-chan error {
	data, err := checkSet(groupID, topologyEpoch, d, s.maxBytes)
	if err != nil {
		return errDone(err)
	}
	return s.pool.runErr(func(ctx context.Context) error {
		return s.t.PutTopology(ctx, groupID, topologyEpoch, data)
	}, ctx)
}

// GetTopology returns the stored description when its epoch is topologyEpoch, else (nil, nil).
func (s *Shared) GetTopology(ctx context.Context, groupID string, topologyEpoch int32) <-chan GetResult {
	return s.pool.runGet(func(ctx context.Context) GetResult {
		epoch, raw, found, err := s.t.GetTopology(ctx, groupID)
		if err != nil {
			return GetResult{Err: err}
		}
		if !found || epoch != topologyEpoch {
			return GetResult{}
		}
		d, err := topology.Unmarshal(raw)
		if err != nil {
			return GetResult{Err: fmt.Errorf("topodesc: corrupt stored description of %q: %w", groupID, err)}
		}
		return GetResult{Description: d}
	}, ctx)
}

// DeleteTopology removes the group's description.
func (s *Shared) DeleteTopology(ctx context.Context, groupID string) <-chan error {
	return s.pool.runErr(func(ctx context.Context) error { return s.t.DeleteTopology(ctx, groupID) }, ctx)
}

// Close stops the workers.
func (s *Shared) Close() error {
	s.pool.close()
	return nil
}
