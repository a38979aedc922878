package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/muster-io/muster/internal/store"
)

// Coordinator is the store of one coordinator (kind "group" or "txn") in the shared database:
// a store.Store whose Acquire takes a shard's lease in the lease table and whose shards append
// only while their epoch is current.
type Coordinator struct {
	db     *DB
	kind   string
	me     Me
	shards int32
	// onFenced, when set, is told when an Append or a Load found the lease taken over.
	onFenced func(shard int32, epoch int64)
}

// ErrShardCountChanged means the configured shard count differs from the cluster's.
var ErrShardCountChanged = errors.New("cluster store: the configured shard count differs from the cluster's")

// OpenCoordinator opens the store of coordinator kind with shards shards for node me. The first
// node fixes the shard count; a node configured with another count refuses to start.
func (db *DB) OpenCoordinator(ctx context.Context, kind string, shards int32, me Me, setting string) (*Coordinator, error) {
	v, err := db.ClusterValue(ctx, kind+".shards", strconv.Itoa(int(shards)))
	if err != nil {
		return nil, fmt.Errorf("cluster store: %w", err)
	}
	if v != strconv.Itoa(int(shards)) {
		return nil, fmt.Errorf("%w (%s): the cluster has %s, configured %d", ErrShardCountChanged, setting, v, shards)
	}
	if _, err := db.exec(ctx, "open", `INSERT INTO muster_leases (kind, shard, epoch)
SELECT $1, g, 0 FROM generate_series(0, $2::integer - 1) AS g ON CONFLICT (kind, shard) DO NOTHING`, kind, shards); err != nil {
		return nil, fmt.Errorf("cluster store: creating the leases of %s: %w", kind, err)
	}
	return &Coordinator{db: db, kind: kind, me: me, shards: shards}, nil
}

// OnFenced sets the function told of fenced leases (the lease manager; before the first Acquire).
func (c *Coordinator) OnFenced(fn func(shard int32, epoch int64)) { c.onFenced = fn }

// Kind is the coordinator's kind.
func (c *Coordinator) Kind() string { return c.kind }

// Config implements store.Store.
func (c *Coordinator) Config() store.ClusterConfig { return store.ClusterConfig{Shards: c.shards} }

// Close implements store.Store; the DB is closed by its owner.
func (c *Coordinator) Close() error { return nil }

// Acquire implements store.Store: it takes the shard's lease with the next epoch, or fails with
// ErrLeaseHeld while another live node holds it.
func (c *Coordinator) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	if shard < 0 || shard >= c.shards {
		return nil, fmt.Errorf("cluster store: shard %d out of range [0,%d)", shard, c.shards)
	}
	epoch, err := c.db.AcquireLease(ctx, c.me, c.kind, shard)
	if err != nil {
		return nil, err
	}
	return &Shard{c: c, id: shard, epoch: epoch, lost: make(chan struct{})}, nil
}

// Shard is one leased shard.
type Shard struct {
	c        *Coordinator
	id       int32
	epoch    int64
	lost     chan struct{}
	lostOnce sync.Once
	mu       sync.Mutex // one Append at a time
}

// ID implements store.Shard.
func (s *Shard) ID() int32 { return s.id }

// Epoch implements store.Shard.
func (s *Shard) Epoch() int64 { return s.epoch }

// Lost implements store.Shard.
func (s *Shard) Lost() <-chan struct{} { return s.lost }

// MarkLost closes Lost (the lease manager saw the lease go, or could not renew it in time).
func (s *Shard) MarkLost() { s.lostOnce.Do(func() { close(s.lost) }) }

// Limits implements store.Shard: what one transaction carries comfortably.
func (s *Shard) Limits() store.BatchLimits {
	return store.BatchLimits{Records: 1 << 20, Bytes: 256 << 20}
}

// Release implements store.Shard: the lease is freed for the next owner (after the last Append).
func (s *Shard) Release(ctx context.Context) error {
	s.MarkLost()
	return s.c.db.ReleaseLease(ctx, s.c.me, s.c.kind, s.id, s.epoch)
}

func (s *Shard) fenced() error {
	s.MarkLost()
	if fn := s.c.onFenced; fn != nil {
		fn(s.id, s.epoch)
	}
	return store.ErrFenced
}

