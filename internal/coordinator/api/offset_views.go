package api

import (
	"sync/atomic"

	"github.com/muster-io/muster/internal/coordinator"
)

// OffsetViews holds each shard's committed offsets as of its last durable batch, published by
// the engine (engine.Options.Snapshot): OffsetFetch reads them without queueing behind the
// shard's writes, as Kafka reads offsets at the last committed offset of its timeline data
// structures. A version is immutable (coordinator.OffsetsView); publishing it is one atomic
// store.
type OffsetViews struct {
	views []atomic.Pointer[coordinator.OffsetsView]
}

// NewOffsetViews makes room for shards shards; nothing is published yet.
func NewOffsetViews(shards int32) *OffsetViews {
	return &OffsetViews{views: make([]atomic.Pointer[coordinator.OffsetsView], shards)}
}

// Snapshot is the group coordinator's engine.Options.Snapshot: it freezes the shard's offsets
// (on the shard goroutine) and returns their publication.
func (o *OffsetViews) Snapshot(shard int32, st *coordinator.State) func() {
	v := st.Offsets.Freeze()
	return func() { o.views[shard].Store(&v) }
}

// view returns shard's published offsets; nil when none is published (or o is nil).
func (o *OffsetViews) view(shard int32) *coordinator.OffsetsView {
	if o == nil || shard < 0 || int(shard) >= len(o.views) {
		return nil
	}
	return o.views[shard].Load()
}
