package data

import (
	"maps"
	"time"

	"github.com/muster-io/muster/internal/config"
)

// In cluster mode every node shares the catalog: a topic created, grown, reconfigured or deleted
// on one node, a group's or the cluster's dynamic configs changed on one node, reach the others
// when the store announces a change (CatalogWatcher: PostgreSQL's LISTEN/NOTIFY) and at every
// catalogReread, a safety net for a missed announcement. SyncCatalog applies the difference to
// this node's registry and publishes it like a local change, so the coordinator sees the same
// topics (and topic ids) on every node.

// CatalogWatcher is a Catalog that other nodes change too: Changed receives (without
// blocking) whenever the catalog may have changed.
type CatalogWatcher interface {
	Changed() <-chan struct{}
}

// catalogReread is how often a node in cluster mode reads the whole catalog again.
var catalogReread = 10 * time.Second

// catalogLoop keeps the registry as the shared catalog has it until Close.
func (p *Plane) catalogLoop(changed <-chan struct{}) {
	defer close(p.catalogDone)
	t := time.NewTicker(catalogReread)
	defer t.Stop()
	for {
		select {
		case <-p.closing:
			return
		case <-changed:
		case <-t.C:
		}
		if err := p.SyncCatalog(); err != nil {
			p.log.Warn("data: reading the shared catalog failed; retrying", "err", err)
		}
	}
}

// SyncCatalog reads the catalog and applies what other nodes changed: topics created, grown,
// reconfigured or deleted, group and broker configs.
func (p *Plane) SyncCatalog() error {
	p.adminMu.Lock()
	err := p.syncTopicsLocked()
	p.adminMu.Unlock()
	p.deliver()
	if err != nil {
		return err
	}
	if err := p.groupConfigs.sync(); err != nil {
		return err
	}
	p.groupConfigs.deliver()
	return p.syncBrokerConfigs()
}

// syncTopicsLocked applies the catalog's topics to the registry (adminMu held).
func (p *Plane) syncTopicsLocked() error {
	recs, err := p.st.Topics()
	if err != nil {
		return err
	}
	want := make(map[[16]byte]TopicRecord, len(recs))
	for _, rec := range recs {
		want[rec.ID] = rec
	}
	var gone []*topic
	p.mu.RLock()
	for id, t := range p.byID {
		if _, ok := want[id]; !ok {
			gone = append(gone, t)
		}
	}
	p.mu.RUnlock()
	for _, t := range gone { // before additions: a name deleted and created again
		p.forgetTopic(t)
	}
	eff := p.effective()
	for _, rec := range recs {
		p.mu.RLock()
		t := p.byID[rec.ID]
		p.mu.RUnlock()
		if t == nil {
			t = newTopic(rec.Name, rec.ID, rec.Configs, eff)
			for i := int32(0); i < rec.Partitions; i++ {
				t.parts = append(t.parts, p.newPart(t.id, i))
			}
			p.mu.Lock()
			p.byName[t.name] = t
			p.byID[t.id] = t
			info := p.infoLocked(t)
			p.mu.Unlock()
			p.publish(TopicChange{Created: []TopicInfo{info}})
			p.log.Info("topic created on another node", "topic", t.name, "partitions", rec.Partitions)
			continue
		}
		configs := rec.Configs
		if configs == nil {
			configs = map[string]string{}
		}
		p.mu.Lock()
		cur := int32(len(t.parts))
		if rec.Partitions > cur {
			parts := append([]*partition(nil), t.parts...)
			for i := cur; i < rec.Partitions; i++ {
				parts = append(parts, p.newPart(t.id, i))
			}
			t.parts = parts
		}
		changedConfigs := !maps.Equal(t.configs, configs)
		if changedConfigs {
			t.configs = configs
			t.lc.Store(newLogConfig(p.effective(), configs))
		}
		info := p.infoLocked(t)
		p.mu.Unlock()
		if rec.Partitions > cur {
			p.publish(TopicChange{Resized: []TopicInfo{info}})
			p.log.Info("topic partitions grown on another node", "topic", t.name, "from", cur, "to", rec.Partitions)
		}
		if changedConfigs {
			p.cleaner.poke()
			p.log.Info("topic configs changed on another node", "topic", t.name, "configs", configs)
		}
	}
	return nil
}

// forgetTopic removes a topic another node deleted (its data is gone from the store already):
// the partitions this node leads unload, and the deletion is published (adminMu held).
func (p *Plane) forgetTopic(t *topic) {
	p.mu.Lock()
	if p.byID[t.id] != t {
		p.mu.Unlock()
		return
	}
	delete(p.byID, t.id)
	if p.byName[t.name] == t {
		delete(p.byName, t.name)
	}
	info := p.infoLocked(t)
	parts := t.parts
	p.mu.Unlock()
	t.life.Lock() // waits for in-flight produces (refused by the store: the leases are gone)
	t.deleted = true
	t.life.Unlock()
	p.endLeaderships(parts)
	p.publish(TopicChange{Deleted: []TopicInfo{info}})
	p.log.Info("topic deleted on another node", "topic", t.name)
}

// endLeaderships stops leading parts and wakes their long polls.
func (p *Plane) endLeaderships(parts []*partition) {
	for _, part := range parts {
		part.mu.Lock()
		l := part.lease
		part.mu.Unlock()
		if l != nil {
			l.end()
		}
		part.wake()
	}
}

// syncBrokerConfigs re-reads the cluster's and this broker's dynamic configs and applies them
// when they changed.
func (p *Plane) syncBrokerConfigs() error {
	def, err := p.st.BrokerConfigs("")
	if err != nil {
		return err
	}
	mine, err := p.st.BrokerConfigs(p.brokerResource())
	if err != nil {
		return err
	}
	p.dynMu.Lock()
	defer p.dynMu.Unlock()
	def, mine = p.validBrokerConfigs(def), p.validBrokerConfigs(mine)
	if maps.Equal(def, p.dynDefault) && maps.Equal(mine, p.dynBroker) {
		return nil
	}
	p.dynDefault, p.dynBroker = def, mine
	p.applyBrokerConfigsLocked()
	p.log.Info("dynamic broker configs changed on another node", "cluster_default", def)
	return nil
}

// sync re-reads every group's configs and applies what changed, queueing the changes for the
// subscribers.
func (s *GroupConfigStore) sync() error {
	all, err := s.p.st.GroupConfigs()
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	want := map[string]config.GroupConfig{}
	for group, m := range all {
		if g := config.NewGroupConfig(validGroupConfigs(m)); !g.Empty() {
			want[group] = g
		}
	}
	var changes []config.GroupConfigChange
	s.mu.Lock()
	for group, g := range want {
		if cur, ok := s.byGroup[group]; !ok || !maps.Equal(cur.Overrides(), g.Overrides()) {
			s.byGroup[group] = g
			changes = append(changes, config.GroupConfigChange{Group: group, Config: g})
		}
	}
	for group := range s.byGroup {
		if _, ok := want[group]; !ok {
			delete(s.byGroup, group)
			changes = append(changes, config.GroupConfigChange{Group: group, Config: config.NewGroupConfig(nil)})
		}
	}
	s.mu.Unlock()
	if len(changes) > 0 {
		s.subMu.Lock()
		s.events = append(s.events, changes...)
		s.subMu.Unlock()
	}
	return nil
}
