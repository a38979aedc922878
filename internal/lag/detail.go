package lag

import (
	"context"
	"slices"
	"time"
)

// topicEnds are the log ends one sample read of a topic's partitions: by partition number in
// dense (endUnread for a partition not read), a partition number far beyond the others in
// sparse. -1 is a partition whose log end is unknown (no such topic or partition).
type topicEnds struct {
	dense  []int64
	sparse map[int32]int64
}

const endUnread = -2

func (te *topicEnds) get(partition int32) int64 {
	if partition >= 0 && int(partition) < len(te.dense) {
		return te.dense[partition]
	}
	if e, ok := te.sparse[partition]; ok {
		return e
	}
	return endUnread
}

func (te *topicEnds) set(partition int32, end int64) {
	if partition >= 0 && int(partition) < len(te.dense)+denseSlack {
		for int(partition) >= len(te.dense) {
			te.dense = append(te.dense, endUnread)
		}
		te.dense[partition] = end
		return
	}
	if te.sparse == nil {
		te.sparse = map[int32]int64{}
	}
	te.sparse[partition] = end
}

// end is the log end the sample read for tp (endUnread when it read none).
func (s *Snapshot) end(tp TopicPartition) int64 {
	if te := s.ends[tp.Topic]; te != nil {
		return te.get(tp.Partition)
	}
	return endUnread
}

// evaluator evaluates partitions against one snapshot: the sampler (sampling), which reads
// the log ends into the snapshot, records them in the tracker, seeds the windows with commits
// the tracker did not see and caches batch timestamps; or a reader asking for a group's
// detail, which changes nothing.
type evaluator struct {
	m        *Monitor
	snap     *Snapshot
	nowMs    int64
	sampling bool

	topic  string // the topic of ends (offsets come sorted by topic)
	ends   *topicEnds
	win    []Observation
	recent []int64
}

// end returns tp's log end (-1 when unknown): the one the snapshot holds; when it holds none,
// the sampler reads it into the snapshot (once per partition and sample) and a reader reads
// the current one.
func (e *evaluator) end(tp TopicPartition) int64 {
	if e.ends == nil || e.topic != tp.Topic {
		e.topic, e.ends = tp.Topic, e.snap.ends[tp.Topic]
		if e.ends == nil && e.sampling {
			e.ends = &topicEnds{}
			e.snap.ends[tp.Topic] = e.ends
		}
	}
	if e.ends != nil {
		if end := e.ends.get(tp.Partition); end != endUnread {
			return end
		}
	}
	end := int64(-1)
	if _, hw, ok := e.m.log.Offsets(tp.Topic, tp.Partition); ok {
		end = hw
	}
	if e.sampling {
		e.ends.set(tp.Partition, end)
		if end >= 0 {
			e.m.tracker.addEnd(tp, end)
		}
	}
	return end
}

// partition evaluates one committed offset of group (Burrow's partition evaluation).
func (e *evaluator) partition(group string, c Committed) PartitionLag {
	tp := TopicPartition{c.Topic, c.Partition}
	pl := PartitionLag{Topic: c.Topic, Partition: c.Partition, CommittedOffset: c.Offset,
		LogEndOffset: e.end(tp), Lag: -1, TimeLagMs: -1, Status: StatusOK}
	if pl.LogEndOffset >= 0 {
		pl.Lag = max(pl.LogEndOffset-c.Offset, 0)
	}
	o := Observation{Offset: c.Offset, Lag: pl.Lag, At: e.nowMs}
	if e.sampling {
		e.win = e.m.tracker.seedWindow(group, tp, o, e.win[:0])
	} else {
		e.win = e.m.tracker.seededWindow(group, tp, o, e.win[:0])
	}
	pl.Commits = len(e.win)
	switch {
	case pl.Lag == 0:
		pl.TimeLagMs = 0
	case pl.Lag > 0:
		var ts int64
		var ok bool
		if e.sampling {
			ts, ok = e.m.batchTimestamp(tp, c.Offset)
		} else {
			ts, ok = e.m.log.BatchTimestamp(tp.Topic, tp.Partition, c.Offset)
		}
		if ok {
			pl.TimeLagMs = max(e.nowMs-ts, 0)
		}
	}
	if pl.Lag >= 0 {
		e.recent = e.recent[:0]
		if pl.Lag > 0 { // only a lagging partition's status reads the log end samples
			e.recent = e.m.tracker.recentEnds(tp, e.recent)
		}
		pl.Status = Evaluate(e.win, e.recent, pl.Lag, e.nowMs)
	}
	return pl
}

