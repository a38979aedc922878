// Package pgstore is the data plane's Store in cluster mode: the catalog and the partition logs
// in the shared PostgreSQL database (internal/store/postgres), written by each partition's
// leader under its lease epoch.
//
// Appends (produced batches, transaction markers) are group-committed: a few committer
// goroutines, each owning a share of the partitions (so a partition's appends commit in order),
// take every append queued while their previous statement ran and commit them in one
// statement, one transaction, each partition's rows conditioned on its lease epoch (a stale
// leader's part writes nothing: ErrFenced). Rewrites below the log end (retention,
// DeleteRecords, the log cleaner) are one transaction each. The leader keeps the newest batches
// of each partition it leads in memory (the tail) and serves fetches of them from there;
// older batches are read from the database.
package pgstore

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/store/diskguard"
	"github.com/muster-io/muster/internal/store/postgres"
)

// Options configure a Store.
type Options struct {
	// Committers is how many group commits run at once (default 4).
	Committers int
	// GroupBytes bounds the batch bytes of one group commit (default 32 MiB).
	GroupBytes int
	// TailBytes bounds the batches kept in memory per led partition (default 8 MiB).
	TailBytes int
	// Timeout bounds one statement (default 30 s).
	Timeout time.Duration
	Log     *slog.Logger
}

// Store is the data plane's store on PostgreSQL. It implements data.Store and
// data.CatalogWatcher.
type Store struct {
	db   *postgres.DB
	opts Options
	log  *slog.Logger
	seed maphash.Seed

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	committers []*committer
	changed    chan struct{}

	tailsMu sync.Mutex
	tails   map[data.PartitionID]*tail
}

var (
	_ data.Store          = (*Store)(nil)
	_ data.CatalogWatcher = (*Store)(nil)
)

// Open starts the store's committers and its listener of catalog changes; Close stops them.
func Open(db *postgres.DB, opts Options) *Store {
	if opts.Committers <= 0 {
		opts.Committers = 4
	}
	if opts.GroupBytes <= 0 {
		opts.GroupBytes = 32 << 20
	}
	if opts.TailBytes <= 0 {
		opts.TailBytes = 8 << 20
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Store{db: db, opts: opts, log: opts.Log, seed: maphash.MakeSeed(), ctx: ctx, cancel: cancel,
		changed: make(chan struct{}, 1), tails: map[data.PartitionID]*tail{}}
	for i := 0; i < opts.Committers; i++ {
		c := &committer{s: s, wake: make(chan struct{}, 1)}
		s.committers = append(s.committers, c)
		s.wg.Add(1)
		go c.run()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		db.Listen(ctx, postgres.CatalogChannel, func(string) {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		})
	}()
	return s
}

// Close stops the committers (appends queued fail) and the listener. The DB stays open.
func (s *Store) Close() {
	s.cancel()
	s.wg.Wait()
}

func (s *Store) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.opts.Timeout)
}

// Changed implements data.CatalogWatcher.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// fenced maps the database's refusal to the data plane's.
func fenced(err error) error {
	if errors.Is(err, postgres.ErrLogFenced) {
		return data.ErrFenced
	}
	return err
}

