package api

import (
	"context"
	"sync"

	"github.com/muster-io/muster/internal/coordinator"
)

// perShard answers a request about several groups: the ids of each shard go to it in one
// operation (op answers one result per id, in order), shards run in parallel, and the results
// come back in the order of ids. A failed shard answers each of its ids with failed(id, err).
func perShard[R any](ctx context.Context, s *Service, meta coordinator.Meta, ids []string,
	op func(ids []string) func(*coordinator.State, *coordinator.Call[[]R]), failed func(id string, err error) R) []R {
	out := make([]R, len(ids))
	order, byShard := s.byShard(ids)
	idx := map[int32][]int{}
	for i, id := range ids {
		sh := coordinator.ShardFor(id, s.RT.Shards())
		idx[sh] = append(idx[sh], i)
	}
	run := func(sh int32) {
		res, err := doShard(ctx, s, sh, meta, op(byShard[sh]))
		for k, i := range idx[sh] {
			if err != nil || k >= len(res) {
				out[i] = failed(ids[i], err)
				continue
			}
			out[i] = res[k]
		}
	}
	if len(order) == 1 {
		run(order[0])
		return out
	}
	var wg sync.WaitGroup
	for _, sh := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(sh)
		}()
	}
	wg.Wait()
	return out
}
