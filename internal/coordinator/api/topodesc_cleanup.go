package api

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/muster-io/muster/internal/coordinator"
)

// deleteBeforeDeleteGroups runs before DeleteGroups (KIP-1331): for each requested streams group
// that DeleteGroups will delete (Empty) and whose StoredTopologyEpoch ≠ -1, deleteTopology runs
// first, in parallel across groups. A failure is logged; the group is deleted anyway.
func (td *TopologyDescriptions) deleteBeforeDeleteGroups(ctx context.Context, s *Service, groups []string) {
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for _, id := range groups {
		if seen[id] || id == "" {
			continue
		}
		seen[id] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			if del, err := do(ctx, s, id, coordinator.Meta{}, coordinator.StoredTopologyDescriptionToDelete(id)); err != nil || !del {
				return
			}
			if err := td.deleteTopology(ctx, id); err != nil {
				td.Log.Warn("kip-1331: deleteTopology failed; deleting the group anyway", "group", id, "err", pluginErrorForLog(err))
			}
			td.forget(id)
		}()
	}
	wg.Wait()
}

// deleteTopology calls the plugin's deleteTopology and counts the outcome.
func (td *TopologyDescriptions) deleteTopology(ctx context.Context, group string) error {
	var err error
	select {
	case err = <-td.Plugin.DeleteTopology(ctx, group):
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		td.Counters.DeleteError.Add(1)
	} else {
		td.Counters.DeleteSuccess.Add(1)
	}
	return err
}

// tdCleanup is the periodic cleanup's timer state.
type tdCleanup struct {
	mu      sync.Mutex
	stop    func() bool
	closed  bool
	running sync.WaitGroup
	cancel  context.CancelFunc
	ctx     context.Context
}

// StartCleanup starts the periodic topology-description cleanup (KIP-1331): every
// interval (offsets.retention.check.interval.ms) on the runtime's clock, one cycle runs
// CleanupOnce. Close stops it.
func (td *TopologyDescriptions) StartCleanup(s *Service, interval time.Duration) {
	if interval <= 0 {
		return
	}
	c := &td.cleanup
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.stop != nil {
		return
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	var arm func()
	arm = func() {
		c.stop = s.RT.Clock().AfterFunc(interval, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.closed {
				return
			}
			c.running.Add(1)
			go func() {
				defer c.running.Done()
				td.CleanupOnce(c.ctx, s)
				c.mu.Lock()
				defer c.mu.Unlock()
				if !c.closed {
					arm()
				}
			}()
		})
	}
	arm()
}

// Close stops the periodic cleanup and waits for a running cycle. It does not close the plugin.
func (td *TopologyDescriptions) Close() {
	c := &td.cleanup
	c.mu.Lock()
	c.closed = true
	if c.stop != nil {
		c.stop()
	}
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	c.running.Wait()
}

// CleanupOnce runs one cleanup cycle and returns the number of eligible groups: a read-only scan
// of every shard for streams groups that are Empty, have all offsets expired, and have
// StoredTopologyEpoch ≠ -1 (coordinator.TopologyDescriptionCleanupCandidates); for each,
// deleteTopology and, on success, StoredTopologyEpoch = -1 (if it is still the value seen).
// Failures leave the field set; the next cycle retries.
func (td *TopologyDescriptions) CleanupOnce(ctx context.Context, s *Service) int {
	td.Counters.CleanupCycles.Add(1)
	replies, _ := fanOut(ctx, s, coordinator.Meta{}, coordinator.TopologyDescriptionCleanupCandidates())
	type cand struct {
		id     string
		stored int32
	}
	var cands []cand
	for _, m := range replies {
		for id, e := range m {
			cands = append(cands, cand{id, e})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].id < cands[j].id })
	td.Counters.CleanupEligible.Add(int64(len(cands)))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, cd := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := td.deleteTopology(ctx, cd.id); err != nil {
				td.Log.Warn("kip-1331: cleanup deleteTopology failed; retrying next cycle", "group", cd.id, "err", pluginErrorForLog(err))
				return
			}
			td.forget(cd.id)
			if _, err := do(ctx, s, cd.id, coordinator.Meta{}, coordinator.ClearStoredTopologyEpoch(cd.id, cd.stored)); err != nil {
				td.Log.Warn("kip-1331: cleanup could not clear StoredTopologyEpoch; retrying next cycle", "group", cd.id, "err", err)
			}
		}()
	}
	wg.Wait()
	return len(cands)
}
