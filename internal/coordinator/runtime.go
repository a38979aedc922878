package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/store"
)

// Call is one operation submitted to a shard. The operation runs on the shard goroutine with the
// shard's State; it replies through st.Reply (now or from a later operation, e.g. a JoinGroup
// that completes when the rebalance does). The reply is released only after every record written
// before it is durable.
type Call struct {
	op      func(st *State, c *Call)
	resp    any
	err     error
	replied bool
	done    chan struct{}
	Meta
}

// Meta describes the request behind a Call.
type Meta struct {
	// APIVersion is the request version, for handlers that branch on it.
	APIVersion int16
	ClientID   *string
	ClientHost string
}

func (c *Call) finish() { close(c.done) }

// Fail completes c with err instead of a response (used when a shard unloads).
func (c *Call) fail(err error) {
	if c.replied {
		return
	}
	c.replied = true
	c.err = err
	c.finish()
}

type batch struct {
	records []Record
	replies []*Call
}

// Runtime runs the coordinator shards: one goroutine per shard owns its State, batches the
// records of concurrent operations into one durable Append (group commit, one batch in flight per
// shard) and releases responses only after their batch is durable. A failed Append fails the
// batch's calls with NOT_COORDINATOR (retriable) and reloads the shard from the store.
type Runtime struct {
	cfg    *Config
	store  store.Store
	clock  Clock
	log    *slog.Logger
	shards []*Shard
	loaded atomic.Int32
	wg     sync.WaitGroup
	stop   chan struct{}
	hooks  RuntimeHooks
}

// RuntimeHooks observe the runtime (metrics).
type RuntimeHooks struct {
	// OnCommit is called after each Append with the batch size, its latency and its error.
	OnCommit func(shard int32, records int, d time.Duration, err error)
	// OnLoad is called after a shard finished loading.
	OnLoad func(shard int32, records int, d time.Duration, err error)
}

// Shard is one coordinator shard's loop.
type Shard struct {
	rt     *Runtime
	id     int32
	ops    chan *Call
	wake   chan struct{}
	done   chan struct{}
	status atomic.Int32 // shardLoading, shardActive, shardFailed
	queued atomic.Int64

	// Loop-owned.
	st          *State
	lease       store.Shard
	cur         *batch
	inflight    *batch
	outstanding map[*Call]struct{}
	commitDone  chan error
	appends     chan appendReq // to the shard's committer goroutine; at most one in flight
	stopTimer   func() bool
	timerAt     time.Time
	lastErr     error
}

// appendReq is one batch handed to the shard's committer goroutine.
type appendReq struct {
	lease store.Shard
	recs  []Record
	// replies are released by the committer as soon as the Append succeeds (their responses
	// were set by the loop before the batch was handed over), one goroutine hand-off sooner than
	// through the loop; a failed Append leaves them to the loop, which fails them.
	replies []*Call
}

const (
	shardLoading int32 = iota
	shardActive
	shardFailed
)

// OnLoadHooks run on a freshly loaded State (re-arm session timers and the like).
var onLoadHooks []func(st *State)

// RegisterOnLoad adds a hook run after every shard load.
func RegisterOnLoad(fn func(st *State)) { onLoadHooks = append(onLoadHooks, fn) }

// NewRuntime creates the runtime; Start loads the shards.
func NewRuntime(cfg *Config, st store.Store, clock Clock, log *slog.Logger, queueDepth int, hooks RuntimeHooks) *Runtime {
	if log == nil {
		log = slog.Default()
	}
	if queueDepth <= 0 {
		queueDepth = 4096
	}
	rt := &Runtime{cfg: cfg, store: st, clock: clock, log: log, stop: make(chan struct{}), hooks: hooks}
	for i := int32(0); i < cfg.Shards; i++ {
		rt.shards = append(rt.shards, &Shard{rt: rt, id: i, ops: make(chan *Call, queueDepth),
			wake: make(chan struct{}, 1), done: make(chan struct{}), commitDone: make(chan error, 1), appends: make(chan appendReq, 1)})
	}
	return rt
}

// Start launches every shard loop; shards load concurrently.
func (rt *Runtime) Start() {
	for _, s := range rt.shards {
		rt.wg.Add(1)
		go s.loop()
	}
}

// Close stops every shard after its in-flight batch; queued calls get NOT_COORDINATOR.
func (rt *Runtime) Close() {
	select {
	case <-rt.stop:
	default:
		close(rt.stop)
	}
	rt.wg.Wait()
}

// Ready reports whether every shard is loaded.
func (rt *Runtime) Ready() bool { return int(rt.loaded.Load()) == len(rt.shards) }

// ShardStatus describes each shard for /readyz and metrics: "loading", "active" or "failed".
func (rt *Runtime) ShardStatus() []string {
	out := make([]string, len(rt.shards))
	for i, s := range rt.shards {
		out[i] = [...]string{"loading", "active", "failed"}[s.status.Load()]
	}
	return out
}

