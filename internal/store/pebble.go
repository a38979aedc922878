package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// Key layout in the shared Pebble DB (the data plane owns the 'd' prefix):
//
//	'c' shard(uint32 BE) recordKey  → record value   group coordinator records
//	'm' "shards"                    → uint32 BE      ClusterConfig.Shards
//	'm' "epoch" shard(uint32 BE)    → int64 BE       lease epoch of a shard
//	'm' "ckpt" 'c' shard(uint32 BE) → int64 BE       the shard's mirror offset up to which
//	                                                 verbatim records are under 'c' (offsetlog.go)
//	'x' shard(uint32 BE) recordKey  → record value   transaction coordinator records
//	'm' "txnshards"                 → uint32 BE      its ClusterConfig.Shards
//	'm' "txnepoch" shard(uint32 BE) → int64 BE       lease epoch of one of its shards
const (
	prefixCoord = 'c'
	prefixMeta  = 'm'
	prefixTxn   = 'x'
)

// Namespace is one coordinator's part of the shared Pebble DB: the prefix of its records and
// the names of its meta keys.
type Namespace struct {
	Prefix    byte
	ShardsKey string // meta key of the shard count
	EpochKey  string // meta key prefix of the shards' lease epochs
	// Setting names the configuration key the shard count comes from (for errors).
	Setting string
}

// The namespaces of muster's coordinators.
var (
	GroupNamespace       = Namespace{Prefix: prefixCoord, ShardsKey: "shards", EpochKey: "epoch", Setting: "offsets.topic.num.partitions"}
	TransactionNamespace = Namespace{Prefix: prefixTxn, ShardsKey: "txnshards", EpochKey: "txnepoch", Setting: "transaction.state.log.num.partitions"}
)

// Pebble is the embedded Store over a Pebble DB shared with the data plane.
type Pebble struct {
	db    *pebble.DB
	cfg   ClusterConfig
	ns    Namespace
	guard *diskguard.Guard // nil: no guard (tests)
	// syncWrites is false only in tests that measure non-durable paths.
	syncWrites bool
	// mirror, when set, adds every Append's records to the same Pebble batch elsewhere.
	mirror Mirror
	// logs is each shard's state of the records kept only in the mirror so far (offsetlog.go);
	// its mutex serializes every lease's writes of the shard.
	logs []*shardLog
	// lazy: the mirror can be read back (MirrorLog), so verbatim records are written to it alone
	// and put under their own keys by checkpoints (offsetlog.go).
	lazy bool
	ckpt checkpointer
}

// Mirror copies the records of every committed Append into the same Pebble batch, so that the
// copy commits atomically with them: muster's __consumer_offsets topic (internal/broker). It
// runs on the shard's committer, once per Append, and must be quick.
type Mirror interface {
	// Stage adds shard's records (a nil value is a tombstone) to b; done is called once b's
	// commit returned, with whether it succeeded.
	Stage(shard int32, recs []Record, b *pebble.Batch) (done func(committed bool))
}

// SetMirror installs m; call it before the first Acquire. A MirrorLog makes the store keep its
// verbatim records in the mirror alone until a checkpoint (offsetlog.go); Close then stops the
// checkpoints.
func (p *Pebble) SetMirror(m Mirror) {
	p.mirror = m
	if _, ok := m.(MirrorLog); ok {
		p.lazy = true
		p.ckpt.start(p)
	}
}

// Scan streams shard's live records in key order without acquiring its lease (a copy of each
// record): for filling a mirror before the coordinator starts.
func (p *Pebble) Scan(ctx context.Context, shard int32, fn func(Record) error) error {
	if shard < 0 || shard >= p.cfg.Shards {
		return fmt.Errorf("store: shard %d out of range [0,%d)", shard, p.cfg.Shards)
	}
	s := &pebbleShard{p: p, id: shard, log: p.logs[shard], prefix: binary.BigEndian.AppendUint32([]byte{p.ns.Prefix}, uint32(shard))}
	return s.Load(ctx, fn)
}

// ErrShardCountChanged is returned by OpenPebble when the configured shard count differs from the
// one the data dir was created with (Kafka cannot change offsets.topic.num.partitions either).
var ErrShardCountChanged = errors.New("store: the configured shard count differs from the data dir's")

// OpenPebble opens the group coordinator store inside db, creating the cluster config on first
// use.
func OpenPebble(db *pebble.DB, shards int32) (*Pebble, error) {
	return OpenPebbleGuarded(db, shards, nil)
}

// OpenPebbleGuarded is OpenPebble with every write going through g (diskguard.Guard.Commit): an
// Append is refused while g refuses its kind (a batch of tombstones only is a GroupDelete,
// anything else a GroupWrite), and a Pebble failure during a commit is an error, not a crash.
func OpenPebbleGuarded(db *pebble.DB, shards int32, g *diskguard.Guard) (*Pebble, error) {
	return OpenPebbleNamespace(db, GroupNamespace, shards, g)
}

