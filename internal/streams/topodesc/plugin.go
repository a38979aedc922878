// Package topodesc stores streams-group topology descriptions for KIP-1331:
// the broker-side plugin SPI (setTopology / getTopology / deleteTopology)
// and three built-in plugins (memory, disk, http).
package topodesc

import (
	"context"
	"errors"
	"fmt"

	"github.com/muster-io/muster/internal/streams/topology"
)

// Plugin stores streams-group topology descriptions (KIP-1331
// setTopology/getTopology/deleteTopology).
//
// Methods are asynchronous: they return at once and deliver exactly one
// result on the returned channel (buffered 1), never blocking the caller
// (the coordinator shard loop). Implementations must be safe for concurrent
// use.
//
// Contract (KIP-1331 "Plugin Implementation Guidelines"):
//   - SetTopology is idempotent on (groupID, topologyEpoch); a permanent
//     rejection wraps ErrTooLarge or ErrInvalid (see IsPermanent); any other
//     error is transient.
//   - GetTopology delivers (nil, nil) when nothing is stored for that epoch
//     (not stored, or data loss); the broker then clears its stored epoch.
//   - DeleteTopology is idempotent on groupID, including when nothing is
//     stored, and deletes every epoch of the group.
//   - Each group keeps at most two descriptions (muster's multi-epoch
//     extension of KIP-1331): the one most recently set and, while a rolling
//     topology upgrade is in progress, one of another epoch — after
//     SetTopology(e), the highest other epoch stored (the previous epoch when
//     epochs only grow). Every other epoch is dropped, so state stays bounded
//     by two topologies per group. The broker deletes the previous epoch
//     (DeleteTopologyEpoch) once every member runs the new one.
type Plugin interface {
	Name() string
	SetTopology(ctx context.Context, groupID string, topologyEpoch int32, d *topology.Description) <-chan error
	// GetTopology delivers (nil, nil) when nothing is stored for that epoch (data loss / not stored).
	GetTopology(ctx context.Context, groupID string, topologyEpoch int32) <-chan GetResult
	DeleteTopology(ctx context.Context, groupID string) <-chan error
	// StoredEpochs delivers the epochs stored for a group, ascending (none: empty).
	StoredEpochs(ctx context.Context, groupID string) <-chan EpochsResult
	// DeleteTopologyEpoch deletes one epoch's description of a group; idempotent.
	DeleteTopologyEpoch(ctx context.Context, groupID string, topologyEpoch int32) <-chan error
	Close() error
}

// EpochsResult is the outcome of StoredEpochs.
type EpochsResult struct {
	Epochs []int32
	Err    error
}

func epochsDone(e []int32, err error) <-chan EpochsResult {
	ch := make(chan EpochsResult, 1)
	ch <- EpochsResult{Epochs: e, Err: err}
	return ch
}

// keepEpochs is the bound of two: given the epochs stored after setting set,
// it returns the epochs to drop (all but set and the highest other).
func keepEpochs(stored []int32, set int32) (drop []int32) {
	prev := int32(-1)
	for _, e := range stored {
		if e != set && e > prev {
			prev = e
		}
	}
	for _, e := range stored {
		if e != set && e != prev {
			drop = append(drop, e)
		}
	}
	return drop
}

// GetResult is the outcome of GetTopology: a description, (nil, nil) for
// "not stored", or an error.
type GetResult struct {
	Description *topology.Description
	Err         error
}

// ErrTooLarge is a permanent setTopology failure: the description exceeds
// what the plugin stores (KIP-1331 TopologyDescriptionTooLargeException,
// TOPOLOGY_DESCRIPTION_TOO_LARGE).
var ErrTooLarge = errors.New("topology description too large")

// ErrInvalid is a permanent setTopology failure: the description is
// malformed (KIP-1331 InvalidRequestException, INVALID_REQUEST). It is
// topology.ErrInvalid, so validation errors are permanent as they are.
var ErrInvalid = topology.ErrInvalid

// ErrClosed is delivered by every call made after Close (transient).
var ErrClosed = errors.New("topology description plugin closed")

// ErrBusy is delivered when a plugin's bounded work queue is full
// (transient: the broker backs off and re-solicits).
var ErrBusy = errors.New("topology description plugin busy")

// IsPermanent reports whether err is a permanent setTopology failure, i.e.
// wraps ErrTooLarge or ErrInvalid. The broker records such an epoch as failed
// and stops soliciting it; every other error is transient.
func IsPermanent(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrInvalid)
}

func errDone(err error) <-chan error {
	ch := make(chan error, 1)
	ch <- err
	return ch
}

func getDone(d *topology.Description, err error) <-chan GetResult {
	ch := make(chan GetResult, 1)
	ch <- GetResult{Description: d, Err: err}
	return ch
}

// checkSet runs the checks common to every plugin's SetTopology: a non-empty
// group id, a non-negative epoch, a valid description, and (when maxBytes >
// 0) the canonical JSON size limit. It returns the encoding.
func checkSet(groupID string, epoch int32, d *topology.Description, maxBytes int) ([]byte, error) {
	if groupID == "" {
		return nil, fmt.Errorf("%w: empty group id", ErrInvalid)
	}
	if epoch < 0 {
		return nil, fmt.Errorf("%w: negative topology epoch %d", ErrInvalid, epoch)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	data, err := d.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if maxBytes > 0 && len(data) > maxBytes {
		return nil, fmt.Errorf("%w: %d bytes exceeds the limit of %d bytes", ErrTooLarge, len(data), maxBytes)
	}
	return data, nil
}