// QueueDepth returns the number of calls waiting in each shard's queue.
func (rt *Runtime) QueueDepth() []int64 {
	out := make([]int64, len(rt.shards))
	for i, s := range rt.shards {
		out[i] = s.queued.Load()
	}
	return out
}

// Shards is the shard count.
func (rt *Runtime) Shards() int32 { return int32(len(rt.shards)) }

// Clock returns the runtime's clock.
func (rt *Runtime) Clock() Clock { return rt.clock }

// ShardFor is Kafka's group → __consumer_offsets partition rule: abs(Java String.hashCode) mod
// N, with Utils.abs mapping MinInt32 to 0.
func ShardFor(groupID string, shards int32) int32 {
	// Java's String.hashCode over UTF-16 code units, computed without building the UTF-16 slice.
	var h int32
	for _, r := range groupID {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % shards
}

// Do runs op on groupID's shard and waits for its reply. Errors are kerr errors: NOT_COORDINATOR
// when the shard is not served here or its batch failed, COORDINATOR_LOAD_IN_PROGRESS while it
// loads, or ctx's error.
func (rt *Runtime) Do(ctx context.Context, groupID string, meta Meta, op func(st *State, c *Call)) (any, error) {
	return rt.DoShard(ctx, ShardFor(groupID, int32(len(rt.shards))), meta, op)
}

// DoShard is Do for an explicit shard.
func (rt *Runtime) DoShard(ctx context.Context, shard int32, meta Meta, op func(st *State, c *Call)) (any, error) {
	s := rt.shards[shard]
	switch s.status.Load() {
	case shardLoading:
		return nil, kerr.CoordinatorLoadInProgress
	case shardFailed:
		return nil, kerr.NotCoordinator
	}
	c := &Call{op: op, done: make(chan struct{}), Meta: meta}
	s.queued.Add(1)
	select {
	case s.ops <- c:
	case <-ctx.Done():
		s.queued.Add(-1)
		return nil, ctx.Err()
	case <-s.done:
		s.queued.Add(-1)
		return nil, kerr.NotCoordinator
	}
	select {
	case <-c.done:
		return c.resp, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		select {
		case <-c.done:
			return c.resp, c.err
		default:
			return nil, kerr.NotCoordinator
		}
	}
}

func (s *Shard) loop() {
	defer s.rt.wg.Done()
	defer close(s.done)
	go s.committer()
	// The loop returns only with no Append in flight (shutdown and a failed load wait for it),
	// so closing appends stops the committer without losing a result.
	defer close(s.appends)
	defer func() {
		if s.stopTimer != nil {
			s.stopTimer()
		}
	}()
	if !s.load() {
		return
	}
	s.armTimer() // timers re-armed by the on-load hooks must fire without waiting for a request
	for {
		select {
		case <-s.rt.stop:
			s.shutdown()
			return
		case c := <-s.ops:
			s.queued.Add(-1)
			s.run(c)
			s.drain()
		case err := <-s.commitDone:
			if !s.committed(err) {
				if !s.load() {
					return
				}
				s.armTimer()
				continue
			}
			s.drain() // what queued during the Append joins the next one
		case <-s.wake:
		}
		s.runTimers()
		s.maybeCommit()
		s.armTimer()
	}
}

// drain runs what is queued (up to 1024 calls) into the current batch.
func (s *Shard) drain() {
	for i := 0; i < 1024; i++ {
		select {
		case c := <-s.ops:
			s.queued.Add(-1)
			s.run(c)
		default:
			return
		}
	}
}

// load acquires the lease and replays the shard; it retries with back-off until it succeeds or
// the runtime stops.
func (s *Shard) load() bool {
	s.status.Store(shardLoading)
	backoff := 100 * time.Millisecond
	for {
		err := s.tryLoad()
		if err == nil {
			s.status.Store(shardActive)
			s.rt.loaded.Add(1)
			return true
		}
		s.lastErr = err
		s.status.Store(shardFailed)
		s.rt.log.Error("coordinator: shard load failed", "shard", s.id, "err", err)
		select {
		case <-s.rt.stop:
			return false
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

func (s *Shard) tryLoad() error {
	start := time.Now()
	ctx := context.Background()
	if s.lease == nil {
		l, err := s.rt.store.Acquire(ctx, s.id)
		if err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		s.lease = l
	}
	st := NewState(s.id, s.rt.cfg, s.rt.log)
	st.Now = s.rt.clock.Now()
	st.Loading = true
	n := 0
	load, replay := s.lease.Load, st.replay
	if bl, ok := s.lease.(store.BorrowingLoader); ok {
		load, replay = bl.LoadBorrowed, st.replayBorrowed // no copy of offset records
	}
	err := load(ctx, func(r store.Record) error {
		n++
		if err := replay(r); err != nil {
			return fmt.Errorf("record %d (key %x): %w", n, r.Key, err)
		}
		return nil
	})
	if s.rt.hooks.OnLoad != nil {
		s.rt.hooks.OnLoad(s.id, n, time.Since(start), err)
	}
	st.Loading = false
	if err != nil {
		return err
	}
	s.st = st
	s.cur = &batch{}
	s.inflight = nil
	s.outstanding = map[*Call]struct{}{}
	st.batch = s.cur
	for _, h := range onLoadHooks {
		h(st)
	}
	return nil
}

// run executes one call inside the current batch.
func (s *Shard) run(c *Call) {
	st := s.st
	st.Now = s.rt.clock.Now()
	st.batch = s.cur
	s.outstanding[c] = struct{}{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				s.rt.log.Error("coordinator: operation panicked", "shard", s.id, "panic", r)
				if !c.replied {
					c.replied = true
					c.err = kerr.UnknownServerError
					s.cur.replies = append(s.cur.replies, c)
				}
			}
		}()
		c.op(st, c)
	}()
}

func (s *Shard) runTimers() {
	st := s.st
	st.Now = s.rt.clock.Now()
	st.batch = s.cur
	for {
		tm := st.Timers.popDue(st.Now)
		if tm == nil {
			return
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					s.rt.log.Error("coordinator: timer panicked", "shard", s.id, "timer", tm.key, "panic", r)
				}
			}()
			tm.fn(st)
		}()
	}
}

