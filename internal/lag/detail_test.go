package lag

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"testing"
	"time"
)

// fakeCoord is a coordinator's committed offsets: group → topic → partition → offset.
type fakeCoord map[string]map[string]map[int32]int64

func (f fakeCoord) ListGroups(context.Context) ([]GroupInfo, error) {
	var out []GroupInfo
	for g := range f {
		out = append(out, GroupInfo{ID: g, Type: "consumer", State: "Stable"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Committed hands the offsets over unsorted (the monitor sorts them).
func (f fakeCoord) Committed(_ context.Context, groups []string, fn func(string, []Committed)) error {
	for _, g := range groups {
		var cs []Committed
		for topic, ps := range f[g] {
			for p, off := range ps {
				cs = append(cs, Committed{Topic: topic, Partition: p, Offset: off})
			}
		}
		if len(cs) > 0 {
			fn(g, cs)
		}
	}
	return nil
}

// fakeLog has a log end per partition (none: unknown) and a batch timestamp per offset of
// (offset × 1000) ms after base.
type fakeLog struct {
	ends map[TopicPartition]int64
	base int64
}

func (l *fakeLog) Offsets(topic string, p int32) (int64, int64, bool) {
	e, ok := l.ends[TopicPartition{topic, p}]
	return 0, e, ok
}

func (l *fakeLog) BatchTimestamp(topic string, p int32, off int64) (int64, bool) {
	if off%5 == 4 {
		return 0, false // no timestamp (e.g. compacted away)
	}
	return l.base + off*1000, true
}

// refSample is the evaluation as the monitor did it before the snapshot kept only group totals
// (every partition of every group evaluated into the snapshot), on its own tracker: the partitions
// of each group, sorted, and the group's totals.
func refSample(t *Tracker, src fakeCoord, log Log, nowMs int64) (map[string][]PartitionLag, map[string]GroupLag) {
	ends := map[TopicPartition]int64{}
	for _, ts := range src {
		for topic, ps := range ts {
			for p := range ps {
				tp := TopicPartition{topic, p}
				if _, hw, ok := log.Offsets(topic, p); ok {
					ends[tp] = hw
				} else {
					ends[tp] = -1
				}
			}
		}
	}
	for tp, e := range ends {
		if e >= 0 {
			t.addEnd(tp, e)
		}
	}
	t.retainEnds(func(tp TopicPartition) bool { return ends[tp] >= 0 })
	parts, groups := map[string][]PartitionLag{}, map[string]GroupLag{}
	for g, ts := range src {
		var cs []Committed
		for topic, ps := range ts {
			for p, off := range ps {
				cs = append(cs, Committed{topic, p, off})
			}
		}
		sortCommitted(cs)
		gl := GroupLag{Group: g, Type: "consumer", State: "Stable", Status: StatusOK, MaxLagPartition: -1}
		full := 0
		for _, c := range cs {
			tp := TopicPartition{c.Topic, c.Partition}
			pl := PartitionLag{Topic: c.Topic, Partition: c.Partition, CommittedOffset: c.Offset, LogEndOffset: ends[tp], Lag: -1, TimeLagMs: -1, Status: StatusOK}
			if pl.LogEndOffset >= 0 {
				pl.Lag = max(pl.LogEndOffset-c.Offset, 0)
			}
			if w := t.Window(g, tp); len(w) == 0 || w[len(w)-1].Offset != c.Offset {
				s := t.shard(g)
				s.mu.Lock()
				s.topic(g, tp.Topic, nowMs).add(tp.Partition, Observation{Offset: c.Offset, Lag: pl.Lag, At: nowMs}, t.cfg.Intervals, 0)
				s.mu.Unlock()
			}
			win := t.Window(g, tp)
			pl.Commits = len(win)
			if len(win) >= t.cfg.Intervals {
				full++
			}
			switch {
			case pl.Lag == 0:
				pl.TimeLagMs = 0
			case pl.Lag > 0:
				if ts, ok := log.BatchTimestamp(c.Topic, c.Partition, c.Offset); ok {
					pl.TimeLagMs = max(nowMs-ts, 0)
				}
			}
			if pl.Lag >= 0 {
				pl.Status = Evaluate(win, t.recentEnds(tp, nil), pl.Lag, nowMs)
			}
			gl.add(&pl)
			parts[g] = append(parts[g], pl)
		}
		gl.Complete = float64(full) / float64(len(cs))
		groups[g] = gl
		// Windows of partitions whose offsets are gone.
		s := t.shard(g)
		s.mu.Lock()
		for topic, tw := range s.groups[g] {
			for p := range tw.dense {
				if _, ok := ts[topic][int32(p)]; !ok {
					tw.drop(int32(p))
				}
			}
			for p := range tw.sparse {
				if _, ok := ts[topic][p]; !ok {
					tw.drop(p)
				}
			}
		}
		s.mu.Unlock()
	}
	for _, g := range t.Groups() {
		if _, ok := src[g]; !ok {
			t.Forget(g)
		}
	}
	return parts, groups
}

// A group's partitions evaluated on demand (Monitor.GroupDetail) and the group totals the
// sample published equal what evaluating every partition into the snapshot gave, sample after
// sample, for partitions that are OK, lagging, stopped, stalled, rewound, of unknown log end,
// committed without the tracker seeing it, or whose offsets are deleted; for groups that keep
// their partitions for the metrics and for groups that do not.
func TestGroupDetailEqualsSample(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	log := &fakeLog{ends: map[TopicPartition]int64{}, base: now.UnixMilli() - 3_600_000}
	src := fakeCoord{}
	cfg := TrackerConfig{Intervals: 4, MinDistance: time.Second}
	tr, ref := NewTracker(cfg, log), NewTracker(cfg, log)
	m := NewMonitor(MonitorConfig{PartitionMetrics: regexp.MustCompile("^metrics-.*$")}, tr, src, log, clock)
	commit := func(g, topic string, p int32, off int64, observed bool) {
		if src[g] == nil {
			src[g] = map[string]map[int32]int64{}
		}
		if src[g][topic] == nil {
			src[g][topic] = map[int32]int64{}
		}
		src[g][topic][p] = off
		if observed { // a commit the broker saw (a transactional one it does not)
			tr.Observe(g, topic, p, off, now)
			ref.Observe(g, topic, p, off, now)
		}
	}
	for p := int32(0); p < 6; p++ {
		log.ends[TopicPartition{"a", p}] = 100
		log.ends[TopicPartition{"b", p}] = 50
	}
	groups := []string{"plain", "metrics-x", "other"}
	for round := 0; round < 12; round++ {
		for gi, g := range groups {
			for p := int32(0); p < 6; p++ {
				switch p {
				case 0: // keeps up
					commit(g, "a", p, min(int64(10*round), 100), true)
				case 1: // stops committing after round 3
					if round < 3 {
						commit(g, "a", p, int64(5*round), true)
					}
				case 2: // stalls
					commit(g, "a", p, 7, true)
				case 3: // rewinds at round 6, falls behind otherwise
					off := int64(2 * round)
					if round == 6 {
						off = 1
					}
					commit(g, "b", p, off, true)
				case 4: // commits the tracker does not see
					commit(g, "b", p, int64(3*round+gi), false)
				case 5: // a partition no log has
					commit(g, "c", p, int64(round), true)
				}
			}
		}
		for p := int32(0); p < 6; p++ {
			log.ends[TopicPartition{"a", p}] += 7
			log.ends[TopicPartition{"b", p}] += 3
		}
		if round == 8 { // offsets deleted: the partition goes, then a whole group
			delete(src["other"]["a"], 2)
		}
		if round == 11 {
			delete(src, "other")
		}
		now = now.Add(2 * time.Second)
		snap, err := m.Sample(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantParts, wantGroups := refSample(ref, src, log, now.UnixMilli())
		if len(snap.Groups) != len(wantGroups) {
			t.Fatalf("round %d: %d groups, want %d", round, len(snap.Groups), len(wantGroups))
		}
		for g, want := range wantGroups {
			if got := snap.Groups[g]; got == nil || *got != want {
				t.Fatalf("round %d: group %s\n got %+v\nwant %+v", round, g, got, want)
			}
			d, ok, err := m.GroupDetail(ctx, g, nil)
			if err != nil || !ok {
				t.Fatalf("round %d: detail of %s: %v %v", round, g, ok, err)
			}
			if !reflect.DeepEqual(d.Partitions, wantParts[g]) || d.Group != want || d.Total != len(wantParts[g]) || !d.At.Equal(now) {
				t.Fatalf("round %d: detail of %s\n got %+v %+v\nwant %+v %+v", round, g, d.Group, d.Partitions, want, wantParts[g])
			}
			// A page is a slice of the whole.
			pd, _, _ := m.GroupDetail(ctx, g, func(total int) (int, int) { return 2, 5 })
			if !reflect.DeepEqual(pd.Partitions, wantParts[g][2:5]) || pd.Total != len(wantParts[g]) {
				t.Fatalf("round %d: page of %s: %+v", round, g, pd.Partitions)
			}
			if mp := snap.MetricPartitions(g); (mp != nil) != (g == "metrics-x") || (mp != nil && !reflect.DeepEqual(mp, wantParts[g])) {
				t.Fatalf("round %d: metric partitions of %s: %+v", round, g, mp)
			}
		}
		if got := tr.Groups(); len(got) != len(wantGroups) {
			t.Fatalf("round %d: tracker holds %v", round, got)
		}
	}
	statuses := map[Status]bool{}
	d, _, _ := m.GroupDetail(ctx, "plain", nil)
	for _, p := range d.Partitions {
		statuses[p.Status] = true
	}
	if len(statuses) < 3 {
		t.Errorf("the scenario covers too few statuses: %v", statuses)
	}
	if _, ok, _ := m.GroupDetail(ctx, "other", nil); ok {
		t.Errorf("a group without offsets has detail")
	}
}

// After a commit the sample has not seen, a group's detail has the new committed offset and
// totals folded from its partitions (consistent in itself); a group whose partitions the
// metrics export keeps the sample's, as the series do.
func TestGroupDetailAfterCommit(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	log := &fakeLog{ends: map[TopicPartition]int64{{"t", 0}: 100, {"t", 1}: 100}, base: now.UnixMilli() - 60_000}
	src := fakeCoord{"g": {"t": {0: 10, 1: 20}}, "metrics-g": {"t": {0: 10}}}
	m := NewMonitor(MonitorConfig{PartitionMetrics: regexp.MustCompile("^metrics-")}, NewTracker(TrackerConfig{}, log), src, log,
		func() time.Time { return now })
	if _, err := m.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	src["g"]["t"][0], src["metrics-g"]["t"][0] = 60, 60
	d, _, _ := m.GroupDetail(ctx, "g", nil)
	if d.Partitions[0].CommittedOffset != 60 || d.Partitions[0].Lag != 40 || d.Group.TotalLag != 40+80 || d.Group.MaxLag != 80 {
		t.Errorf("detail after a commit: %+v %+v", d.Group, d.Partitions)
	}
	if m.Snapshot().Groups["g"].TotalLag != 90+80 {
		t.Errorf("the snapshot changed: %+v", m.Snapshot().Groups["g"])
	}
	md, _, _ := m.GroupDetail(ctx, "metrics-g", nil)
	if md.Partitions[0].CommittedOffset != 10 || md.Group.TotalLag != 90 {
		t.Errorf("metrics group detail: %+v %+v", md.Group, md.Partitions)
	}
}

// Samples, commits and readers of a group's detail run at once (run with -race).
func TestGroupDetailConcurrent(t *testing.T) {
	ctx := context.Background()
	base := time.Unix(1_800_000_000, 0)
	log := &fakeLog{ends: map[TopicPartition]int64{}, base: base.UnixMilli()}
	src := fakeCoord{}
	for _, g := range []string{"g1", "metrics-g2"} {
		src[g] = map[string]map[int32]int64{"t": {}}
		for p := int32(0); p < 50; p++ {
			src[g]["t"][p] = int64(p)
			log.ends[TopicPartition{"t", p}] = 100
		}
	}
	tr := NewTracker(TrackerConfig{Intervals: 3}, log)
	m := NewMonitor(MonitorConfig{PartitionMetrics: regexp.MustCompile("^metrics-")}, tr, src, log, time.Now)
	done := make(chan struct{})
	errs := make(chan error, 3)
	go func() {
		defer func() { errs <- nil }()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			tr.Observe("g1", "t", int32(i%50), int64(i%50), base.Add(time.Duration(i)*time.Millisecond))
		}
	}()
	go func() {
		defer func() { errs <- nil }()
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, g := range []string{"g1", "metrics-g2"} {
				if d, ok, err := m.GroupDetail(ctx, g, nil); err != nil || (ok && d.Total != 50) {
					errs <- fmt.Errorf("detail of %s: %v %+v", g, err, d)
					return
				}
			}
		}
	}()
	for i := 0; i < 50; i++ {
		if _, err := m.Sample(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