// Write implements data.LogStore: an append joins its partition's committer's next group
// commit; a rewrite is one transaction now.
func (s *Store) Write(w *data.LogWrite) func() error {
	if len(w.Replace) == 0 && len(w.Drop) == 0 && w.TruncateBelow == 0 && len(w.StateBelow) == 0 {
		pw := &pendingWrite{a: postgres.LogAppend{Topic: w.Part.Topic, Partition: w.Part.Index, Epoch: int64(w.Epoch)},
			part: w.Part, done: make(chan error, 1)}
		for i := range w.Append {
			sb := &w.Append[i]
			b := postgres.LogBatch{Base: sb.Base, Last: sb.Last, MaxTimestamp: sb.MaxTimestamp, Data: sb.Stored(w.Epoch)}
			pw.a.Batches = append(pw.a.Batches, b)
			pw.bytes += len(b.Data)
		}
		for _, op := range w.State {
			pw.a.State = append(pw.a.State, postgres.LogState{Kind: op.Kind, Key: op.Key, Value: op.Value})
		}
		c := s.committers[s.committerOf(w.Part)]
		if !c.enqueue(pw) {
			return func() error { return context.Canceled }
		}
		return func() error { return <-pw.done }
	}
	rw := postgres.LogRewrite{Topic: w.Part.Topic, Partition: w.Part.Index, Epoch: int64(w.Epoch),
		Drop: w.Drop, TruncateBelow: w.TruncateBelow}
	for i := range w.Append {
		sb := &w.Append[i]
		rw.Append = append(rw.Append, postgres.LogBatch{Base: sb.Base, Last: sb.Last, MaxTimestamp: sb.MaxTimestamp, Data: sb.Stored(w.Epoch)})
	}
	for _, sb := range w.Replace {
		rw.Replace = append(rw.Replace, postgres.LogBatch{Base: sb.Base, Last: sb.Last, MaxTimestamp: sb.MaxTimestamp, Data: sb.Data})
	}
	for _, op := range w.State {
		rw.State = append(rw.State, postgres.LogState{Kind: op.Kind, Key: op.Key, Value: op.Value})
	}
	for _, op := range w.StateBelow {
		rw.StateBelow = append(rw.StateBelow, postgres.LogState{Kind: op.Kind, Key: op.Key})
	}
	ctx, cancel := s.opCtx()
	err := fenced(s.db.RewriteLog(ctx, rw))
	cancel()
	if err == nil {
		s.rewound(w.Part) // the tail may hold what was rewritten
	}
	return func() error { return err }
}

func (s *Store) committerOf(p data.PartitionID) int {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.Write(p.Topic[:])
	h.WriteByte(byte(p.Index >> 24))
	h.WriteByte(byte(p.Index >> 16))
	h.WriteByte(byte(p.Index >> 8))
	h.WriteByte(byte(p.Index))
	return int(h.Sum64() % uint64(len(s.committers)))
}

// pendingWrite is one append waiting for its group commit.
type pendingWrite struct {
	a     postgres.LogAppend
	part  data.PartitionID
	bytes int
	done  chan error
}

// committer group-commits the appends of its partitions, one statement at a time.
type committer struct {
	s    *Store
	wake chan struct{}

	mu     sync.Mutex
	queue  []*pendingWrite
	closed bool
}

func (c *committer) enqueue(pw *pendingWrite) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, pw)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// take removes the next group from the queue: every queued append, up to GroupBytes (at
// least one).
func (c *committer) take() []*pendingWrite {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, bytes := 0, 0
	for n < len(c.queue) && (n == 0 || bytes+c.queue[n].bytes <= c.s.opts.GroupBytes) {
		bytes += c.queue[n].bytes
		n++
	}
	group := c.queue[:n:n]
	c.queue = c.queue[n:]
	if len(c.queue) == 0 {
		c.queue = nil
	}
	return group
}

func (c *committer) run() {
	defer c.s.wg.Done()
	for {
		select {
		case <-c.s.ctx.Done():
			c.mu.Lock()
			c.closed = true
			q := c.queue
			c.queue = nil
			c.mu.Unlock()
			for _, pw := range q {
				pw.done <- context.Canceled
			}
			return
		case <-c.wake:
		}
		for group := c.take(); len(group) > 0; group = c.take() {
			c.commit(group)
		}
	}
}