// OpenPebbleNamespace opens the store of one coordinator (its Namespace) inside db, creating its
// cluster config on first use, every write going through g (nil: none); a different shard count
// than the data dir's refuses to open (ErrShardCountChanged).
func OpenPebbleNamespace(db *pebble.DB, ns Namespace, shards int32, g *diskguard.Guard) (*Pebble, error) {
	key := append([]byte{prefixMeta}, ns.ShardsKey...)
	v, closer, err := db.Get(key)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := g.Commit(diskguard.Lease, func() error {
			return db.Set(key, binary.BigEndian.AppendUint32(nil, uint32(shards)), pebble.Sync)
		}); err != nil {
			return nil, fmt.Errorf("store: writing cluster config: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("store: reading cluster config: %w", err)
	default:
		if len(v) != 4 {
			closer.Close()
			return nil, fmt.Errorf("store: corrupt cluster config key (%d bytes)", len(v))
		}
		have := int32(binary.BigEndian.Uint32(v))
		closer.Close()
		if have != shards {
			return nil, fmt.Errorf("%w (%s): data dir has %d, configured %d", ErrShardCountChanged, ns.Setting, have, shards)
		}
	}
	p := &Pebble{db: db, cfg: ClusterConfig{Shards: shards}, ns: ns, guard: g, syncWrites: true, logs: make([]*shardLog, shards)}
	for i := range p.logs {
		p.logs[i] = &shardLog{}
	}
	return p, nil
}

// Config implements Store.
func (p *Pebble) Config() ClusterConfig { return p.cfg }

// Close implements Store: it stops the checkpoints after a last one of every shard (so that a
// restart reads no mirror records); the DB itself is closed by its owner.
func (p *Pebble) Close() error { return p.ckpt.stop() }

// Acquire implements Store: bumps and persists the shard's lease epoch. When the store failed
// (diskguard.ErrStoreFailed) the new epoch is kept in memory only: no Append can succeed any
// more, so nothing needs fencing, and the shard still loads to serve reads.
func (p *Pebble) Acquire(ctx context.Context, shard int32) (Shard, error) {
	if shard < 0 || shard >= p.cfg.Shards {
		return nil, fmt.Errorf("store: shard %d out of range [0,%d)", shard, p.cfg.Shards)
	}
	ek := binary.BigEndian.AppendUint32(append([]byte{prefixMeta}, p.ns.EpochKey...), uint32(shard))
	var epoch int64
	v, closer, err := p.db.Get(ek)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if len(v) == 8 {
			epoch = int64(binary.BigEndian.Uint64(v))
		}
		closer.Close()
	}
	epoch++
	if err := p.guard.Commit(diskguard.Lease, func() error {
		return p.db.Set(ek, binary.BigEndian.AppendUint64(nil, uint64(epoch)), pebble.Sync)
	}); err != nil && !errors.Is(err, diskguard.ErrStoreFailed) {
		return nil, err
	}
	return &pebbleShard{p: p, id: shard, epoch: epoch, lost: make(chan struct{}), log: p.logs[shard],
		prefix: binary.BigEndian.AppendUint32([]byte{p.ns.Prefix}, uint32(shard))}, nil
}

type pebbleShard struct {
	p      *Pebble
	id     int32
	epoch  int64
	prefix []byte
	lost   chan struct{}
	log    *shardLog // its mutex: one Append at a time (the contract; the lock makes misuse safe)
}

func (s *pebbleShard) ID() int32                     { return s.id }
func (s *pebbleShard) Epoch() int64                  { return s.epoch }
func (s *pebbleShard) Lost() <-chan struct{}         { return s.lost }
func (s *pebbleShard) Limits() BatchLimits           { return BatchLimits{Records: 1 << 20, Bytes: 256 << 20} }
func (s *pebbleShard) Release(context.Context) error { return nil }

// Load implements Shard: LoadBorrowed with each record copied (one allocation per record).
func (s *pebbleShard) Load(ctx context.Context, fn func(Record) error) error {
	return s.LoadBorrowed(ctx, func(r Record) error {
		buf := make([]byte, len(r.Key)+len(r.Value))
		n := copy(buf, r.Key)
		copy(buf[n:], r.Value)
		rec := Record{Key: buf[:n:n]}
		if len(r.Value) > 0 { // an empty stored value reads as nil, as before
			rec.Value = buf[n:]
		}
		return fn(rec)
	})
}

// LoadBorrowed implements BorrowingLoader: the records point into the iterator's buffers,
// valid until fn returns (Pebble's keys and values are valid until the iterator moves).
func (s *pebbleShard) LoadBorrowed(ctx context.Context, fn func(Record) error) error {
	if s.p.lazy {
		return s.loadMerged(ctx, fn)
	}
	return s.scanKeys(ctx, fn)
}

