package broker

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/store/diskguard"
)

// minSafeFreeBytes is the least free space the guard should keep for Pebble: a WAL file is
// preallocated at 110 % of the 8 MiB memtable, up to two memtables wait to be flushed into
// tables of about their size, and compactions write their output before they delete their
// inputs.
const minSafeFreeBytes = 256 << 20

// memTableSize is Pebble's memtable size for a free-space threshold: 8 MiB, but at most a
// quarter of the threshold (at least 4 MiB), so that the memtables waiting to be flushed (two at
// most) always fit in the room the guard keeps. Pebble flushes them before it opens: a restart
// on a disk short of space must be able to. 8 MiB rather than Pebble's 64: the memtables are
// resident memory (up to two of them, a few bytes per committed offset at a million offsets),
// and what muster writes is mostly log batches, read back from tables; a smaller memtable
// costs more, smaller flushes, no measurable throughput on this machine (docs/bench).
func memTableSize(threshold uint64) uint64 {
	const maxSize, minSize = 8 << 20, 4 << 20
	if threshold == 0 {
		return maxSize
	}
	return min(maxSize, max(minSize, threshold/4))
}

// L0 compaction thresholds (Pebble's defaults: 4 and 12). Every partition log is an append
// stream of its own key range, and a flush of a memtable holding many of them (the
// __consumer_offsets partitions, the coordinator's checkpoints, several produced partitions)
// overlaps every table of the base level: each L0 compaction rewrites them all. Letting 16
// flushes of 8 MiB gather first makes that rewrite about four times rarer (measured: Pebble's
// compactions went from 43 % to 20 % of the CPU under 50-partition commits at 64 connections);
// fetches read the logs with iterators, which more L0 files cost little.
const (
	l0CompactionThreshold = 16
	l0StopWritesThreshold = 48
)

// newGuard builds the disk guard of dataDir from muster.storage.min.free.bytes and
// muster.storage.min.free.ratio; probe is its store probe write (set once the store is open).
func newGuard(v *config.Values, dataDir string, log *slog.Logger, probe func() error) *diskguard.Guard {
	g := diskguard.New(diskguard.Options{
		Dir:          dataDir,
		MinFreeBytes: v.Int("muster.storage.min.free.bytes"),
		MinFreeRatio: v.Float("muster.storage.min.free.ratio"),
		Log:          log,
		Probe:        probe,
	})
	switch minBytes, ratio := v.Int("muster.storage.min.free.bytes"), v.Float("muster.storage.min.free.ratio"); {
	case minBytes == 0 && ratio == 0:
		log.Warn("storage: the free-space guard is off (muster.storage.min.free.bytes and muster.storage.min.free.ratio are 0): a full disk fails the store until a restart")
	case minBytes < minSafeFreeBytes:
		log.Warn("storage: muster.storage.min.free.bytes is below 256 MiB; on a small file system Pebble may run out of room for its WAL, flushes and compactions before writes are refused",
			"min_free_bytes", minBytes, "min_free_ratio", ratio)
	}
	return g
}

// probeKey is the key the guard's probe write sets in the store's meta prefix.
var probeKey = []byte("mprobe")

// probe is the guard's probe: one small synced write (a failed store stays failed; one that
// takes it takes writes again).
func (b *Broker) probe() error {
	if b.db == nil {
		return nil
	}
	return b.guard.Commit(diskguard.Lease, func() error { return b.db.Set(probeKey, nil, pebble.Sync) })
}

// groupWrites is the guard as the coordinator's engine and adapters ask it.
type groupWrites struct{ g *diskguard.Guard }

func (w groupWrites) Refusing() bool { return w.g.Refusing() }

func (w groupWrites) Refuse(deletesOnly bool) error {
	if deletesOnly {
		return w.g.Refuse(diskguard.GroupDelete)
	}
	return w.g.Refuse(diskguard.GroupWrite)
}

// storageCollector exports the guard's state on each scrape.
type storageCollector struct{ g *diskguard.Guard }

var (
	descFree      = prometheus.NewDesc("muster_storage_free_bytes", "Bytes available to muster on the data dir's file system (statfs, at the last check).", nil, nil)
	descTotal     = prometheus.NewDesc("muster_storage_total_bytes", "Size of the data dir's file system.", nil, nil)
	descThreshold = prometheus.NewDesc("muster_storage_min_free_bytes", "Free space below which writes that grow the store are refused (the larger of muster.storage.min.free.bytes and muster.storage.min.free.ratio of the file system).", nil, nil)
	descDegraded  = prometheus.NewDesc("muster_storage_degraded", "1 while the store refuses writes, by reason: low_disk_space (writes that grow the store), store_error (until a probe write succeeds), store_failed (every write, until a restart).", []string{"reason"}, nil)
	descRefused   = prometheus.NewDesc("muster_storage_refused_writes_total", "Writes refused by the disk guard, by reason and kind of write.", []string{"reason", "write"}, nil)
	descBgErrors  = prometheus.NewDesc("muster_storage_background_errors_total", "Errors of the store's background work (Pebble flushes and compactions), e.g. a full disk.", nil, nil)
)

func (c storageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFree, descTotal, descThreshold, descDegraded, descRefused, descBgErrors} {
		ch <- d
	}
}

func (c storageCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.g.Status()
	ch <- prometheus.MustNewConstMetric(descFree, prometheus.GaugeValue, float64(st.Free))
	ch <- prometheus.MustNewConstMetric(descTotal, prometheus.GaugeValue, float64(st.Total))
	ch <- prometheus.MustNewConstMetric(descThreshold, prometheus.GaugeValue, float64(st.Threshold))
	for _, s := range []diskguard.State{diskguard.LowSpace, diskguard.StoreError, diskguard.Failed} {
		v := 0.0
		if st.State == s {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descDegraded, prometheus.GaugeValue, v, s.String())
		for _, w := range diskguard.Writes() {
			ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(c.g.Refused(s, w)), s.String(), w.String())
		}
	}
	ch <- prometheus.MustNewConstMetric(descBgErrors, prometheus.CounterValue, float64(c.g.BackgroundErrors()))
}

// storageReadiness is what /readyz says about the store: ready is false when the store failed;
// note names a degraded state ("" when the store takes every write).
func storageReadiness(g *diskguard.Guard) (ready bool, note string) {
	st := g.Status()
	switch st.State {
	case diskguard.OK:
		return true, ""
	case diskguard.Failed:
		return false, fmt.Sprintf("storage %s: %s", st.State, st.Reason)
	}
	return true, fmt.Sprintf("degraded, storage %s: %s", st.State, st.Reason)
}
