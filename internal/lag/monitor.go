package lag

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GroupInfo is a group as ListGroups describes it.
type GroupInfo struct {
	ID    string
	Type  string // classic, consumer, streams
	State string
}

// Committed is one committed offset.
type Committed struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Source is where the monitor reads groups and their committed offsets (the group
// coordinator).
type Source interface {
	ListGroups(ctx context.Context) ([]GroupInfo, error)
	// Committed calls fn with the committed offsets of each of groups that has any, sorted by
	// topic and partition (the monitor sorts them when they are not). cs is valid only during
	// the call: a source reuses it, so a sample never holds every group's offsets at once.
	Committed(ctx context.Context, groups []string, fn func(group string, cs []Committed)) error
}

// Log is the data plane as the monitor reads it.
type Log interface {
	LogEnds
	// BatchTimestamp is the timestamp (Unix ms) of the batch holding offset: its first
	// timestamp, or its append time with LogAppendTime; ok is false when there is none.
	BatchTimestamp(topic string, partition int32, offset int64) (ms int64, ok bool)
}

// MonitorConfig configures a Monitor.
type MonitorConfig struct {
	// Interval between samples (default 10 s).
	Interval time.Duration
	// ChartPoints is how many samples each group's lag chart keeps (default 120) and
	// ChartGroups how many groups have one (default 1000; the groups seen first).
	ChartPoints, ChartGroups int
	// PartitionMetrics selects the groups whose per-partition series are exported (nil: none).
	PartitionMetrics *regexp.Regexp
}

func (c *MonitorConfig) fill() {
	if c.Interval <= 0 {
		c.Interval = 10 * time.Second
	}
	if c.ChartPoints <= 0 {
		c.ChartPoints = 120
	}
	if c.ChartGroups <= 0 {
		c.ChartGroups = 1000
	}
}

// Snapshot is the result of one sample: every group with committed offsets, evaluated at At.
// It is immutable once published. It keeps each group's totals and the log ends the sample
// read, not the groups' partitions: a group's partitions are evaluated when they are asked for
// (Monitor.GroupDetail), against the sample's log ends and time, so the snapshot does not grow
// with the committed offsets. Only the groups MonitorConfig.PartitionMetrics selects (the
// per-partition series, bounded by that pattern) keep their partitions (MetricPartitions).
type Snapshot struct {
	At     time.Time
	Groups map[string]*GroupLag
	// Order is the group ids sorted.
	Order []string

	ends        map[string]*topicEnds
	metricParts map[string][]PartitionLag
}

// MetricPartitions is the partitions of a group MonitorConfig.PartitionMetrics selects, as the
// sample evaluated them (nil for other groups).
func (s *Snapshot) MetricPartitions(group string) []PartitionLag { return s.metricParts[group] }

// GroupLag is one group's lag.
type GroupLag struct {
	Group  string `json:"group"`
	Type   string `json:"type"`
	State  string `json:"state"`
	Status Status `json:"status"`
	// TotalLag sums the partitions' lags (unknown lags count 0).
	TotalLag int64 `json:"total_lag"`
	// MaxLag is the largest partition lag, of partition MaxLagPartition of MaxLagTopic.
	MaxLag          int64  `json:"max_lag"`
	MaxLagTopic     string `json:"max_lag_topic,omitempty"`
	MaxLagPartition int32  `json:"max_lag_partition"`
	// MaxTimeLagMs is the largest time lag of a partition (ms).
	MaxTimeLagMs int64 `json:"max_time_lag_ms"`
	// Complete is the share of partitions whose window is full (Burrow's completeness).
	Complete float64 `json:"complete"`
	// Partitions is the number of partitions with committed offsets.
	Partitions int `json:"partitions"`
}

// add folds a partition into the group's status and maxima.
func (gl *GroupLag) add(pl *PartitionLag) {
	gl.Status = Fold(gl.Status, pl.Status)
	if pl.Lag > 0 {
		gl.TotalLag += pl.Lag
	}
	if pl.Lag > gl.MaxLag || (gl.MaxLagPartition < 0 && pl.Lag >= 0) {
		gl.MaxLag, gl.MaxLagTopic, gl.MaxLagPartition = max(pl.Lag, 0), pl.Topic, pl.Partition
	}
	gl.MaxTimeLagMs = max(gl.MaxTimeLagMs, pl.TimeLagMs)
	gl.Partitions++
}

// PartitionLag is one partition's lag.
type PartitionLag struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	// LogEndOffset is the high watermark (-1 when the partition is unknown, e.g. deleted).
	LogEndOffset int64 `json:"log_end_offset"`
	// Lag is LogEndOffset − CommittedOffset, at least 0 (-1 when unknown).
	Lag int64 `json:"lag"`
	// TimeLagMs is the age of the first unconsumed record (0 without lag, -1 unknown).
	TimeLagMs int64  `json:"time_lag_ms"`
	Status    Status `json:"status"`
	// Commits is the number of commits in the window (at most the configured intervals).
	Commits int `json:"commits"`
}

