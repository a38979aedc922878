package data

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/config"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// GroupConfigStore keeps the dynamic configs of groups (GROUP resources of
// IncrementalAlterConfigs and AlterConfigs, KIP-848), durably under 'd' 'g' group id. It
// implements config.GroupConfigs, the interface the group coordinator reads. A group's configs
// do not require the group to exist, as in Kafka.
type GroupConfigStore struct {
	p *Plane

	writeMu sync.Mutex // serializes changes (each commits with Sync)
	mu      sync.RWMutex
	byGroup map[string]config.GroupConfig

	subMu      sync.Mutex
	subs       []func(config.GroupConfigChange)
	events     []config.GroupConfigChange
	delivering bool
}

var _ config.GroupConfigs = (*GroupConfigStore)(nil)

func newGroupConfigStore(p *Plane) *GroupConfigStore {
	return &GroupConfigStore{p: p, byGroup: map[string]config.GroupConfig{}}
}

// GroupConfigs returns the store of group configs.
func (p *Plane) GroupConfigs() *GroupConfigStore { return p.groupConfigs }

// Get returns group's config overrides; ok is false when it has none.
func (s *GroupConfigStore) Get(group string) (config.GroupConfig, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.byGroup[group]
	return g, ok
}

// Groups lists the groups that have config overrides.
func (s *GroupConfigStore) Groups() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.byGroup))
	for g := range s.byGroup {
		out = append(out, g)
	}
	return out
}

// Subscribe registers fn, called after each durable change of a group's configs, one call at a
// time, in commit order, outside the store's locks (fn may call Get).
func (s *GroupConfigStore) Subscribe(fn func(config.GroupConfigChange)) {
	s.subMu.Lock()
	s.subs = append(s.subs, fn)
	s.subMu.Unlock()
}

func (s *GroupConfigStore) load() error {
	prefix := []byte{keyPrefix, kindGroupConfig}
	it, err := s.p.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("data: load group configs: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		group := string(it.Key()[2:])
		m := map[string]string{}
		if err := json.Unmarshal(it.Value(), &m); err != nil {
			return fmt.Errorf("data: group configs of %q: %w", group, err)
		}
		for k := range m {
			if _, ok := config.LookupGroup(k); !ok {
				delete(m, k)
			}
		}
		if len(m) > 0 {
			s.byGroup[group] = config.NewGroupConfig(m)
		}
	}
	return it.Error()
}

// Delete removes group's configs durably (the coordinator calls it when the
// group is deleted) and notifies the subscribers; a group without configs is
// not an error.
func (s *GroupConfigStore) Delete(group string) error {
	s.writeMu.Lock()
	if _, ok := s.Get(group); !ok {
		s.writeMu.Unlock()
		return nil
	}
	err := s.set(group, nil)
	s.writeMu.Unlock()
	if err == nil {
		s.deliver()
	}
	return err
}

// set durably replaces group's overrides (none: removes them) and notifies the subscribers.
// writeMu held.
func (s *GroupConfigStore) set(group string, m map[string]string) error {
	err := s.p.commit(diskguard.Configs, func() error {
		if len(m) == 0 {
			return s.p.db.Delete(nameKey(kindGroupConfig, group), pebble.Sync)
		}
		b, _ := json.Marshal(m)
		return s.p.db.Set(nameKey(kindGroupConfig, group), b, pebble.Sync)
	})
	if err != nil {
		return err
	}
	g := config.NewGroupConfig(m)
	s.mu.Lock()
	if g.Empty() {
		delete(s.byGroup, group)
	} else {
		s.byGroup[group] = g
	}
	s.mu.Unlock()
	s.subMu.Lock()
	s.events = append(s.events, config.GroupConfigChange{Group: group, Config: g})
	s.subMu.Unlock()
	s.p.log.Info("group configs changed", "group", group, "configs", m)
	return nil
}

// deliver runs queued changes through the subscribers unless another goroutine already is.
func (s *GroupConfigStore) deliver() {
	s.subMu.Lock()
	if s.delivering {
		s.subMu.Unlock()
		return
	}
	s.delivering = true
	for len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		subs := s.subs
		s.subMu.Unlock()
		for _, fn := range subs {
			fn(ev)
		}
		s.subMu.Lock()
	}
	s.events = nil
	s.delivering = false
	s.subMu.Unlock()
}
