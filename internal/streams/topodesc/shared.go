package topodesc

import (
	"context"
	"fmt"

	"github.com/muster-io/muster/internal/streams/topology"
)

// Table is the shared store behind the "postgres" plugin: one row per group and topology epoch
// holding the canonical JSON description. Cluster mode's PostgreSQL store implements it
// (internal/store/postgres), so every node reads what any node stored.
type Table interface {
	// PutTopology stores description for group at epoch and deletes the group's rows of the
	// epochs in drop, atomically.
	PutTopology(ctx context.Context, group string, epoch int32, description []byte, drop []int32) error
	// GetTopology returns the row of (group, epoch); found is false when there is none.
	GetTopology(ctx context.Context, group string, epoch int32) (description []byte, found bool, err error)
	// TopologyEpochs lists the group's stored epochs, ascending.
	TopologyEpochs(ctx context.Context, group string) ([]int32, error)
	// DeleteTopology removes the group's rows: all of them (epoch < 0) or one epoch (no error
	// when there is none).
	DeleteTopology(ctx context.Context, group string, epoch int32) error
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
		stored, err := s.t.TopologyEpochs(ctx, groupID)
		if err != nil {
			return err
		}
		return s.t.PutTopology(ctx, groupID, topologyEpoch, data, keepEpochs(stored, topologyEpoch))
	}, ctx)
}

// GetTopology returns the stored description when its epoch is topologyEpoch, else (nil, nil).
func (s *Shared) GetTopology(ctx context.Context, groupID string, topologyEpoch int32) <-chan GetResult {
	return s.pool.runGet(func(ctx context.Context) GetResult {
		raw, found, err := s.t.GetTopology(ctx, groupID, topologyEpoch)
		if err != nil {
			return GetResult{Err: err}
		}
		if !found {
			return GetResult{}
		}
		d, err := topology.Unmarshal(raw)
		if err != nil {
			return GetResult{Err: fmt.Errorf("topodesc: corrupt stored description of %q: %w", groupID, err)}
		}
		return GetResult{Description: d}
	}, ctx)
}

// DeleteTopology removes the group's descriptions.
func (s *Shared) DeleteTopology(ctx context.Context, groupID string) <-chan error {
	return s.pool.runErr(func(ctx context.Context) error { return s.t.DeleteTopology(ctx, groupID, -1) }, ctx)
}

// StoredEpochs lists groupID's stored epochs, ascending.
func (s *Shared) StoredEpochs(ctx context.Context, groupID string) <-chan EpochsResult {
	return s.pool.runEpochs(func(ctx context.Context) EpochsResult {
		es, err := s.t.TopologyEpochs(ctx, groupID)
		return EpochsResult{Epochs: es, Err: err}
	}, ctx)
}

// DeleteTopologyEpoch forgets one epoch of groupID's descriptions.
func (s *Shared) DeleteTopologyEpoch(ctx context.Context, groupID string, topologyEpoch int32) <-chan error {
	return s.pool.runErr(func(ctx context.Context) error { return s.t.DeleteTopology(ctx, groupID, topologyEpoch) }, ctx)
}

// Close stops the workers.
func (s *Shared) Close() error {
	s.pool.close()
	return nil
}
