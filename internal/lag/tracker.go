package lag

import (
	"cmp"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// LogEnds reads a partition's high watermark (the log end a consumer can reach).
type LogEnds interface {
	Offsets(topic string, partition int32) (logStart, highWatermark int64, ok bool)
}

// TrackerConfig sizes the windows.
type TrackerConfig struct {
	// Intervals is the number of commits each partition's window keeps (Burrow's intervals;
	// default 10), and the number of log end samples kept per partition.
	Intervals int
	// MinDistance: a commit closer than this to the partition's newest one replaces it
	// (Burrow's min-distance; default 1 s).
	MinDistance time.Duration
}

func (c *TrackerConfig) fill() {
	if c.Intervals <= 0 {
		c.Intervals = 10
	}
	if c.MinDistance < 0 {
		c.MinDistance = 0
	}
}

// Tracker keeps the sliding window of commits of every partition of every group, and recent log
// end samples of the partitions they commit. It is safe for concurrent use; Observe, on the
// commit path, takes one of several locks (by group) and allocates only for a new partition.
type Tracker struct {
	cfg    TrackerConfig
	log    LogEnds
	seed   maphash.Seed
	shards [32]trackerShard

	endsMu sync.Mutex
	ends   map[TopicPartition]*ring
}

type trackerShard struct {
	mu     sync.Mutex
	groups map[string]groupWindows
}

// groupWindows are a group's windows by topic.
type groupWindows map[string]*topicWindows

// topicWindows are a group's windows of one topic's partitions: by partition number in dense
// (a topic's partitions are 0..n-1: no key or pointer per partition), a partition number far
// beyond the others in sparse. A nil window is a partition not tracked.
type topicWindows struct {
	dense  []window
	sparse map[int32]*window
}

// denseSlack is how far beyond the dense windows a partition number may be and still extend
// them.
const denseSlack = 1024

// at returns the window of partition, nil when it is not tracked.
func (tw *topicWindows) at(partition int32) window {
	if partition >= 0 && int(partition) < len(tw.dense) {
		return tw.dense[partition]
	}
	if w := tw.sparse[partition]; w != nil {
		return *w
	}
	return nil
}

// mutable returns partition's window for writing, making room for it.
func (tw *topicWindows) mutable(partition int32) *window {
	if partition >= 0 && int(partition) < len(tw.dense)+denseSlack {
		if n := int(partition) + 1 - len(tw.dense); n > 0 {
			tw.dense = append(tw.dense, make([]window, n)...)
		}
		return &tw.dense[partition]
	}
	w := tw.sparse[partition]
	if w == nil {
		if tw.sparse == nil {
			tw.sparse = map[int32]*window{}
		}
		w = new(window)
		tw.sparse[partition] = w
	}
	return w
}

// empty reports whether no partition is tracked.
func (tw *topicWindows) empty() bool {
	for _, w := range tw.dense {
		if w != nil {
			return false
		}
	}
	return len(tw.sparse) == 0
}

// NewTracker returns an empty tracker reading log ends from log (nil: lags are unknown).
func NewTracker(cfg TrackerConfig, log LogEnds) *Tracker {
	cfg.fill()
	t := &Tracker{cfg: cfg, log: log, seed: maphash.MakeSeed(), ends: map[TopicPartition]*ring{}}
	for i := range t.shards {
		t.shards[i].groups = map[string]groupWindows{}
	}
	return t
}

func (t *Tracker) shard(group string) *trackerShard {
	return &t.shards[maphash.String(t.seed, group)%uint64(len(t.shards))]
}

// Observe records a committed offset of a group's partition at time at, with the lag against
// the partition's log end at that moment.
func (t *Tracker) Observe(group, topic string, partition int32, offset int64, at time.Time) {
	lag := int64(-1)
	if t.log != nil {
		if _, hw, ok := t.log.Offsets(topic, partition); ok {
			lag = max(hw-offset, 0)
		}
	}
	t.add(group, TopicPartition{topic, partition}, Observation{Offset: offset, Lag: lag, At: at.UnixMilli()})
}

func (t *Tracker) add(group string, tp TopicPartition, o Observation) {
	s := t.shard(group)
	s.mu.Lock()
	s.mutable(group, tp).add(o, t.cfg.Intervals, t.cfg.MinDistance.Milliseconds())
	s.mu.Unlock()
}

// mutable returns the window of group's partition tp for writing, making room for it.
func (s *trackerShard) mutable(group string, tp TopicPartition) *window {
	g := s.groups[group]
	if g == nil {
		g = groupWindows{}
		s.groups[group] = g
	}
	tw := g[tp.Topic]
	if tw == nil {
		tw = &topicWindows{}
		g[tp.Topic] = tw
	}
	return tw.mutable(tp.Partition)
}

// window returns the window of group's partition tp, nil when it is not tracked.
func (s *trackerShard) window(group string, tp TopicPartition) window {
	if tw := s.groups[group][tp.Topic]; tw != nil {
		return tw.at(tp.Partition)
	}
	return nil
}

// seedWindow appends the window of group's partition tp to out, oldest first, after adding o
// when the partition has no observation yet or its newest observation has another offset (a
// commit the tracker did not see: a transactional commit, or one made before a restart).
func (t *Tracker) seedWindow(group string, tp TopicPartition, o Observation, out []Observation) []Observation {
	s := t.shard(group)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(out)
	out = s.window(group, tp).appendTo(out)
	if len(out) > n && out[len(out)-1].Offset == o.Offset {
		return out
	}
	w := s.mutable(group, tp)
	w.add(o, t.cfg.Intervals, 0)
	return w.appendTo(out[:n])
}

// seededWindow is seedWindow without changing the tracker: the window as seedWindow would
// leave it.
func (t *Tracker) seededWindow(group string, tp TopicPartition, o Observation, out []Observation) []Observation {
	s := t.shard(group)
	s.mu.Lock()
	w := s.window(group, tp)
	n := len(out)
	out = w.appendTo(out)
	if len(out) > n && out[len(out)-1].Offset == o.Offset {
		s.mu.Unlock()
		return out
	}
	c := append(window(nil), w...)
	s.mu.Unlock()
	c.add(o, t.cfg.Intervals, 0)
	return c.appendTo(out[:n])
}

// Window returns a copy of a partition's window, oldest first.
func (t *Tracker) Window(group string, tp TopicPartition) []Observation {
	s := t.shard(group)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.window(group, tp).appendTo(nil)
}

// retainSorted drops the windows of group's partitions not in keep (offsets deleted or
// expired), which is sorted by topic and partition, and, when keep is empty, the group.
func (t *Tracker) retainSorted(group string, keep []Committed) {
	s := t.shard(group)
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[group]
	for topic, tw := range g {
		lo, _ := slices.BinarySearchFunc(keep, topic, func(c Committed, topic string) int { return strings.Compare(c.Topic, topic) })
		hi := lo
		for hi < len(keep) && keep[hi].Topic == topic {
			hi++
		}
		run := keep[lo:hi]
		kept := func(p int32) bool {
			_, ok := slices.BinarySearchFunc(run, p, func(c Committed, p int32) int { return cmp.Compare(c.Partition, p) })
			return ok
		}
		for p := range tw.dense {
			if tw.dense[p] != nil && !kept(int32(p)) {
				tw.dense[p] = nil
			}
		}
		for p := range tw.sparse {
			if !kept(p) {
				delete(tw.sparse, p)
			}
		}
		if tw.empty() {
			delete(g, topic)
		}
	}
	if len(g) == 0 {
		delete(s.groups, group)
	}
}

// Groups lists the tracked groups.
func (t *Tracker) Groups() []string {
	var out []string
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for g := range s.groups {
			out = append(out, g)
		}
		s.mu.Unlock()
	}
	return out
}

// Forget drops a group's windows.
func (t *Tracker) Forget(group string) {
	s := t.shard(group)
	s.mu.Lock()
	delete(s.groups, group)
	s.mu.Unlock()
}

// addEnd records a sample of a partition's log end.
func (t *Tracker) addEnd(tp TopicPartition, end int64) {
	t.endsMu.Lock()
	defer t.endsMu.Unlock()
	r := t.ends[tp]
	if r == nil {
		r = &ring{}
		t.ends[tp] = r
	}
	r.add(end, t.cfg.Intervals)
}

// retainEnds drops the log end samples of the partitions keep does not keep.
func (t *Tracker) retainEnds(keep func(TopicPartition) bool) {
	t.endsMu.Lock()
	defer t.endsMu.Unlock()
	for tp := range t.ends {
		if !keep(tp) {
			delete(t.ends, tp)
		}
	}
}

// recentEnds returns a partition's recent log end samples.
func (t *Tracker) recentEnds(tp TopicPartition, out []int64) []int64 {
	t.endsMu.Lock()
	defer t.endsMu.Unlock()
	if r := t.ends[tp]; r != nil {
		return r.appendTo(out)
	}
	return out
}
