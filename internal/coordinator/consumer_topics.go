package coordinator

import (
	"context"
	"sync"
)

// MarkTopicsChanged flags every consumer group of the shard that subscribes to one of the
// changed topics (created, deleted or resized), or that subscribes with a regex, for a metadata
// refresh: its next heartbeat re-resolves its regexes and recomputes the KIP-1101 metadata hash,
// bumping the group epoch only if the hash changed (Kafka's onNewMetadataImage).
func MarkTopicsChanged(st *State, names []string) {
	for _, g := range st.consumerGroups() {
		if g.refresh {
			continue
		}
		if len(g.regexes) > 0 || len(g.regexRefs) > 0 {
			g.refresh = true
			continue
		}
		for _, n := range names {
			if g.nameRefs[n] > 0 {
				g.refresh = true
				break
			}
		}
	}
}

// OnTopicsChanged tells every shard that the named topics were created, deleted or changed
// their partitions (see MarkTopicsChanged). It waits until every active shard has applied it;
// a shard that is loading or failed needs nothing (a freshly loaded group always refreshes).
func (rt *Runtime) OnTopicsChanged(ctx context.Context, names []string) {
	names = append([]string(nil), names...)
	var wg sync.WaitGroup
	for i := int32(0); i < rt.Shards(); i++ {
		wg.Add(1)
		go func(shard int32) {
			defer wg.Done()
			_, _ = rt.DoShard(ctx, shard, Meta{}, func(st *State, c *Call) {
				MarkTopicsChanged(st, names)
				st.Reply(c, nil)
			})
		}(i)
	}
	wg.Wait()
}

// OnTopicsChanged is Runtime.OnTopicsChanged for the data plane.
func (s *Service) OnTopicsChanged(ctx context.Context, names []string) {
	s.RT.OnTopicsChanged(ctx, names)
}