// ChartPoint is one sample of a group's lag.
type ChartPoint struct {
	At           int64 `json:"timestamp_ms"`
	TotalLag     int64 `json:"total_lag"`
	MaxLag       int64 `json:"max_lag"`
	MaxTimeLagMs int64 `json:"max_time_lag_ms"`
}

// Monitor samples and evaluates every group's lag.
type Monitor struct {
	cfg     MonitorConfig
	tracker *Tracker
	src     Source
	log     Log
	now     func() time.Time
	// OnSample, when set, is called after each published snapshot (live console updates).
	OnSample func(*Snapshot)

	snap atomic.Pointer[Snapshot]

	// Sampler-owned.
	sampleMu sync.Mutex
	tsCache  map[TopicPartition]tsEntry
	tsGen    uint32

	chartMu sync.Mutex
	charts  map[string]*chart
}

// tsEntry caches the batch timestamp of a partition's committed offset; gen is the last sample
// that used it.
type tsEntry struct {
	offset, ms int64
	gen        uint32
}

type chart struct {
	pts   []ChartPoint
	start int
	n     int
}

// NewMonitor builds a monitor over a tracker; now is the broker clock.
func NewMonitor(cfg MonitorConfig, t *Tracker, src Source, log Log, now func() time.Time) *Monitor {
	cfg.fill()
	if now == nil {
		now = time.Now
	}
	m := &Monitor{cfg: cfg, tracker: t, src: src, log: log, now: now,
		tsCache: map[TopicPartition]tsEntry{}, charts: map[string]*chart{}}
	m.snap.Store(&Snapshot{Groups: map[string]*GroupLag{}})
	return m
}

// Tracker is the monitor's commit tracker.
func (m *Monitor) Tracker() *Tracker { return m.tracker }

// Config is the monitor's configuration.
func (m *Monitor) Config() MonitorConfig { return m.cfg }

// Snapshot is the latest published sample.
func (m *Monitor) Snapshot() *Snapshot { return m.snap.Load() }

