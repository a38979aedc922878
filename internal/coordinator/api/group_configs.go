package api

import (
	"sync"
	"sync/atomic"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

// GroupConfigSource is the durable store of group configs (the GROUP resources of
// IncrementalAlterConfigs and AlterConfigs) as the adapters read it: the groups that have
// overrides, each group's overrides, and a subscription to changes.
type GroupConfigSource interface {
	config.GroupConfigs
	Groups() []string
}

// GroupConfigView turns the durable group configs into the immutable snapshots the shards read
// (coordinator.GroupConfigs), the way the metadata image reaches them: every change builds a new
// versioned snapshot, and Refresh, run by the engine on each shard before every operation and
// timer, hands a shard the newest one when it differs from the shard's. The shards never call
// the store, never wait for it, and see every change from their next operation on (a group's
// next heartbeat). A snapshot holds only the groups with overrides and is rebuilt per change
// (O(groups with overrides), changes are rare admin operations).
type GroupConfigView struct {
	values *config.Values // the broker's bounds of each group config
	src    GroupConfigSource

	mu      sync.Mutex // serializes rebuilds
	groups  map[string]coordinator.GroupOverrides
	version int64
	cur     atomic.Pointer[coordinator.GroupConfigs]
}

// NewGroupConfigView builds the view of src, bounded by the broker's values, and follows its
// changes.
func NewGroupConfigView(values *config.Values, src GroupConfigSource) *GroupConfigView {
	w := &GroupConfigView{values: values, src: src, groups: map[string]coordinator.GroupOverrides{}}
	// Subscribe first: a change racing with the initial load is applied again by its event,
	// and load reads the store's current value either way.
	src.Subscribe(func(ev config.GroupConfigChange) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.load(ev.Group)
		w.publish()
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, g := range src.Groups() {
		w.load(g)
	}
	w.publish()
	return w
}

// load reads group's overrides from the store into w.groups. w.mu held.
func (w *GroupConfigView) load(group string) {
	cfg, ok := w.src.Get(group)
	if !ok || cfg.Empty() {
		delete(w.groups, group)
		return
	}
	w.groups[group] = coordinator.GroupOverridesFrom(groupValues{cfg: cfg, values: w.values})
}

// publish installs a new snapshot of w.groups. w.mu held.
func (w *GroupConfigView) publish() {
	snap := make(map[string]coordinator.GroupOverrides, len(w.groups))
	for g, o := range w.groups {
		snap[g] = o
	}
	w.version++
	w.cur.Store(coordinator.NewGroupConfigs(w.version, snap))
}

// Snapshot returns the newest snapshot.
func (w *GroupConfigView) Snapshot() *coordinator.GroupConfigs { return w.cur.Load() }

// Refresh hands st the newest snapshot when it has another one (the engine's Refresh hook; it
// runs on the shard's goroutine).
func (w *GroupConfigView) Refresh(st *coordinator.State) {
	if s := w.cur.Load(); s != st.GroupConfigs {
		st.SetGroupConfigs(s)
	}
}

// groupValues reads one group's overrides with the broker's current bounds applied (Kafka's
// GroupConfig.evaluate caps an override set before the bounds changed).
type groupValues struct {
	cfg    config.GroupConfig
	values *config.Values
}

// GroupInt implements coordinator.GroupConfigValues.
func (v groupValues) GroupInt(name string) (int64, bool) {
	if _, ok := v.cfg.Get(name); !ok {
		return 0, false
	}
	return v.cfg.Int(v.values, name), true
}

// GroupString implements coordinator.GroupConfigValues.
func (v groupValues) GroupString(name string) (string, bool) { return v.cfg.Get(name) }