func (s *Shard) armTimer() {
	next, ok := s.st.Timers.Next()
	if !ok {
		return
	}
	if s.stopTimer != nil && next.Equal(s.timerAt) {
		return
	}
	if s.stopTimer != nil {
		s.stopTimer()
	}
	s.timerAt = next
	d := next.Sub(s.rt.clock.Now())
	if d < 0 {
		d = 0
	}
	s.stopTimer = s.rt.clock.AfterFunc(d, func() {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	})
}

// maybeCommit starts an Append of the current batch when none is in flight, or releases a batch
// that wrote nothing (its reads saw only durable state).
func (s *Shard) maybeCommit() {
	if s.inflight != nil {
		return
	}
	b := s.cur
	if len(b.records) == 0 {
		s.release(b, nil)
		b.replies = b.replies[:0]
		return
	}
	s.inflight = b
	s.cur = &batch{}
	s.st.batch = s.cur
	s.appends <- appendReq{lease: s.lease, recs: dedupe(b.records), replies: b.replies}
}

// committer is the shard's long-lived Append goroutine: it appends each batch the loop hands it
// (one at a time, so one batch is in flight per shard) and reports the result on commitDone. A
// long-lived goroutine keeps its grown stack and saves a goroutine start per batch.
func (s *Shard) committer() {
	for req := range s.appends {
		start := time.Now()
		err := req.lease.Append(context.Background(), req.recs)
		if err == nil {
			for _, c := range req.replies {
				c.finish()
			}
		}
		if s.rt.hooks.OnCommit != nil {
			s.rt.hooks.OnCommit(s.id, len(req.recs), time.Since(start), err)
		}
		s.commitDone <- err
	}
}

// committed handles an Append result; false means the shard must reload.
func (s *Shard) committed(err error) bool {
	b := s.inflight
	s.inflight = nil
	if err == nil {
		for _, c := range b.replies { // released by the committer already
			delete(s.outstanding, c)
		}
		return true
	}
	s.rt.log.Error("coordinator: batch commit failed; failing its requests and reloading the shard",
		"shard", s.id, "records", len(b.records), "err", err)
	fail := kerr.NotCoordinator
	s.release(b, fail)
	s.release(s.cur, fail)
	for c := range s.outstanding {
		c.fail(fail)
	}
	if s.stopTimer != nil {
		s.stopTimer()
		s.stopTimer = nil
	}
	s.rt.loaded.Add(-1)
	if errors.Is(err, store.ErrFenced) {
		s.lease = nil
	}
	return false
}

func (s *Shard) release(b *batch, err error) {
	for _, c := range b.replies {
		delete(s.outstanding, c)
		if err != nil {
			c.err = err
			c.resp = nil
		}
		c.finish()
	}
}

// shutdown waits for the in-flight batch, commits what is pending, and fails deferred calls.
func (s *Shard) shutdown() {
	if s.inflight != nil {
		s.committed(<-s.commitDone)
	}
	if s.st != nil && len(s.cur.records) > 0 {
		s.maybeCommit()
		if s.inflight != nil {
			s.committed(<-s.commitDone)
		}
	} else if s.cur != nil {
		s.release(s.cur, nil)
	}
	for c := range s.outstanding {
		c.fail(kerr.NotCoordinator)
	}
	for {
		select {
		case c := <-s.ops:
			s.queued.Add(-1)
			c.fail(kerr.NotCoordinator)
		default:
			return
		}
	}
}
