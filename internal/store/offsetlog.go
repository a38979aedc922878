package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// The offset log. Most coordinator records are committed offsets, and most commits overwrite
// an offset committed moments before. Every Append also reaches the shard's partition of
// __consumer_offsets (the Mirror), which keeps the OffsetCommit and GroupMetadata records
// verbatim. With a mirror that can be read back (MirrorLog), an Append writes those records to
// the mirror alone: one log batch (one Pebble key) per Append instead of one Pebble key per
// offset, Kafka's own layout, where the log is the store. They reach their own keys ('c' shard
// key) in checkpoints: every ckptInterval (or once ckptMaxDirty keys wait), the latest value of
// every such key written since the last checkpoint is put under its key, together with the
// mirror offset the checkpoint covers ('m' "ckpt" shard), in one Pebble batch. A key committed
// a hundred times between two checkpoints is written once.
//
// A load reads the checkpointed keys merged, in key order, with the verbatim records the mirror
// holds from the checkpoint's offset on (the latest per key wins; a tombstone hides the key), so
// it streams exactly what the eager layout would hold: the latest record of every key, in key
// order. Nothing is lost in a crash: a record is durable with its Append's log batch, and a
// checkpoint is atomic with its offset, so a checkpoint lost in a crash leaves the older offset
// and a longer mirror tail to read.
//
// The mirror must keep every record from the checkpoint's offset on: __consumer_offsets is
// compacted (the latest record of a key stays) and drops a tombstone only delete.retention.ms
// (a day) after the cleaning that first reached it, by which time a checkpoint has long put it
// under its key. A data dir without a checkpoint key (written before the offset log, or new)
// has every record under its own key: the first lazy write of a shard records the mirror's
// offset as its checkpoint, in the same Pebble batch.

// MirrorLog is a Mirror the store can read back.
type MirrorLog interface {
	Mirror
	// Verbatim reports whether the mirror keeps a record with this key exactly as Stage got
	// it, key and value (a nil value as a tombstone), so that its copy can stand for the
	// store's own until a checkpoint.
	Verbatim(key []byte) bool
	// End is the mirror offset of the shard's next Stage.
	End(shard int32) int64
	// Read calls fn with every record of shard's mirror from offset from on, in order (a nil
	// value is a tombstone); the bytes are valid only during the call.
	Read(ctx context.Context, shard int32, from int64, fn func(key, value []byte) error) error
}

const (
	ckptInterval = 2 * time.Second
	// ckptMaxDirty bounds a shard's records waiting for a checkpoint (their keys, and the
	// requests' record bytes they keep alive): a workload committing many distinct offsets is
	// checkpointed this often; one overwriting the same offsets is deduplicated over the whole
	// interval.
	ckptMaxDirty = 1024
	// ckptReuse is the largest set a checkpoint keeps for reuse (a larger one is dropped, so a
	// burst does not pin its maps).
	ckptReuse = 256
)

// ckptKey is the meta key of a shard's checkpoint: 'm' "ckpt", the namespace's prefix, shard.
func (p *Pebble) ckptKey(shard int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixMeta, 'c', 'k', 'p', 't', p.ns.Prefix}, uint32(shard))
}

// shardLog is the store's state of one shard's verbatim records that are in the mirror but not
// yet under their own keys. It outlives leases: a shard reloaded after a failed Append goes on
// with it.
type shardLog struct {
	// mu serializes the shard's Appends, loads and the start and end of its checkpoints.
	mu sync.Mutex
	// loaded: dirty holds every verbatim record of the mirror from the checkpoint on.
	loaded bool
	// needMarker: the data dir has no checkpoint for the shard yet; the next write records one.
	needMarker bool
	// dirty maps a key to its latest value (nil: a tombstone) since the last checkpoint.
	dirty *recSet
	// since is when dirty got its first entry.
	since time.Time
	// inflight is what a running checkpoint writes (nil when none runs): still to be merged by
	// a load, below dirty.
	inflight *recSet
	// spare is the set a finished checkpoint left, cleared, for the next swap.
	spare *recSet
	// covered is the mirror offset below which every record is under its own key (0 until the
	// shard's log state is loaded): the log cleaner compacts only below it.
	covered atomic.Int64
}