// commit writes one group in one statement: the appends of each partition and epoch merged
// (state keys last write wins), and answers every append of it.
func (c *committer) commit(group []*pendingWrite) {
	type key struct {
		part  data.PartitionID
		epoch int64
	}
	idx := map[key]int{}
	var appends []postgres.LogAppend
	var states []map[stateKey]int // per append: state key → index in its State
	for _, pw := range group {
		k := key{pw.part, pw.a.Epoch}
		i, ok := idx[k]
		if !ok {
			i = len(appends)
			idx[k] = i
			appends = append(appends, postgres.LogAppend{Topic: pw.a.Topic, Partition: pw.a.Partition, Epoch: pw.a.Epoch})
			states = append(states, map[stateKey]int{})
		}
		a := &appends[i]
		a.Batches = append(a.Batches, pw.a.Batches...)
		for _, st := range pw.a.State {
			sk := stateKey{st.Kind, string(st.Key)}
			if j, ok := states[i][sk]; ok {
				a.State[j] = st // a later write of the same key in the group wins
				continue
			}
			states[i][sk] = len(a.State)
			a.State = append(a.State, st)
		}
	}
	ctx, cancel := c.s.opCtx()
	fencedIdx, err := c.s.db.AppendLogs(ctx, appends)
	cancel()
	refused := map[key]bool{}
	for _, i := range fencedIdx {
		refused[key{data.PartitionID{Topic: appends[i].Topic, Index: appends[i].Partition}, appends[i].Epoch}] = true
	}
	if err == nil {
		for _, pw := range group {
			if !refused[key{pw.part, pw.a.Epoch}] {
				c.s.appended(pw.part, pw.a.Batches)
			}
		}
	} else if c.s.ctx.Err() == nil {
		c.s.log.Warn("cluster store: a group commit of partition logs failed (outcome unknown: the partitions load again)",
			"appends", len(group), "err", err)
	}
	for _, pw := range group {
		switch {
		case err != nil:
			pw.done <- err
		case refused[key{pw.part, pw.a.Epoch}]:
			pw.done <- data.ErrFenced
		default:
			pw.done <- nil
		}
	}
}

type stateKey struct {
	kind byte
	key  string
}

// Read implements data.LogStore: from the tail when it holds from, else from the database in
// growing chunks.
func (s *Store) Read(part data.PartitionID, from, to int64, fn func(data []byte) bool) error {
	if s.readTail(part, from, to, fn) {
		return nil
	}
	chunk := 16
	for from < to {
		stop := false
		ctx, cancel := s.opCtx()
		n, err := s.db.ReadLog(ctx, part.Topic, part.Index, from, to, chunk, func(base, last int64, b []byte) error {
			if !fn(b) {
				stop = true
				return errStop
			}
			from = last + 1
			return nil
		})
		cancel()
		if errors.Is(err, errStop) || stop {
			return nil
		}
		if err != nil {
			return err
		}
		if n < chunk {
			return nil
		}
		chunk = min(chunk*4, 1024)
	}
	return nil
}

var errStop = errors.New("pgstore: stop")

// Bounds implements data.LogStore.
func (s *Store) Bounds(part data.PartitionID) (first, end int64, ok bool, err error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.LogBounds(ctx, part.Topic, part.Index)
}

// Stats implements data.LogStore, without reading the batches.
func (s *Store) Stats(part data.PartitionID, from, to int64) (bytes, firstMaxTs, largestMaxTs int64, err error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.LogStats(ctx, part.Topic, part.Index, from, to)
}

// State implements data.LogStore.
func (s *Store) State(part data.PartitionID, kind byte, fn func(key, value []byte) error) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.LogStateOf(ctx, part.Topic, part.Index, kind, fn)
}

// Topics implements data.Catalog.
func (s *Store) Topics() ([]data.TopicRecord, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	rows, err := s.db.Topics(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]data.TopicRecord, len(rows))
	for i, r := range rows {
		out[i] = data.TopicRecord{ID: r.ID, Name: r.Name, Partitions: r.Partitions, Configs: r.Configs}
	}
	return out, nil
}

// CreateTopic implements data.Catalog.
func (s *Store) CreateTopic(rec data.TopicRecord) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	err := s.db.CreateTopic(ctx, postgres.TopicRow{ID: rec.ID, Name: rec.Name, Partitions: rec.Partitions, Configs: rec.Configs})
	if errors.Is(err, postgres.ErrTopicExists) {
		return data.ErrTopicExists
	}
	return err
}

