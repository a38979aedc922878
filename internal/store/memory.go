package store

import (
	"context"
	"sort"
	"sync"
)

// Memory is an in-memory Store with the same contract as the Pebble store: leases with a
// fencing epoch (a newer Acquire of a shard fences the older lease's Appends), atomic Appends,
// loads in key order. Nothing is durable beyond the process; tests use it.
type Memory struct {
	mu     sync.Mutex
	cfg    ClusterConfig
	shards []*memShardData
}

type memShardData struct {
	epoch int64
	recs  map[string][]byte
}

// NewMemory is an empty in-memory store of shards shards.
func NewMemory(shards int32) *Memory {
	m := &Memory{cfg: ClusterConfig{Shards: shards}}
	for i := int32(0); i < shards; i++ {
		m.shards = append(m.shards, &memShardData{recs: map[string][]byte{}})
	}
	return m
}

// Config implements Store.
func (m *Memory) Config() ClusterConfig { return m.cfg }

// Close implements Store.
func (m *Memory) Close() error { return nil }

// Acquire implements Store: the shard's epoch grows by one, fencing any earlier lease.
func (m *Memory) Acquire(_ context.Context, shard int32) (Shard, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.shards[shard]
	d.epoch++
	return &memShard{m: m, id: shard, epoch: d.epoch, lost: make(chan struct{})}, nil
}

// Records returns shard's live records in key order (tests).
func (m *Memory) Records(shard int32) []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shards[shard].sorted()
}

func (d *memShardData) sorted() []Record {
	keys := make([]string, 0, len(d.recs))
	for k := range d.recs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = Record{Key: []byte(k), Value: append([]byte(nil), d.recs[k]...)}
	}
	return out
}

type memShard struct {
	m        *Memory
	id       int32
	epoch    int64
	lost     chan struct{}
	lostOnce sync.Once
}

// fenced closes Lost: the lease is gone.
func (s *memShard) fenced() error {
	s.lostOnce.Do(func() { close(s.lost) })
	return ErrFenced
}

func (s *memShard) ID() int32                     { return s.id }
func (s *memShard) Epoch() int64                  { return s.epoch }
func (s *memShard) Lost() <-chan struct{}         { return s.lost }
func (s *memShard) Limits() BatchLimits           { return BatchLimits{Records: 1 << 20, Bytes: 256 << 20} }
func (s *memShard) Release(context.Context) error { return nil }

// Load implements Shard.
func (s *memShard) Load(_ context.Context, fn func(Record) error) error {
	s.m.mu.Lock()
	d := s.m.shards[s.id]
	if d.epoch != s.epoch {
		s.m.mu.Unlock()
		return s.fenced()
	}
	recs := d.sorted()
	s.m.mu.Unlock()
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Append implements Shard.
func (s *memShard) Append(_ context.Context, recs []Record) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	d := s.m.shards[s.id]
	if d.epoch != s.epoch {
		return s.fenced()
	}
	for _, r := range recs {
		if r.Value == nil {
			delete(d.recs, string(r.Key))
		} else {
			d.recs[string(r.Key)] = append([]byte(nil), r.Value...)
		}
	}
	return nil
}

// BeginAppend implements OrderedAppender: the Append happens at once, in call order.
func (s *memShard) BeginAppend(ctx context.Context, recs []Record) (wait func() error) {
	err := s.Append(ctx, recs)
	return func() error { return err }
}
