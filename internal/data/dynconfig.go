package data

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/config"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// effective is the broker configuration in force: the static Values with the dynamic broker
// configs applied.
func (p *Plane) effective() *config.Values { return p.eff.Load() }

// Effective is the broker configuration in force (static config with the dynamic broker
// configs applied); it changes when IncrementalAlterConfigs or AlterConfigs alter the BROKER
// resource.
func (p *Plane) Effective() *config.Values { return p.effective() }

// layers returns the broker config levels (copies of the dynamic maps).
func (p *Plane) layers() config.Layers {
	p.dynMu.Lock()
	defer p.dynMu.Unlock()
	return config.Layers{Static: p.cfg.Values, DynamicDefault: copyMap(p.dynDefault), DynamicBroker: copyMap(p.dynBroker)}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// brokerResource is this broker's BROKER resource name (its node id).
func (p *Plane) brokerResource() string { return strconv.Itoa(int(p.cfg.NodeID)) }

// loadDynamicConfigs reads the stored dynamic broker configs (this broker's and the cluster
// default; other brokers' are ignored) and installs the configuration in force.
func (p *Plane) loadDynamicConfigs() error {
	for _, res := range []string{"", p.brokerResource()} {
		v, closer, err := p.db.Get(nameKey(kindBrokerConfig, res))
		if err == pebble.ErrNotFound {
			continue
		}
		if err != nil {
			return fmt.Errorf("data: load dynamic broker configs: %w", err)
		}
		m := map[string]string{}
		err = json.Unmarshal(v, &m)
		closer.Close()
		if err != nil {
			return fmt.Errorf("data: dynamic broker configs %q: %w", res, err)
		}
		for k, val := range m { // a key this version no longer accepts is ignored, not fatal
			if d, ok := config.Lookup(k); !ok || config.DynamicMode(k) == config.ReadOnly || d.KafkaCheck(val) != "" {
				p.log.Warn("ignoring stored dynamic broker config", "key", k, "value", val)
				delete(m, k)
			}
		}
		if res == "" {
			p.dynDefault = m
		} else {
			p.dynBroker = m
		}
	}
	p.eff.Store(config.Layers{Static: p.cfg.Values, DynamicDefault: p.dynDefault, DynamicBroker: p.dynBroker}.Effective())
	return nil
}

// setBrokerConfigs durably replaces the dynamic configs of BROKER resource res ("" = cluster
// default, else this broker) and applies the new configuration in force at once: every topic's
// log configuration is recomputed, the cleaner re-reads its settings. dynMu held.
func (p *Plane) setBrokerConfigs(res string, m map[string]string) error {
	b, _ := json.Marshal(m)
	err := p.commit(diskguard.Configs, func() error {
		if len(m) == 0 {
			return p.db.Delete(nameKey(kindBrokerConfig, res), pebble.Sync)
		}
		return p.db.Set(nameKey(kindBrokerConfig, res), b, pebble.Sync)
	})
	if err != nil {
		return err
	}
	if res == "" {
		p.dynDefault = m
	} else {
		p.dynBroker = m
	}
	eff := config.Layers{Static: p.cfg.Values, DynamicDefault: p.dynDefault, DynamicBroker: p.dynBroker}.Effective()
	p.mu.Lock()
	p.eff.Store(eff)
	for _, t := range p.byName {
		t.lc.Store(newLogConfig(eff, t.configs))
	}
	p.mu.Unlock()
	p.cleaner.poke()
	p.log.Info("dynamic broker configs changed", "resource", res, "configs", m)
	return nil
}

// producerIDExpiration is producer.id.expiration.ms in force.
func (p *Plane) producerIDExpiration() time.Duration {
	return p.effective().Ms("producer.id.expiration.ms")
}
