package api

import (
	"context"
	"time"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/streams/topology"
)

// Multi-epoch topology descriptions (muster's extension of KIP-1331; the wire format is
// unchanged): while a rolling topology upgrade is in progress the plugin keeps the previous
// epoch's description next to the current one (at most these two per group, see
// topodesc.Plugin), and the broker deletes the previous one once every member runs the current
// topology epoch (or the group is deleted). What the broker knows of a group's previous epoch is
// soft: learnt from the plugin after a push, or on the group's first heartbeat after a restart.

// tdEpochs is the per-group soft state of the previous epochs.
type tdEpochs struct {
	// prev is the previous epoch the plugin holds (-1: none); known reports whether prev was
	// learnt from the plugin; busy marks a listing or deletion in flight.
	prev  int32
	known bool
	busy  bool
}

// tdEpochTimeout bounds one plugin call of the previous-epoch bookkeeping.
const tdEpochTimeout = 30 * time.Second

// afterStored learns, after a successful push of epoch, which other epoch the plugin keeps.
// Topology epochs only grow (KIP-1071 fences a member with an older one), so after epoch 0 there
// is nothing to learn.
func (td *TopologyDescriptions) afterStored(group string, epoch int32) {
	if epoch == 0 {
		td.mu.Lock()
		if td.epochs == nil {
			td.epochs = map[string]*tdEpochs{}
		}
		if e := td.epochs[group]; e == nil || !e.busy {
			td.epochs[group] = &tdEpochs{prev: -1, known: true}
		}
		td.mu.Unlock()
		return
	}
	td.relearn(group, epoch)
}

// relearn lists the group's stored epochs in the background and records the highest one other
// than current as the previous epoch.
func (td *TopologyDescriptions) relearn(group string, current int32) {
	td.mu.Lock()
	if td.epochs == nil {
		td.epochs = map[string]*tdEpochs{}
	}
	e := td.epochs[group]
	if e == nil {
		e = &tdEpochs{prev: -1}
		td.epochs[group] = e
	}
	if e.busy {
		td.mu.Unlock()
		return
	}
	e.busy = true
	td.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), tdEpochTimeout)
		defer cancel()
		r := <-td.Plugin.StoredEpochs(ctx, group)
		td.mu.Lock()
		defer td.mu.Unlock()
		e.busy = false
		if r.Err != nil {
			td.Log.Warn("kip-1331: listing the stored topology epochs failed", "group", group, "err", pluginErrorForLog(r.Err))
			return
		}
		e.prev, e.known = -1, true
		for _, ep := range r.Epochs {
			if ep != current && ep > e.prev {
				e.prev = ep
			}
		}
	}()
}

// maybeRetirePrevious runs after every successful heartbeat: once the current epoch's
// description is stored and every member runs the current topology epoch, the previous epoch's
// description is deleted from the plugin (in the background).
func (td *TopologyDescriptions) maybeRetirePrevious(group string, s coordinator.TopologyDescriptionState) {
	if !s.Valid || s.Current <= 0 || s.Stored != s.Current {
		return // at topology epoch 0 no earlier epoch exists
	}
	td.mu.Lock()
	e := td.epochs[group]
	if e == nil || !e.known {
		td.mu.Unlock()
		td.relearn(group, s.Current) // first sight since a restart
		return
	}
	if e.busy || e.prev < 0 || s.OldestMember < s.Current {
		td.mu.Unlock()
		return
	}
	prev := e.prev
	e.busy = true
	td.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), tdEpochTimeout)
		defer cancel()
		err := <-td.Plugin.DeleteTopologyEpoch(ctx, group, prev)
		td.mu.Lock()
		defer td.mu.Unlock()
		e.busy = false
		if err != nil {
			td.Counters.DeleteError.Add(1)
			td.Log.Warn("kip-1331: deleting the previous topology epoch's description failed", "group", group,
				"topology_epoch", prev, "err", pluginErrorForLog(err))
			return
		}
		td.Counters.DeleteSuccess.Add(1)
		td.Log.Info("kip-1331: every member runs the new topology epoch; the previous epoch's description is deleted",
			"group", group, "previous_epoch", prev, "current_epoch", s.Current)
		if e.prev == prev {
			e.prev = -1
		}
	}()
}

// EpochDescription is one stored epoch's topology description.
type EpochDescription struct {
	Epoch       int32
	Description *topology.Description
}

// AllEpochs reads every description the plugin holds for a group (at most two), newest epoch
// first. A missing one (data loss) is left out.
func (td *TopologyDescriptions) AllEpochs(ctx context.Context, group string) ([]EpochDescription, error) {
	r := <-td.Plugin.StoredEpochs(ctx, group)
	if r.Err != nil {
		td.Counters.GetError.Add(1)
		return nil, r.Err
	}
	var out []EpochDescription
	for i := len(r.Epochs) - 1; i >= 0; i-- {
		g := <-td.Plugin.GetTopology(ctx, group, r.Epochs[i])
		if g.Err != nil {
			td.Counters.GetError.Add(1)
			return nil, g.Err
		}
		td.Counters.GetSuccess.Add(1)
		if g.Description != nil {
			out = append(out, EpochDescription{Epoch: r.Epochs[i], Description: g.Description})
		}
	}
	return out, nil
}