// GroupDetail is one group of the latest sample with (a page of) its partitions.
type GroupDetail struct {
	// At is when the sample was taken.
	At time.Time
	// Group is the group's status and totals over the partitions Total counts.
	Group GroupLag
	// Total is the number of partitions with committed offsets.
	Total int
	// Partitions are the partitions page selected, in topic and partition order.
	Partitions []PartitionLag
}

// GroupDetail evaluates a group's partitions as the latest sample did: against the sample's
// log ends, at its time, over each partition's commit window (with the committed offset as its
// newest commit when the window does not hold it yet, as the sampler seeds it). A group whose
// per-partition series are exported (MonitorConfig.PartitionMetrics) answers the partitions
// the sample kept, so the API and the series agree; any other group's committed offsets are read
// now (Source.Committed) and its status and totals folded from them, so the answer is
// consistent in itself, and equal to the sample's when the group committed nothing since (then
// only the page's partitions are evaluated: the sample's totals hold). page,
// when set, selects the partitions [lo, hi) of total to return (nil: all). ok is false when the
// latest sample has no such group (no committed offsets, or the group is newer).
func (m *Monitor) GroupDetail(ctx context.Context, group string, page func(total int) (lo, hi int)) (d *GroupDetail, ok bool, err error) {
	snap := m.Snapshot()
	gl, ok := snap.Groups[group]
	if !ok {
		return nil, false, nil
	}
	d = &GroupDetail{At: snap.At, Group: *gl}
	parts, kept := snap.metricParts[group]
	if !kept {
		var cs []Committed
		err = m.src.Committed(ctx, []string{group}, func(g string, got []Committed) {
			if g == group {
				cs = append(cs[:0], got...)
			}
		})
		if err != nil {
			return nil, true, err
		}
		sortCommitted(cs)
		e := &evaluator{m: m, snap: snap, nowMs: snap.At.UnixMilli()}
		if m.unchangedSince(snap, group, gl, cs) {
			// The sample's totals hold: evaluate the page only.
			d.Total = len(cs)
			lo, hi := pageBounds(page, len(cs))
			d.Partitions = make([]PartitionLag, 0, hi-lo)
			for _, c := range cs[lo:hi] {
				d.Partitions = append(d.Partitions, e.partition(group, c))
			}
			return d, true, nil
		}
		d.Group = GroupLag{Group: gl.Group, Type: gl.Type, State: gl.State, Status: StatusOK, MaxLagPartition: -1}
		parts = make([]PartitionLag, 0, len(cs))
		full := 0
		for _, c := range cs {
			pl := e.partition(group, c)
			if pl.Commits >= m.tracker.cfg.Intervals {
				full++
			}
			d.Group.add(&pl)
			parts = append(parts, pl)
		}
		if len(cs) > 0 {
			d.Group.Complete = float64(full) / float64(len(cs))
		}
	}
	d.Total = len(parts)
	lo, hi := pageBounds(page, len(parts))
	d.Partitions = slices.Clone(parts[lo:hi])
	return d, true, nil
}

// pageBounds is page's [lo, hi) of total, clamped (all without page).
func pageBounds(page func(total int) (lo, hi int), total int) (int, int) {
	if page == nil {
		return 0, total
	}
	lo, hi := page(total)
	lo, hi = min(max(lo, 0), total), min(max(hi, 0), total)
	return lo, max(hi, lo)
}

// unchangedSince reports whether group's committed offsets cs are those snap evaluated into
// gl: as many partitions, each with its window's newest commit at its committed offset and no
// later than the sample (which seeded it so). A commit since the sample, a partition added or
// deleted, or one the tracker did not see, makes it false.
func (m *Monitor) unchangedSince(snap *Snapshot, group string, gl *GroupLag, cs []Committed) bool {
	if len(cs) != gl.Partitions {
		return false
	}
	at := snap.At.UnixMilli()
	for _, c := range cs {
		o, ok := m.tracker.lastObservation(group, TopicPartition{c.Topic, c.Partition})
		if !ok || o.Offset != c.Offset || o.At > at {
			return false
		}
	}
	return true
}
