package broker

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// topoDescCollector exposes the KIP-1331 plugin counters (Kafka sensors
// streams-group-topology-description-*) as muster_group_coordinator_streams_group_topology_description_*_total.
// Without a plugin every counter is 0.
type topoDescCollector struct{ b *Broker }

var topoDescMetrics = []struct{ name, help string }{
	{"set_success", "setTopology calls that succeeded."},
	{"set_error", "setTopology calls that failed (permanent or transient)."},
	{"get_success", "getTopology calls that succeeded (including 'not stored')."},
	{"get_error", "getTopology calls that failed."},
	{"delete_success", "deleteTopology calls that succeeded (DeleteGroups and cleanup)."},
	{"delete_error", "deleteTopology calls that failed."},
	{"cleanup_cycle", "Periodic topology-description cleanup cycles run."},
	{"cleanup_eligible", "Groups found eligible by cleanup cycles (Empty, offsets expired, description stored)."},
}

var topoDescDescs = func() []*prometheus.Desc {
	out := make([]*prometheus.Desc, len(topoDescMetrics))
	for i, m := range topoDescMetrics {
		out[i] = prometheus.NewDesc("muster_group_coordinator_streams_group_topology_description_"+m.name+"_total", m.help, nil, nil)
	}
	return out
}()

func (c topoDescCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range topoDescDescs {
		ch <- d
	}
}

func (c topoDescCollector) Collect(ch chan<- prometheus.Metric) {
	vals := make([]int64, len(topoDescDescs))
	if !c.b.serving.Load() {
		return
	}
	if td := c.b.td; td != nil {
		k := &td.Counters
		for i, a := range []*atomic.Int64{&k.SetSuccess, &k.SetError, &k.GetSuccess, &k.GetError,
			&k.DeleteSuccess, &k.DeleteError, &k.CleanupCycles, &k.CleanupEligible} {
			vals[i] = a.Load()
		}
	}
	for i, d := range topoDescDescs {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(vals[i]))
	}
}