// ready loads the mirror's records after the checkpoint into dirty, once per process (mu held).
func (l *shardLog) ready(ctx context.Context, s *pebbleShard) error {
	if l.loaded {
		return nil
	}
	ml := s.p.mirror.(MirrorLog)
	v, closer, err := s.p.db.Get(s.p.ckptKey(s.id))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		l.dirty, l.needMarker, l.loaded = newRecSet(), true, true
		l.covered.Store(ml.End(s.id))
		return nil
	case err != nil:
		return err
	}
	if len(v) != 8 {
		closer.Close()
		return errors.New("store: corrupt checkpoint key")
	}
	from := int64(binary.BigEndian.Uint64(v))
	closer.Close()
	dirty := newRecSet()
	if err := ml.Read(ctx, s.id, from, func(k, v []byte) error {
		if ml.Verbatim(k) {
			dirty.put(k, bytes.Clone(v))
		}
		return nil
	}); err != nil {
		return err
	}
	l.dirty, l.loaded = dirty, true
	l.covered.Store(from)
	if dirty.len() > 0 {
		l.since = time.Now()
	}
	return nil
}

// applied records the verbatim records of an applied Append as dirty (s.log.mu held).
func (s *pebbleShard) applied(recs []Record) {
	if !s.p.lazy {
		return
	}
	l := s.log
	l.needMarker = false // the batch carried the marker
	ml := s.p.mirror.(MirrorLog)
	for _, r := range recs {
		if ml.Verbatim(r.Key) {
			if l.dirty.len() == 0 {
				l.since = time.Now()
			}
			l.dirty.put(r.Key, r.Value)
		}
	}
	if l.dirty.len() >= ckptMaxDirty {
		s.p.ckpt.wake()
	}
}

// loadMerged is LoadBorrowed with a MirrorLog: the shard's keys merged with the records after
// the checkpoint, in key order.
func (s *pebbleShard) loadMerged(ctx context.Context, fn func(Record) error) error {
	l := s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.ready(ctx, s); err != nil {
		return err
	}
	keys := append(make([]string, 0, l.dirty.len()+l.inflight.len()), l.dirty.keys...)
	if l.inflight != nil {
		for _, k := range l.inflight.keys {
			if _, ok := l.dirty.get(k); !ok {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	i := 0
	emit := func() error {
		k := keys[i]
		i++
		v, ok := l.dirty.get(k)
		if !ok {
			v, _ = l.inflight.get(k)
		}
		if v == nil {
			return nil // a tombstone hides the key
		}
		return fn(Record{Key: []byte(k), Value: v})
	}
	err := s.scanKeys(ctx, func(r Record) error {
		for i < len(keys) && keys[i] < string(r.Key) {
			if err := emit(); err != nil {
				return err
			}
		}
		if i < len(keys) && keys[i] == string(r.Key) {
			return emit() // the newer record
		}
		return fn(r)
	})
	for err == nil && i < len(keys) {
		err = emit()
	}
	return err
}

// CheckpointOffset is the offset of shard's mirror below which every record is under its own
// key (0 before the shard loaded): what the mirror may compact (data.Plane's
// SetGroupMetadataCleanFloor).
func (p *Pebble) CheckpointOffset(shard int32) int64 {
	if shard < 0 || int(shard) >= len(p.logs) {
		return 0
	}
	return p.logs[shard].covered.Load()
}

// checkpointer writes the shards' checkpoints in the background.
type checkpointer struct {
	p       *Pebble
	started bool
	poke    chan struct{}
	quit    chan struct{}
	done    chan struct{}
}

func (c *checkpointer) start(p *Pebble) {
	if c.started {
		return
	}
	c.p, c.started = p, true
	c.poke, c.quit, c.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go c.run()
}

func (c *checkpointer) wake() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(ckptInterval / 4)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
		case <-c.poke:
		}
		for i := range c.p.logs {
			_ = c.p.checkpoint(int32(i), false)
		}
	}
}