// UpdateTopic implements data.Catalog.
func (s *Store) UpdateTopic(rec data.TopicRecord, _ diskguard.Write) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.UpdateTopic(ctx, postgres.TopicRow{ID: rec.ID, Name: rec.Name, Partitions: rec.Partitions, Configs: rec.Configs})
}

// DeleteTopic implements data.Catalog.
func (s *Store) DeleteTopic(rec data.TopicRecord) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.DeleteTopic(ctx, rec.ID)
}

// BrokerConfigs implements data.Catalog.
func (s *Store) BrokerConfigs(res string) (map[string]string, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.BrokerConfigs(ctx, res)
}

// SetBrokerConfigs implements data.Catalog.
func (s *Store) SetBrokerConfigs(res string, m map[string]string) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.SetBrokerConfigs(ctx, res, m)
}

// GroupConfigs implements data.Catalog.
func (s *Store) GroupConfigs() (map[string]map[string]string, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.GroupConfigs(ctx)
}

// SetGroupConfigs implements data.Catalog.
func (s *Store) SetGroupConfigs(group string, m map[string]string) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.SetGroupConfigs(ctx, group, m)
}

// ReserveProducerIDs implements data.Catalog: a block of the counter every node shares.
func (s *Store) ReserveProducerIDs(n int64) (int64, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	return s.db.AllocateProducerIDs(ctx, n)
}

// tail is the newest batches of a partition this node leads, in offset order: every batch
// committed at or above lo is there (older ones were evicted or precede the leadership).
type tail struct {
	mu      sync.Mutex
	lo, end int64
	batches []tailBatch
	bytes   int
}

type tailBatch struct {
	base, last int64
	data       []byte
}

// Lead implements data.LogStore: the tail starts empty at the log's end.
func (s *Store) Lead(part data.PartitionID, end int64) {
	s.tailsMu.Lock()
	s.tails[part] = &tail{lo: end, end: end}
	s.tailsMu.Unlock()
}

// Unlead implements data.LogStore: the tail goes.
func (s *Store) Unlead(part data.PartitionID) {
	s.tailsMu.Lock()
	delete(s.tails, part)
	s.tailsMu.Unlock()
}

func (s *Store) tailOf(part data.PartitionID) *tail {
	s.tailsMu.Lock()
	defer s.tailsMu.Unlock()
	return s.tails[part]
}

// appended adds committed batches to the partition's tail.
func (s *Store) appended(part data.PartitionID, bs []postgres.LogBatch) {
	t := s.tailOf(part)
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range bs {
		if b.Base < t.lo {
			continue // evicted range, or older than the leadership: read from the database
		}
		i := sort.Search(len(t.batches), func(i int) bool { return t.batches[i].base > b.Base })
		t.batches = append(t.batches, tailBatch{})
		copy(t.batches[i+1:], t.batches[i:])
		t.batches[i] = tailBatch{base: b.Base, last: b.Last, data: b.Data}
		t.bytes += len(b.Data)
		t.end = max(t.end, b.Last+1)
	}
	n := 0
	for n < len(t.batches)-1 && t.bytes > s.opts.TailBytes {
		t.bytes -= len(t.batches[n].data)
		n++
	}
	if n > 0 {
		t.lo = t.batches[n].base
		t.batches = append(t.batches[:0:0], t.batches[n:]...)
	}
}

// rewound empties the partition's tail after a rewrite of stored batches: it starts again at
// the end.
func (s *Store) rewound(part data.PartitionID) {
	t := s.tailOf(part)
	if t == nil {
		return
	}
	t.mu.Lock()
	t.lo, t.batches, t.bytes = t.end, nil, 0
	t.mu.Unlock()
}

// readTail serves a read from the tail when the tail holds from; false: read the database.
func (s *Store) readTail(part data.PartitionID, from, to int64, fn func([]byte) bool) bool {
	t := s.tailOf(part)
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if from < t.lo {
		return false
	}
	i := sort.Search(len(t.batches), func(i int) bool { return t.batches[i].last >= from })
	for ; i < len(t.batches) && t.batches[i].base < to; i++ {
		if !fn(t.batches[i].data) {
			break
		}
	}
	return true
}
