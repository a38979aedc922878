package lag

import (
	"cmp"
	"encoding/binary"
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
// (a topic's partitions are 0..n-1: no key per partition), a partition number far beyond the
// others in sparse. A dense partition's window is a slot: held in place when it is short (a
// partition committed once or twice: 16 bytes, no allocation and no pointer, where a slice
// header and its allocation cost 40), else in spill. Windows encode their times relative to
// base, the first commit time the topic saw.
type topicWindows struct {
	base   int64
	dense  []slot
	spill  []window // windows of spilled slots; nil entries are free, listed in free
	free   []int32
	sparse map[int32]*window
}

// slotInline is the longest window a slot holds in place.
const slotInline = 15

// slot is a dense partition's window: n bytes in b (n ≤ slotInline; 0: not tracked), or, with
// n == slotSpilled, the index of its window in spill in b's first 4 bytes.
type slot struct {
	b [slotInline]byte
	n uint8
}

const slotSpilled = 0xff

func (s *slot) spillIndex() int32 { return int32(binary.LittleEndian.Uint32(s.b[:4])) }

// denseSlack is how far beyond the dense windows a partition number may be and still extend
// them.
const denseSlack = 1024

// at returns the window of partition, nil when it is not tracked. An inline window aliases the
// slot: decode it before tw changes.
func (tw *topicWindows) at(partition int32) window {
	if partition >= 0 && int(partition) < len(tw.dense) {
		s := &tw.dense[partition]
		if s.n == slotSpilled {
			return tw.spill[s.spillIndex()]
		}
		if s.n == 0 {
			return nil
		}
		return s.b[:s.n]
	}
	if w := tw.sparse[partition]; w != nil {
		return *w
	}
	return nil
}

// add records o in partition's window (window.add), making room for the partition.
func (tw *topicWindows) add(partition int32, o Observation, size int, minDistanceMs int64) {
	if partition < 0 || int(partition) >= len(tw.dense)+denseSlack {
		w := tw.sparse[partition]
		if w == nil {
			if tw.sparse == nil {
				tw.sparse = map[int32]*window{}
			}
			w = new(window)
			tw.sparse[partition] = w
		}
		w.add(o, size, minDistanceMs, tw.base)
		return
	}
	if n := int(partition) + 1 - len(tw.dense); n > 0 {
		tw.dense = append(tw.dense, make([]slot, n)...)
	}
	s := &tw.dense[partition]
	if s.n == slotSpilled {
		i := s.spillIndex()
		w := &tw.spill[i]
		w.add(o, size, minDistanceMs, tw.base)
		if len(*w) <= slotInline { // shrank (a window re-encoded when full)
			s.n = uint8(copy(s.b[:], *w))
			tw.spill[i] = nil
			tw.free = append(tw.free, i)
		}
		return
	}
	var buf [slotInline]byte
	w := window(buf[:copy(buf[:], s.b[:s.n])]).with(o, size, minDistanceMs, tw.base)
	if len(w) <= slotInline {
		s.n = uint8(copy(s.b[:], w))
		return
	}
	c := append(window(nil), w...) // a copy: buf stays on the stack (windows spill rarely)
	var i int32
	if k := len(tw.free); k > 0 {
		i, tw.free = tw.free[k-1], tw.free[:k-1]
		tw.spill[i] = c
	} else {
		i = int32(len(tw.spill))
		tw.spill = append(tw.spill, c)
	}
	binary.LittleEndian.PutUint32(s.b[:4], uint32(i))
	s.n = slotSpilled
}

// drop stops tracking partition.
func (tw *topicWindows) drop(partition int32) {
	if partition >= 0 && int(partition) < len(tw.dense) {
		s := &tw.dense[partition]
		if s.n == slotSpilled {
			i := s.spillIndex()
			tw.spill[i] = nil
			tw.free = append(tw.free, i)
		}
		*s = slot{}
		return
	}
	delete(tw.sparse, partition)
}

// empty reports whether no partition is tracked.
func (tw *topicWindows) empty() bool {
	for i := range tw.dense {
		if tw.dense[i].n != 0 {
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
	s.topic(group, tp.Topic, o.At).add(tp.Partition, o, t.cfg.Intervals, t.cfg.MinDistance.Milliseconds())
	s.mu.Unlock()
}

// topic returns group's windows of topic, making room for them (with base at, the first time).
func (s *trackerShard) topic(group, topic string, at int64) *topicWindows {
	g := s.groups[group]
	if g == nil {
		g = groupWindows{}
		s.groups[group] = g
	}
	tw := g[topic]
	if tw == nil {
		tw = &topicWindows{base: at}
		g[topic] = tw
	}
	return tw
}

// appendWindow appends the window of group's partition tp to out, oldest first.
func (s *trackerShard) appendWindow(group string, tp TopicPartition, out []Observation) []Observation {
	if tw := s.groups[group][tp.Topic]; tw != nil {
		return tw.at(tp.Partition).appendTo(out, tw.base)
	}
	return out
}

// seedWindow appends the window of group's partition tp to out, oldest first, after adding o
// when the partition has no observation yet or its newest observation has another offset (a
// commit the tracker did not see: a transactional commit, or one made before a restart).
func (t *Tracker) seedWindow(group string, tp TopicPartition, o Observation, out []Observation) []Observation {
	s := t.shard(group)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(out)
	out = s.appendWindow(group, tp, out)
	if len(out) > n && out[len(out)-1].Offset == o.Offset {
		return out
	}
	tw := s.topic(group, tp.Topic, o.At)
	tw.add(tp.Partition, o, t.cfg.Intervals, 0)
	return tw.at(tp.Partition).appendTo(out[:n], tw.base)
}

// seededWindow is seedWindow without changing the tracker: the window as seedWindow would
// leave it.
func (t *Tracker) seededWindow(group string, tp TopicPartition, o Observation, out []Observation) []Observation {
	s := t.shard(group)
	s.mu.Lock()
	n := len(out)
	out = s.appendWindow(group, tp, out)
	if len(out) > n && out[len(out)-1].Offset == o.Offset {
		s.mu.Unlock()
		return out
	}
	var c window
	base := o.At
	if tw := s.groups[group][tp.Topic]; tw != nil {
		c, base = append(c, tw.at(tp.Partition)...), tw.base
	}
	s.mu.Unlock()
	c.add(o, t.cfg.Intervals, 0, base)
	return c.appendTo(out[:n], base)
}

// lastObservation returns the newest observation of group's partition tp.
func (t *Tracker) lastObservation(group string, tp TopicPartition) (Observation, bool) {
	s := t.shard(group)
	s.mu.Lock()
	defer s.mu.Unlock()
	if tw := s.groups[group][tp.Topic]; tw != nil {
		return tw.at(tp.Partition).last(tw.base)
	}
	return Observation{}, false
}

// Window returns a copy of a partition's window, oldest first.
func (t *Tracker) Window(group string, tp TopicPartition) []Observation {
	s := t.shard(group)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendWindow(group, tp, nil)
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
			if tw.dense[p].n != 0 && !kept(int32(p)) {
				tw.drop(int32(p))
			}
		}
		for p := range tw.sparse {
			if !kept(p) {
				tw.drop(p)
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