// stop ends the background checkpoints and writes a last one of every shard.
func (c *checkpointer) stop() error {
	if !c.started {
		return nil
	}
	c.started = false
	close(c.quit)
	<-c.done
	var first error
	for i := range c.p.logs {
		if err := c.p.checkpoint(int32(i), true); err != nil && first == nil &&
			!errors.Is(err, diskguard.ErrRefused) && !errors.Is(err, diskguard.ErrStoreFailed) {
			first = err
		}
	}
	return first
}

// checkpoint puts shard's dirty records under their own keys with the mirror offset they
// cover, when due (or always). The shard's Appends go on meanwhile: the records move to
// inflight, where a load still finds them, and return to dirty if the write fails.
func (p *Pebble) checkpoint(shard int32, always bool) error {
	l := p.logs[shard]
	l.mu.Lock()
	if !l.loaded || l.dirty.len() == 0 || l.inflight != nil ||
		!always && l.dirty.len() < ckptMaxDirty && time.Since(l.since) < ckptInterval {
		l.mu.Unlock()
		return nil
	}
	snap := l.dirty
	next := l.spare
	if next == nil {
		next = newRecSet()
	}
	l.dirty, l.inflight, l.spare, l.since = next, snap, nil, time.Time{}
	end := p.mirror.(MirrorLog).End(shard)
	l.mu.Unlock()

	b := p.db.NewBatch()
	prefix := binary.BigEndian.AppendUint32([]byte{p.ns.Prefix}, uint32(shard))
	key := make([]byte, 0, 64)
	kind := diskguard.GroupDelete
	for i, k := range snap.keys {
		v := snap.vals[i]
		key = append(append(key[:0], prefix...), k...)
		if v == nil {
			_ = b.Delete(key, nil)
		} else {
			kind = diskguard.GroupWrite
			_ = b.Set(key, v, nil)
		}
	}
	_ = b.Set(p.ckptKey(shard), binary.BigEndian.AppendUint64(nil, uint64(end)), nil)
	// No sync of its own: the WAL keeps batches in order, so by the time the checkpoint is
	// durable every Append it covers is; a checkpoint lost in a crash leaves the older one.
	err := p.guard.Commit(kind, func() error { return b.Commit(pebble.NoSync) })
	_ = b.Close()

	l.mu.Lock()
	if err != nil {
		for i, k := range snap.keys {
			if _, ok := l.dirty.get(k); !ok {
				l.dirty.put([]byte(k), snap.vals[i])
			}
		}
		if l.dirty.len() > 0 && l.since.IsZero() {
			l.since = time.Now()
		}
	} else {
		l.needMarker = false
		l.covered.Store(end)
	}
	l.inflight = nil
	if err == nil && len(snap.keys) <= ckptReuse {
		snap.reset()
		l.spare = snap
	}
	l.mu.Unlock()
	return err
}

// recSet is the latest value per key of a shard's verbatim records (nil: a tombstone), in the
// order keys were first put: a put of a key already there allocates nothing.
type recSet struct {
	idx  map[string]int32
	keys []string
	vals [][]byte
}

func newRecSet() *recSet { return &recSet{idx: map[string]int32{}} }

func (r *recSet) len() int {
	if r == nil {
		return 0
	}
	return len(r.keys)
}

func (r *recSet) put(k, v []byte) {
	if i, ok := r.idx[string(k)]; ok {
		r.vals[i] = v
		return
	}
	ks := string(k)
	r.idx[ks] = int32(len(r.keys))
	r.keys = append(r.keys, ks)
	r.vals = append(r.vals, v)
}

func (r *recSet) get(k string) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	i, ok := r.idx[k]
	if !ok {
		return nil, false
	}
	return r.vals[i], true
}

func (r *recSet) reset() {
	clear(r.idx)
	clear(r.vals)
	r.keys, r.vals = r.keys[:0], r.vals[:0]
}
