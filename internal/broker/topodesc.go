package broker

import (
	"fmt"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/streams/topodesc"
)

// newTopologyDescriptions builds the KIP-1331 plugin named by
// group.streams.topology.description.plugin.class (memory, disk under dataDir, or http; in
// cluster mode postgres, which replaces disk) and the coordinator's solicitation state around
// it. It returns nil, nil when no plugin is configured (the feature is off).
func newTopologyDescriptions(v *config.Values, dataDir string, b *Broker) (*api.TopologyDescriptions, error) {
	props := map[string]string{}
	for _, k := range []string{topodesc.ConfigPluginClass, topodesc.ConfigMaxBytes, topodesc.ConfigHTTPURL} {
		props[k] = v.String(k)
	}
	cfg, err := topodesc.ParseConfig(props, dataDir)
	if err != nil {
		return nil, err
	}
	if b.cl != nil {
		cfg.Shared = b.cl.db.Topologies() // cluster mode: disk → postgres, shared by the nodes
	}
	plugin, err := topodesc.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("topology description plugin: %w", err)
	}
	if plugin == nil {
		return nil, nil
	}
	td := api.NewTopologyDescriptions(plugin,
		v.Ms("group.streams.topology.description.backoff.initial.ms"),
		v.Ms("group.streams.topology.description.backoff.max.ms"),
		v.Ms("group.streams.topology.description.inflight.timeout.ms"),
		b.log.With("component", "kip-1331", "plugin", plugin.Name()))
	return td, nil
}

// stopTopologyDescriptionCleanup stops the periodic cleanup (before the runtime closes).
func (b *Broker) stopTopologyDescriptionCleanup() {
	if b.td != nil {
		b.td.Close()
	}
}

// closeTopologyDescriptionPlugin closes the plugin (after the runtime closed).
func (b *Broker) closeTopologyDescriptionPlugin() {
	if b.td != nil {
		if err := b.td.Plugin.Close(); err != nil {
			b.log.Warn("closing the topology description plugin", "err", err)
		}
	}
}

// TopologyDescriptions exposes the KIP-1331 state (nil without a plugin; tests).
func (b *Broker) TopologyDescriptions() *api.TopologyDescriptions { return b.td }
