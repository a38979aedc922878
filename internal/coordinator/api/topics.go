package api

import (
	"context"

	"github.com/muster-io/muster/internal/coordinator"
)

// OnTopicsDeleted tombstones the committed offsets of deleted topics on every shard (Kafka's
// GroupCoordinatorService.onPartitionsDeleted) and waits until every active shard did it; a
// shard that is loading or failed is skipped. Other topic changes need nothing here: each shard
// sees them in the next metadata image the engine hands it.
func (s *Service) OnTopicsDeleted(ctx context.Context, topics []string) {
	if len(topics) == 0 {
		return
	}
	_, errs := fanOut(ctx, s, coordinator.Meta{}, coordinator.DeleteTopicOffsets(append([]string(nil), topics...)))
	for i, err := range errs {
		if err != nil && s.Log != nil {
			s.Log.Warn("deleting committed offsets of deleted topics", "shard", i, "err", err)
		}
	}
}

// Stats reads every shard's statistics; a shard that is loading or failed has ok=false.
func (s *Service) Stats(ctx context.Context) (stats []coordinator.ShardStats, ok []bool) {
	out, errs := fanOut(ctx, s, coordinator.Meta{}, coordinator.Stats())
	ok = make([]bool, len(out))
	for i, err := range errs {
		ok[i] = err == nil
	}
	return out, ok
}