// scanKeys streams the records under the shard's own keys, borrowed.
func (s *pebbleShard) scanKeys(ctx context.Context, fn func(Record) error) error {
	upper := append([]byte(nil), s.prefix...)
	upper = binary.BigEndian.AppendUint32(upper[:1], uint32(s.id)+1)
	it, err := s.p.db.NewIter(&pebble.IterOptions{LowerBound: s.prefix, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := it.Key()
		if !bytes.HasPrefix(k, s.prefix) {
			break
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("store: shard %d: reading value: %w", s.id, err)
		}
		rec := Record{Key: k[len(s.prefix):len(k):len(k)]}
		if len(v) > 0 {
			rec.Value = v[:len(v):len(v)]
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return it.Error()
}

// Append implements Shard: one Pebble batch committed with Sync.
func (s *pebbleShard) Append(ctx context.Context, recs []Record) error {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	b, kind, done, err := s.build(ctx, recs)
	if err != nil {
		return err
	}
	defer b.Close()
	opts := pebble.Sync
	if !s.p.syncWrites {
		opts = pebble.NoSync
	}
	err = s.p.guard.Commit(kind, func() error { return b.Commit(opts) })
	done(err == nil)
	if err == nil {
		s.applied(recs)
	}
	return err
}

// BeginAppend implements OrderedAppender: the batch is applied (DB.ApplyNoSyncWait: it takes
// its sequence numbers and its place in the write-ahead log, in the order of the calls) and
// wait waits for the WAL sync that covers it (Batch.SyncWait). A failed sync is sticky in
// Pebble (every later sync fails too), so a later batch is never durable before this one; the
// guard then takes the store as failed, as it does for Pebble's fatal commit error.
func (s *pebbleShard) BeginAppend(ctx context.Context, recs []Record) (wait func() error) {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	b, kind, done, err := s.build(ctx, recs)
	if err != nil {
		return func() error { return err }
	}
	if !s.p.syncWrites {
		err := s.p.guard.Commit(kind, func() error { return b.Commit(pebble.NoSync) })
		done(err == nil)
		_ = b.Close()
		if err == nil {
			s.applied(recs)
		}
		return func() error { return err }
	}
	if err := s.p.guard.Commit(kind, func() error { return s.p.db.ApplyNoSyncWait(b, pebble.Sync) }); err != nil {
		done(false)
		if errors.Is(err, diskguard.ErrRefused) {
			_ = b.Close() // never reached Pebble
		} // else the commit pipeline failed with the batch in it: it is not closed (nor reused)
		return func() error { return err }
	}
	// Applied: in the memtable and in the WAL's order. The mirror's copy stands for the
	// verbatim records from now on (a failed sync fails the store: nothing later is durable).
	s.applied(recs)
	return func() error {
		err := b.SyncWait()
		if err != nil {
			s.p.guard.Fail(err)
			err = &diskguard.CommitError{Reason: err.Error()}
		}
		done(err == nil)
		_ = b.Close()
		return err
	}
}

// build puts recs into a new Pebble batch under the shard's prefix, with the mirror's copy;
// kind is what the guard judges (a batch of tombstones only frees space), done reports the
// commit's outcome to the mirror. With a MirrorLog the verbatim records go to the mirror alone
// (offsetlog.go). Called with s.log.mu held.
func (s *pebbleShard) build(ctx context.Context, recs []Record) (b *pebble.Batch, kind diskguard.Write, done func(bool), err error) {
	var ml MirrorLog
	if s.p.lazy {
		if err := s.log.ready(ctx, s); err != nil {
			return nil, 0, nil, err
		}
		ml = s.p.mirror.(MirrorLog)
	}
	b = s.p.db.NewBatch()
	key := make([]byte, 0, 64)
	kind = diskguard.GroupDelete // tombstones only: taken while space is short
	for _, r := range recs {
		if r.Value != nil {
			kind = diskguard.GroupWrite
		}
		if ml != nil && ml.Verbatim(r.Key) {
			continue
		}
		key = append(key[:0], s.prefix...)
		key = append(key, r.Key...)
		if r.Value == nil {
			_ = b.Delete(key, nil) // errors only for a closed or indexed-batch misuse
		} else {
			_ = b.Set(key, r.Value, nil)
		}
	}
	if ml != nil && s.log.needMarker {
		// The first write of a shard whose data dir has no checkpoint yet: everything in the
		// mirror so far is under its own keys; records from here on are in the mirror.
		_ = b.Set(s.p.ckptKey(s.id), binary.BigEndian.AppendUint64(nil, uint64(ml.End(s.id))), nil)
	}
	done = func(bool) {}
	if m := s.p.mirror; m != nil {
		done = m.Stage(s.id, recs, b)
	}
	return b, kind, done, nil
}