// Load implements store.Shard: the shard's rows stream in key order, after a check that the
// lease is still this epoch's (a load after a takeover would read a state the new owner is
// changing).
func (s *Shard) Load(ctx context.Context, fn func(store.Record) error) error {
	return s.c.db.timed("load", func() error {
		var epoch int64
		err := s.c.db.pool.QueryRow(ctx, `SELECT epoch FROM muster_leases WHERE kind = $1 AND shard = $2`, s.c.kind, s.id).Scan(&epoch)
		if err != nil {
			return err
		}
		if epoch != s.epoch {
			return s.fenced()
		}
		rows, err := s.c.db.pool.Query(ctx, `SELECT k, v FROM muster_records WHERE kind = $1 AND shard = $2 ORDER BY k`,
			s.c.kind, s.id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			raw := rows.RawValues()
			// RawValues are the connection's read buffer, valid until Next: copy both into one
			// allocation.
			buf := make([]byte, len(raw[0])+len(raw[1]))
			n := copy(buf, raw[0])
			copy(buf[n:], raw[1])
			rec := store.Record{Key: buf[:n:n]}
			if len(raw[1]) > 0 { // an empty stored value reads as nil, as in the Pebble store
				rec.Value = buf[n:]
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// LoadBorrowed implements store.BorrowingLoader: Load without a copy per record. The rows are
// read by a goroutine into chunks while fn replays the previous chunk, so streaming and replay
// overlap (the bytes fn sees are valid until it returns).
func (s *Shard) LoadBorrowed(ctx context.Context, fn func(store.Record) error) error {
	return s.c.db.timed("load", func() error {
		var epoch int64
		err := s.c.db.pool.QueryRow(ctx, `SELECT epoch FROM muster_leases WHERE kind = $1 AND shard = $2`, s.c.kind, s.id).Scan(&epoch)
		if err != nil {
			return err
		}
		if epoch != s.epoch {
			return s.fenced()
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		full := make(chan *loadChunk, 2)
		free := make(chan *loadChunk, 3)
		for i := 0; i < 3; i++ {
			free <- &loadChunk{}
		}
		readErr := make(chan error, 1)
		go func() {
			defer close(full)
			readErr <- s.readChunks(ctx, full, free)
		}()
		var fnErr error
		for c := range full {
			if fnErr == nil {
				for _, r := range c.recs {
					if fnErr = fn(r); fnErr != nil {
						cancel() // stop the reader; drain what it sent
						break
					}
				}
			}
			free <- c
		}
		if err := <-readErr; fnErr == nil && err != nil {
			return err
		}
		return fnErr
	})
}

// loadChunk is a run of rows read for LoadBorrowed: records pointing into buf.
type loadChunk struct {
	buf  []byte
	recs []store.Record
}

const loadChunkRecords = 8192

// readChunks streams the shard's rows in key order into chunks taken from free and sent on full.
func (s *Shard) readChunks(ctx context.Context, full, free chan *loadChunk) error {
	rows, err := s.c.db.pool.Query(ctx, `SELECT k, v FROM muster_records WHERE kind = $1 AND shard = $2 ORDER BY k`,
		s.c.kind, s.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	var c *loadChunk
	send := func() bool {
		select {
		case full <- c:
			c = nil
			return true
		case <-ctx.Done():
			return false
		}
	}
	for rows.Next() {
		if c == nil {
			select {
			case c = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			c.buf, c.recs = c.buf[:0], c.recs[:0]
		}
		raw := rows.RawValues()
		// Offsets into buf first: buf may grow (and move) while the chunk fills.
		k0 := len(c.buf)
		c.buf = append(c.buf, raw[0]...)
		v0 := len(c.buf)
		c.buf = append(c.buf, raw[1]...)
		c.recs = append(c.recs, store.Record{Key: c.buf[k0:v0:v0], Value: c.buf[v0:len(c.buf):len(c.buf)]})
		if len(raw[1]) == 0 {
			c.recs[len(c.recs)-1].Value = nil
		}
		if len(c.recs) == loadChunkRecords {
			fixChunk(c)
			if !send() {
				return ctx.Err()
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if c != nil && len(c.recs) > 0 {
		fixChunk(c)
		if !send() {
			return ctx.Err()
		}
	}
	return nil
}

// fixChunk re-points a chunk's records into its final buffer (append may have moved it).
func fixChunk(c *loadChunk) {
	off := 0
	for i := range c.recs {
		kl, vl := len(c.recs[i].Key), len(c.recs[i].Value)
		c.recs[i].Key = c.buf[off : off+kl : off+kl]
		off += kl
		if c.recs[i].Value != nil {
			c.recs[i].Value = c.buf[off : off+vl : off+vl]
		}
		off += vl
	}
}

// appendSQL is one Append: one statement (one round trip, one transaction, one commit) that
// locks the shard's lease row, upserts the records and deletes the tombstoned keys only when
// the lease is still at the appending epoch, and returns the lease's epoch. A takeover's
// update waits for the row lock, so it either comes after this batch (and the new owner's
// load sees it) or before it (and this batch writes nothing).
const appendSQL = `WITH l AS (
	SELECT epoch FROM muster_leases WHERE kind = $1 AND shard = $2 FOR SHARE
), up AS (
	INSERT INTO muster_records (kind, shard, k, v)
	SELECT $1, $2, t.k, t.v FROM unnest($4::bytea[], $5::bytea[]) AS t(k, v)
	WHERE EXISTS (SELECT 1 FROM l WHERE l.epoch = $3)
	ON CONFLICT (kind, shard, k) DO UPDATE SET v = excluded.v
	RETURNING 1
), del AS (
	DELETE FROM muster_records WHERE kind = $1 AND shard = $2 AND k = ANY($6::bytea[])
	AND EXISTS (SELECT 1 FROM l WHERE l.epoch = $3)
	RETURNING 1
)
SELECT epoch FROM l`

// appendTimeout bounds one Append (a database that stopped answering fails the batch, whose
// outcome is then unknown: the shard reloads, as after any failed Append).
const appendTimeout = 30 * time.Second

// Append implements store.Shard: appendSQL. ErrFenced when a newer epoch holds the lease.
func (s *Shard) Append(ctx context.Context, recs []store.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var upK, upV, delK [][]byte
	for _, r := range recs {
		if r.Value == nil {
			delK = append(delK, r.Key)
		} else {
			upK, upV = append(upK, r.Key), append(upV, r.Value)
		}
	}
	if upK == nil {
		upK, upV = [][]byte{}, [][]byte{}
	}
	if delK == nil {
		delK = [][]byte{}
	}
	ctx, cancel := context.WithTimeout(ctx, appendTimeout)
	defer cancel()
	var epoch int64 = -1
	err := s.c.db.timed("append", func() error {
		err := s.c.db.pool.QueryRow(ctx, appendSQL, s.c.kind, s.id, s.epoch, upK, upV, delK).Scan(&epoch)
		if errors.Is(err, pgx.ErrNoRows) {
			epoch = -1 // no lease row: nothing written
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if epoch != s.epoch {
		return s.fenced()
	}
	return nil
}

var _ store.BorrowingLoader = (*Shard)(nil)
