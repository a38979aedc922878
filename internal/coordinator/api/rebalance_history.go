package api

import (
	"context"

	"github.com/muster-io/muster/internal/coordinator"
)

// RebalanceHistory reads a group's rebalance history on its shard (muster's own, no Kafka API:
// the HTTP API, the CLI's --history and the console read it), oldest first.
func (s *Service) RebalanceHistory(ctx context.Context, group string) ([]coordinator.RebalanceEvent, error) {
	return do(ctx, s, group, coordinator.Meta{}, coordinator.RebalanceHistory(group))
}