// Run samples every Interval until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		m.Sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample reads every group's committed offsets and the partitions' log ends, records commits
// the tracker did not see (transactional commits, commits before a restart), evaluates every
// partition and group, and publishes the snapshot. Concurrent calls run one after another.
//
// A sample holds one group's offsets at a time (Source.Committed), reads each partition's log
// end once (per topic, by partition), evaluates each partition into a reused value and keeps
// only the group's totals, so what it allocates grows with the groups and the topics'
// partitions, not with the committed offsets.
func (m *Monitor) Sample(ctx context.Context) (*Snapshot, error) {
	m.sampleMu.Lock()
	defer m.sampleMu.Unlock()
	groups, err := m.src.ListGroups(ctx)
	if err != nil {
		return m.Snapshot(), err
	}
	ids := make([]string, len(groups))
	info := make(map[string]*GroupInfo, len(groups))
	for i := range groups {
		ids[i] = groups[i].ID
		info[groups[i].ID] = &groups[i]
	}
	now := m.now()
	m.tsGen++
	snap := &Snapshot{At: now, Groups: make(map[string]*GroupLag, len(groups)), ends: map[string]*topicEnds{}}
	e := &evaluator{m: m, snap: snap, nowMs: now.UnixMilli(), sampling: true}
	re := m.cfg.PartitionMetrics
	err = m.src.Committed(ctx, ids, func(group string, cs []Committed) {
		gi := info[group]
		if len(cs) == 0 || gi == nil {
			return
		}
		if _, dup := snap.Groups[group]; dup {
			return
		}
		sortCommitted(cs)
		gl := &GroupLag{Group: group, Type: gi.Type, State: gi.State, Status: StatusOK, MaxLagPartition: -1}
		var parts []PartitionLag
		keep := re != nil && re.MatchString(group)
		if keep {
			parts = make([]PartitionLag, 0, len(cs))
		}
		full := 0
		for _, c := range cs {
			pl := e.partition(group, c)
			if pl.Commits >= m.tracker.cfg.Intervals {
				full++
			}
			gl.add(&pl)
			if keep {
				parts = append(parts, pl)
			}
		}
		gl.Complete = float64(full) / float64(len(cs))
		m.tracker.retainSorted(group, cs)
		snap.Groups[group] = gl
		snap.Order = append(snap.Order, group)
		if keep {
			if snap.metricParts == nil {
				snap.metricParts = map[string][]PartitionLag{}
			}
			snap.metricParts[group] = parts
		}
	})
	if err != nil {
		return m.Snapshot(), err
	}
	sort.Strings(snap.Order)
	// Groups the coordinator no longer has, or that have no committed offsets.
	for _, g := range m.tracker.Groups() {
		if _, ok := snap.Groups[g]; !ok {
			m.tracker.Forget(g)
		}
	}
	// Log end samples of partitions no group commits any more (or whose log end is unknown).
	m.tracker.retainEnds(func(tp TopicPartition) bool { return snap.end(tp) >= 0 })
	for tp, c := range m.tsCache {
		if c.gen != m.tsGen {
			delete(m.tsCache, tp)
		}
	}
	m.updateCharts(snap)
	m.snap.Store(snap)
	if m.OnSample != nil {
		m.OnSample(snap)
	}
	return snap, nil
}

// sortCommitted sorts offsets by topic and partition (a no-op for a source that sorts them).
func sortCommitted(cs []Committed) {
	less := func(a, b Committed) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	}
	if !slices.IsSortedFunc(cs, less) {
		slices.SortFunc(cs, less)
	}
}

// batchTimestamp looks up (and caches per committed offset) the timestamp of the first
// unconsumed record's batch.
func (m *Monitor) batchTimestamp(tp TopicPartition, offset int64) (int64, bool) {
	if e, ok := m.tsCache[tp]; ok && e.offset == offset {
		if e.gen != m.tsGen {
			e.gen = m.tsGen
			m.tsCache[tp] = e
		}
		return e.ms, e.ms >= 0
	}
	ms, ok := m.log.BatchTimestamp(tp.Topic, tp.Partition, offset)
	if !ok {
		ms = -1
	}
	m.tsCache[tp] = tsEntry{offset: offset, ms: ms, gen: m.tsGen}
	return ms, ok
}

func (m *Monitor) updateCharts(snap *Snapshot) {
	m.chartMu.Lock()
	defer m.chartMu.Unlock()
	for id := range m.charts {
		if _, ok := snap.Groups[id]; !ok {
			delete(m.charts, id)
		}
	}
	at := snap.At.UnixMilli()
	for _, id := range snap.Order {
		c := m.charts[id]
		if c == nil {
			if len(m.charts) >= m.cfg.ChartGroups {
				continue
			}
			c = &chart{pts: make([]ChartPoint, m.cfg.ChartPoints)}
			m.charts[id] = c
		}
		g := snap.Groups[id]
		p := ChartPoint{At: at, TotalLag: g.TotalLag, MaxLag: g.MaxLag, MaxTimeLagMs: g.MaxTimeLagMs}
		if c.n < len(c.pts) {
			c.pts[(c.start+c.n)%len(c.pts)] = p
			c.n++
		} else {
			c.pts[c.start] = p
			c.start = (c.start + 1) % len(c.pts)
		}
	}
}

// Chart returns a group's lag samples, oldest first (nil when the group has no chart).
func (m *Monitor) Chart(group string) []ChartPoint {
	m.chartMu.Lock()
	defer m.chartMu.Unlock()
	c := m.charts[group]
	if c == nil {
		return nil
	}
	out := make([]ChartPoint, 0, c.n)
	for i := 0; i < c.n; i++ {
		out = append(out, c.pts[(c.start+i)%len(c.pts)])
	}
	return out
}

// Window returns a partition's commit window, oldest first.
func (m *Monitor) Window(group, topic string, partition int32) []Observation {
	return m.tracker.Window(group, TopicPartition{topic, partition})
}
