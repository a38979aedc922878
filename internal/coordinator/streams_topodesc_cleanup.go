package coordinator

import (
	"context"
	"sort"
	"sync"
	"time"
)

func init() {
	DeleteGroupsHook = deleteTopologyDescriptionsBeforeDeleteGroups
}

// KeepOnExpiry implements ExpiryVeto (seed 000 broker side 5): with a plugin configured, an Empty
// streams group whose offsets all expired is kept while StoredTopologyEpoch ≠ -1, until the
// periodic cleanup deleted its description and cleared the field. Without a plugin, expiry
// ignores StoredTopologyEpoch.
func (g *StreamsGroup) KeepOnExpiry(st *State) bool {
	return g.storedTopologyEpoch != -1 && topologyDescriptionPluginConfigured(st)
}

// deleteTopologyDescriptionsBeforeDeleteGroups is DeleteGroupsHook (seed 000 broker side 3): for
// each requested streams group that DeleteGroups will delete (Empty) and whose
// StoredTopologyEpoch ≠ -1, deleteTopology runs first, in parallel across groups. A failure is
// logged; the group is deleted anyway.
func deleteTopologyDescriptionsBeforeDeleteGroups(s *Service, ctx context.Context, groups []string) {
	td := s.TopologyDescriptions()
	if td == nil {
		return
	}
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for _, id := range groups {
		if seen[id] || id == "" {
			continue
		}
		seen[id] = true
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			out, err := s.do(ctx, id, Meta{}, func(st *State, c *Call) {
				g, ok := st.Groups[id].(*StreamsGroup)
				st.Reply(c, ok && g.storedTopologyEpoch != -1 && g.ValidateDeleteGroup() == nil)
			})
			if err != nil || out != true {
				return
			}
			if err := td.deleteTopology(ctx, id); err != nil {
				td.Log.Warn("kip-1331: deleteTopology failed; deleting the group anyway", "group", id, "err", err)
			}
			td.forget(id)
		}(id)
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

// StartCleanup starts the periodic topology-description cleanup (seed 000 broker side 5): every
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
// StoredTopologyEpoch ≠ -1; for each, deleteTopology and, on success, StoredTopologyEpoch = -1
// (if it is still the value seen). Failures leave the field set; the next cycle retries.
func (td *TopologyDescriptions) CleanupOnce(ctx context.Context, s *Service) int {
	td.Counters.CleanupCycles.Add(1)
	replies, _ := s.fanOut(ctx, Meta{}, func(st *State, c *Call) {
		eligible := map[string]int32{}
		for id, raw := range st.Groups {
			if g, ok := raw.(*StreamsGroup); ok && g.storedTopologyEpoch != -1 && g.IsEmpty() && allOffsetsExpired(st, g) {
				eligible[id] = g.storedTopologyEpoch
			}
		}
		st.Reply(c, eligible)
	})
	type cand struct {
		id     string
		stored int32
	}
	var cands []cand
	for _, r := range replies {
		if m, ok := r.(map[string]int32); ok {
			for id, e := range m {
				cands = append(cands, cand{id, e})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].id < cands[j].id })
	td.Counters.CleanupEligible.Add(int64(len(cands)))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, cd := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func(cd cand) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := td.deleteTopology(ctx, cd.id); err != nil {
				td.Log.Warn("kip-1331: cleanup deleteTopology failed; retrying next cycle", "group", cd.id, "err", err)
				return
			}
			td.forget(cd.id)
			_, err := s.do(ctx, cd.id, Meta{}, func(st *State, c *Call) {
				if g, ok := st.Groups[cd.id].(*StreamsGroup); ok && g.storedTopologyEpoch == cd.stored {
					g.WriteTopologyDescriptionEpochs(st, -1, g.lastFailedTopologyEpoch)
				}
				st.Reply(c, nil)
			})
			if err != nil {
				td.Log.Warn("kip-1331: cleanup could not clear StoredTopologyEpoch; retrying next cycle", "group", cd.id, "err", err)
			}
		}(cd)
	}
	wg.Wait()
	return len(cands)
}

// allOffsetsExpired reports whether every committed offset of g would expire in a retention
// sweep now (vacuously true without offsets): the predicate under which ExpireOffsets deletes an
// Empty group.
func allOffsetsExpired(st *State, g Group) bool {
	for _, topic := range st.Offsets.Topics(g.ID()) {
		if g.IsSubscribedToTopic(topic) {
			return false
		}
		for _, p := range st.Offsets.Partitions(g.ID(), topic) {
			v, _ := st.Offsets.Get(g.ID(), topic, p)
			if !offsetExpired(st, g, v) {
				return false
			}
		}
	}
	return true
}
