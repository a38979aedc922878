package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/lograte"
	"github.com/muster-io/muster/internal/store"
)

// Shard is the pure state machine of one coordinator shard, as the engine drives it: records in
// (Replay while loading), operations and timers run on it with the time set, and Effects out
// (the records to make durable and the replies to release after them). coordinator.State
// implements it; so will the transaction coordinator's shard.
type Shard interface {
	// Replay applies one record while the shard loads; ReplayBorrowed is Replay for a record
	// whose bytes are valid only during the call.
	Replay(r coordinator.Record) error
	ReplayBorrowed(r coordinator.Record) error
	// OnLoaded ends a load (re-arms timers from the replayed state).
	OnLoaded(now time.Time)
	// SetNow sets the time of the operations that follow.
	SetNow(now time.Time)
	// FireTimers runs every timer due at now.
	FireTimers(now time.Time)
	// NextDeadline is the earliest armed timer.
	NextDeadline() (time.Time, bool)
	// TakeEffects returns what was produced since the last call.
	TakeEffects() coordinator.Effects
}

// Hooks observe the runtime (metrics).
type Hooks struct {
	// OnCommit is called after each Append with the batch size, its latency and its error.
	OnCommit func(shard int32, records int, d time.Duration, err error)
	// OnLoad is called after a shard finished loading.
	OnLoad func(shard int32, records int, d time.Duration, err error)
}

// Options configure a Runtime.
type Options[S Shard] struct {
	// Shards is the number of shards; New builds shard i's empty state (for every load).
	Shards int32
	New    func(shard int32) S
	Store  store.Store
	Clock  Clock
	Log    *slog.Logger
	// QueueDepth bounds each shard's queue of waiting operations (default 4096).
	QueueDepth int
	Hooks      Hooks
	// Refresh runs on the shard goroutine before every operation and timer run and after a
	// load: the group coordinator hands the shard the newest topic metadata image here.
	Refresh func(s S)
	// Managed: shards are served only while this node holds their leases (cluster mode). Start
	// loads nothing; a lease manager hands each shard's lease to Serve and takes it back with
	// Unserve, and a shard whose lease is lost or fenced unloads itself. Unmanaged (embedded
	// mode), every shard acquires its lease from Store at Start and keeps it.
	Managed bool
	// Writes, when set, tells the runtime whether the store takes writes now (see WriteGate);
	// nil: every batch is appended.
	Writes WriteGate
	// MaxInflight bounds the batches in flight per shard on a store that keeps them in order
	// (store.OrderedAppender; default 16). Other stores have one in flight.
	MaxInflight int
	// Snapshot, when set, is called on the shard goroutine when a batch of records is cut and
	// when a load ends; it captures what readers may see of the shard's state at that moment
	// (an immutable version the shard builds) and returns the function that publishes it. The
	// runtime calls that function once the batch is durable, before its replies are released,
	// in batch order, so a reader of the published state sees every acknowledged write and no
	// write that is not durable. The published state is only valid while the shard is Active.
	Snapshot func(shard int32, s S) (publish func())
}

// WriteGate tells the runtime whether the store takes writes now: a disk short of space takes
// deletes only, a failed store nothing. The broker's is the disk guard.
type WriteGate interface {
	// Refusing reports whether some writes may be refused now. false is the fast path, one
	// atomic load per operation: the runtime batches as usual.
	Refusing() bool
	// Refuse returns nil when records may be appended now, else why not (counted as a refused
	// write); deletesOnly: the records are all tombstones.
	Refuse(deletesOnly bool) error
}

// ErrWritesRefused marks the calls refused because the store takes no writes now (errors.Is);
// they answer COORDINATOR_NOT_AVAILABLE, retriable, with the reason as the error message.
var ErrWritesRefused = errors.New("the store refuses writes")

// Refused is the error of a call refused because the store takes no writes now, for reason:
// errors.Is(err, ErrWritesRefused) and errors.Is(err, kerr.CoordinatorNotAvailable) hold and
// coordinator.ErrorMessage gives the reason.
func Refused(reason error) error {
	return fmt.Errorf("%w: %w", ErrWritesRefused, coordinator.Errf(kerr.CoordinatorNotAvailable, "%v", reason))
}

// Runtime runs the coordinator shards: one goroutine per shard owns its state, batches the
// records of concurrent operations into one durable Append (group commit) and releases
// responses only after their batch is durable. On a store that keeps a shard's batches in
// order (store.OrderedAppender: a later batch is never durable before an earlier one) several
// batches are in flight per shard (pipelining, up to Options.MaxInflight) and their replies are
// released in the order the batches were cut; on any other store one is. A failed Append fails
// its calls and those of every batch after it with NOT_COORDINATOR (retriable) and reloads the
// shard from the store.
//
// While the store refuses writes (Options.Writes: a full or failed disk), each operation's
// effects are screened as it ends instead of at the Append: one that wrote only tombstones
// (group and offset deletes, offset expiry) or nothing (reads, heartbeats that change nothing)
// goes on as usual; one that wrote anything else is refused: its calls fail with
// COORDINATOR_NOT_AVAILABLE (Refused), what earlier operations wrote is appended, and the
// shard reloads from the store, since its state already holds the refused records. The
// adapters refuse the requests that always write before they reach a shard, so reloads stay
// rare.
type Runtime[S Shard] struct {
	opts Options[S]
	log  *slog.Logger
	// limited logs repeated shard failures (loads, refusals) once per interval.
	limited *lograte.Limiter
	shards  []*shard[S]
	loaded  atomic.Int32
	wg      sync.WaitGroup
	stop    chan struct{}
}

// job is one operation waiting in a shard's queue.
type job[S Shard] struct {
	run func(s S)
	// w is the call's waiter: answered with UNKNOWN_SERVER_ERROR if run panics before replying,
	// failed if the shard unloads first.
	w failer
}

// failer is the engine's side of a waiter.
type failer interface {
	coordinator.Pending
	answered() bool
	failNow(err error)
}

// shard is one shard's loop state.
type shard[S Shard] struct {
	rt     *Runtime[S]
	id     int32
	ops    chan *job[S]
	wake   chan struct{}
	done   chan struct{}
	status atomic.Int32 // shardLoading, shardActive, shardFailed
	queued atomic.Int64

	// Loop-owned.
	st          S
	loadedOK    bool
	lease       store.Shard
	extra       []coordinator.Pending // replies the engine itself gave (an operation panicked)
	held        coordinator.Effects   // screened effects waiting for the next Append (store refusing)
	refused     error                 // set by screen: an operation was refused, the shard must reload
	inflight    []*batch              // begun and not yet reported on commitDone, in order
	depth       int                   // batches allowed in flight: 1, or MaxInflight on an OrderedAppender
	gen         uint64                // load generation (appendReq.gen)
	outstanding map[failer]struct{}
	noSnapshot  bool // batches cut now publish nothing (reloadAfterRefusal)
	dedupeIdx   map[uint64]int32
	dedupeSeed  maphash.Seed
	commitDone  chan error     // the committer's results, one per batch, in order
	appends     chan appendReq // to the shard's committer goroutine (stores without OrderedAppender)
	syncs       chan begun     // to the shard's syncer goroutine, in batch order
	stopTimer   func() bool
	timerAt     time.Time

	// Managed mode (lease.go): leases handed over by Serve, unserve requests.
	serveCh   chan store.Shard
	unserveCh chan chan struct{}
	counted   bool // loop-owned: counted in rt.loaded
}

// batch is one Append's records and the replies released when it is durable; publish (may be
// nil) publishes the shard's state as of the batch (Options.Snapshot).
type batch struct {
	records []store.Record
	replies []coordinator.Pending
	publish func()
}

// appendReq is one batch handed to the shard's committer goroutine; gen is the load it was cut
// in (after a failed batch, the later batches of the same load fail too).
type appendReq struct {
	lease store.Shard
	b     *batch
	gen   uint64
}

// begun is a batch the committer began, waiting for its outcome on the syncer.
type begun struct {
	req   appendReq
	start time.Time
	wait  func() error // nil: err is the outcome (an Append, or a batch of replies only)
	err   error
}

// errEarlierBatchFailed fails the batches in flight behind a failed one.
var errEarlierBatchFailed = errors.New("an earlier batch of the shard failed")

const (
	shardLoading int32 = iota
	shardActive
	shardFailed
	shardUnowned // managed mode: no lease here; NOT_COORDINATOR
)

// New creates the runtime; Start loads the shards.
func New[S Shard](opts Options[S]) *Runtime[S] {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.QueueDepth <= 0 {
		opts.QueueDepth = 4096
	}
	if opts.Clock == nil {
		opts.Clock = WallClock{}
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = 16
	}
	rt := &Runtime[S]{opts: opts, log: opts.Log, limited: lograte.New(opts.Log, 30*time.Second), stop: make(chan struct{})}
	for i := int32(0); i < opts.Shards; i++ {
		sh := &shard[S]{rt: rt, id: i, ops: make(chan *job[S], opts.QueueDepth),
			wake: make(chan struct{}, 1), done: make(chan struct{}), depth: 1,
			commitDone: make(chan error, opts.MaxInflight), appends: make(chan appendReq, opts.MaxInflight),
			syncs:   make(chan begun, opts.MaxInflight),
			serveCh: make(chan store.Shard, 1), unserveCh: make(chan chan struct{})}
		if opts.Managed {
			sh.status.Store(shardUnowned)
		}
		rt.shards = append(rt.shards, sh)
	}
	return rt
}

// Start launches every shard loop; shards load concurrently.
func (rt *Runtime[S]) Start() {
	for _, s := range rt.shards {
		rt.wg.Add(1)
		go s.loop()
	}
}

// Close stops every shard after its in-flight batch; queued calls get NOT_COORDINATOR.
func (rt *Runtime[S]) Close() {
	select {
	case <-rt.stop:
	default:
		close(rt.stop)
	}
	rt.wg.Wait()
}

// Ready reports whether every shard is loaded; managed: every shard whose lease this node
// holds.
func (rt *Runtime[S]) Ready() bool {
	if !rt.opts.Managed {
		return int(rt.loaded.Load()) == len(rt.shards)
	}
	for _, s := range rt.shards {
		if st := s.status.Load(); st != shardActive && st != shardUnowned {
			return false
		}
	}
	return true
}

// Active reports whether shard is loaded and serving.
func (rt *Runtime[S]) Active(shard int32) bool {
	return rt.shards[shard].status.Load() == shardActive
}

// Owned reports whether shard is served here (loading or active); always true unmanaged.
func (rt *Runtime[S]) Owned(shard int32) bool {
	return rt.shards[shard].status.Load() != shardUnowned
}

// ShardStatus describes each shard for /readyz and metrics: "loading", "active", "failed" or
// (managed: no lease here) "unowned".
func (rt *Runtime[S]) ShardStatus() []string {
	out := make([]string, len(rt.shards))
	for i, s := range rt.shards {
		out[i] = [...]string{"loading", "active", "failed", "unowned"}[s.status.Load()]
	}
	return out
}

// QueueDepth returns the number of calls waiting in each shard's queue.
func (rt *Runtime[S]) QueueDepth() []int64 {
	out := make([]int64, len(rt.shards))
	for i, s := range rt.shards {
		out[i] = s.queued.Load()
	}
	return out
}

// Shards is the shard count.
func (rt *Runtime[S]) Shards() int32 { return int32(len(rt.shards)) }

// Clock returns the runtime's clock.
func (rt *Runtime[S]) Clock() Clock { return rt.opts.Clock }

// Do runs op on shard and waits for its response. Errors are the operation's own (Call.Fail)
// or the engine's kerr errors: NOT_COORDINATOR when the shard is not served here or its batch
// failed, COORDINATOR_LOAD_IN_PROGRESS while it loads, UNKNOWN_SERVER_ERROR when op panicked,
// or ctx's error.
func Do[S Shard, T any](ctx context.Context, rt *Runtime[S], shard int32, meta coordinator.Meta, op func(s S, c *coordinator.Call[T])) (T, error) {
	var zero T
	s := rt.shards[shard]
	switch s.status.Load() {
	case shardLoading:
		return zero, kerr.CoordinatorLoadInProgress
	case shardFailed, shardUnowned:
		return zero, kerr.NotCoordinator
	}
	w := &waiter[T]{done: make(chan struct{})}
	c := coordinator.NewCall(meta, coordinator.Waiter[T](w))
	j := &job[S]{run: func(st S) { op(st, c) }, w: w}
	s.queued.Add(1)
	select {
	case s.ops <- j:
	case <-ctx.Done():
		s.queued.Add(-1)
		return zero, ctx.Err()
	case <-s.done:
		s.queued.Add(-1)
		return zero, kerr.NotCoordinator
	}
	select {
	case <-w.done:
		return w.resp, w.err
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-s.done:
		select {
		case <-w.done:
			return w.resp, w.err
		default:
			return zero, kerr.NotCoordinator
		}
	}
}

// waiter is a Do caller waiting for its response.
type waiter[T any] struct {
	resp T
	err  error
	set  bool // loop-owned: the response is set (by the shard or the engine)
	fin  atomic.Bool
	done chan struct{}
}

// Set implements coordinator.Waiter: the first response wins.
func (w *waiter[T]) Set(resp T, err error) {
	if w.set {
		return
	}
	w.set, w.resp, w.err = true, resp, err
}

// Release implements coordinator.Pending.
func (w *waiter[T]) Release() {
	if w.fin.CompareAndSwap(false, true) {
		close(w.done)
	}
}

// Fail implements coordinator.Pending.
func (w *waiter[T]) Fail(err error) {
	if w.fin.CompareAndSwap(false, true) {
		var zero T
		w.resp, w.err = zero, err
		close(w.done)
	}
}

func (w *waiter[T]) answered() bool { return w.set }

// failNow answers an unanswered call with err once the batch it may have read is released.
func (w *waiter[T]) failNow(err error) {
	var zero T
	w.Set(zero, err)
}

func (s *shard[S]) loop() {
	defer s.rt.wg.Done()
	defer close(s.done)
	go s.committer()
	go s.syncer()
	// The loop returns only with no batch in flight (shutdown and a failed load wait for it),
	// so closing appends stops the committer, which closes syncs and stops the syncer, without
	// losing a result.
	defer close(s.appends)
	defer func() {
		if s.stopTimer != nil {
			s.stopTimer()
		}
	}()
	if s.rt.opts.Managed {
		s.managed()
		return
	}
	if !s.load() {
		return
	}
	s.serve()
}

// serve runs the loaded shard until the runtime stops (true) or, managed, the shard unloads
// (false: its lease was lost, fenced or taken back by Unserve).
func (s *shard[S]) serve() bool {
	s.armTimer() // timers re-armed by OnLoaded must fire without waiting for a request
	for {
		var lost <-chan struct{}
		if s.rt.opts.Managed && s.lease != nil {
			lost = s.lease.Lost()
		}
		ok := true
		select {
		case <-s.rt.stop:
			s.shutdown()
			return true
		case done := <-s.unserveCh:
			s.shutdown()
			s.unload()
			close(done)
			return false
		case <-lost:
			s.rt.log.Warn("coordinator: shard lease lost; unloading", "shard", s.id, "epoch", s.lease.Epoch())
			s.abandonLease(kerr.NotCoordinator)
			return false
		case j := <-s.ops:
			s.queued.Add(-1)
			s.run(j)
			ok = s.screen() && s.drain()
		case err := <-s.commitDone:
			if !s.committed(err) {
				if s.rt.opts.Managed && s.lease == nil { // fenced: the lease is another node's
					s.unload()
					return false
				}
				if !s.load() {
					return !s.rt.opts.Managed || s.stopping()
				}
				s.armTimer()
				continue
			}
			ok = s.drain() // what queued during the Append joins the next one
		case <-s.wake:
		}
		if ok {
			s.runTimers()
			ok = s.screen()
		}
		if !ok {
			if !s.reloadAfterRefusal() {
				return !s.rt.opts.Managed || s.stopping()
			}
			s.armTimer()
			continue
		}
		s.maybeCommit()
		s.armTimer()
	}
}

// drain runs what is queued (up to 1024 calls) into the current batch; false: an operation was
// refused (screen).
func (s *shard[S]) drain() bool {
	for i := 0; i < 1024; i++ {
		select {
		case j := <-s.ops:
			s.queued.Add(-1)
			s.run(j)
			if !s.screen() {
				return false
			}
		default:
			return true
		}
	}
	return true
}

// screen runs after each operation and timer run. While the store refuses writes it takes what
// was produced: effects with no records, or tombstones only while the store takes deletes, are
// held for the next Append; anything else is refused: the calls that produced it fail with
// Refused, and false tells the loop to reload (reloadAfterRefusal). With the store taking
// writes it costs one atomic load and the effects stay in the shard for the next Append.
func (s *shard[S]) screen() bool {
	g := s.rt.opts.Writes
	if g == nil || !g.Refusing() {
		return true
	}
	e := s.st.TakeEffects()
	if len(e.Records) > 0 {
		deletesOnly := true
		for _, r := range e.Records {
			if r.Value != nil {
				deletesOnly = false
				break
			}
		}
		if err := g.Refuse(deletesOnly); err != nil {
			s.refused = Refused(err)
			s.release(&batch{replies: e.Replies}, s.refused)
			return false
		}
	}
	s.held.Records = append(s.held.Records, e.Records...)
	s.held.Replies = append(s.held.Replies, e.Replies...)
	return true
}

// reloadAfterRefusal restores a shard whose state holds refused records: the batch in flight
// and what earlier operations wrote (held) are appended and their calls answered as those
// Appends decide, the calls still waiting on the shard (pending joins and syncs) fail with the
// refusal, and the shard reloads from the store. false: the runtime is stopping.
func (s *shard[S]) reloadAfterRefusal() bool {
	err := s.refused
	s.refused = nil
	// Loading from here on: the state holds refused records, so the batches cut below publish
	// no snapshot, and readers of the published state wait for the reload.
	s.status.Store(shardLoading)
	s.noSnapshot = true
	defer func() { s.noSnapshot = false }()
	s.rt.limited.LogKey(fmt.Sprintf("refused %d", s.id), slog.LevelWarn,
		"coordinator: refused an operation that writes while the store refuses writes; reloading the shard",
		"shard", s.id, "reason", err)
	if !s.waitInflight() {
		return s.load()
	}
	s.maybeCommit()
	if !s.waitInflight() {
		return s.load()
	}
	s.abandon(err)
	return s.load()
}

// load acquires the lease and replays the shard; it retries with back-off until it succeeds or
// the runtime stops.
func (s *shard[S]) load() bool {
	s.status.Store(shardLoading)
	backoff := 100 * time.Millisecond
	for {
		err := s.tryLoad()
		if err == nil {
			s.status.Store(shardActive)
			s.rt.loaded.Add(1)
			s.counted = true
			return true
		}
		s.status.Store(shardFailed)
		s.rt.limited.LogKey(fmt.Sprintf("load %d", s.id), slog.LevelError, "coordinator: shard load failed", "shard", s.id, "err", err)
		if s.rt.opts.Managed && (errors.Is(err, store.ErrFenced) || s.lease == nil) {
			s.unload()
			return false
		}
		var lost <-chan struct{}
		if s.rt.opts.Managed {
			lost = s.lease.Lost()
		}
		select {
		case <-s.rt.stop:
			return false
		case <-lost:
			s.unload()
			return false
		case done := <-s.unserveCh:
			s.unload()
			close(done)
			return false
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

func (s *shard[S]) tryLoad() error {
	start := time.Now()
	ctx := context.Background()
	if s.lease == nil {
		if s.rt.opts.Managed {
			return store.ErrFenced // the lease is gone; the lease manager hands out a new one
		}
		l, err := s.rt.opts.Store.Acquire(ctx, s.id)
		if err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		s.lease = l
	}
	s.depth = 1
	if _, ok := s.lease.(store.OrderedAppender); ok {
		s.depth = s.rt.opts.MaxInflight
	}
	st := s.rt.opts.New(s.id)
	n := 0
	load, replay := s.lease.Load, st.Replay
	if bl, ok := s.lease.(store.BorrowingLoader); ok {
		load, replay = bl.LoadBorrowed, st.ReplayBorrowed // no copy of offset records
	}
	err := load(ctx, func(r store.Record) error {
		n++
		if err := replay(coordinator.Record(r)); err != nil {
			return fmt.Errorf("record %d (key %x): %w", n, r.Key, err)
		}
		return nil
	})
	if h := s.rt.opts.Hooks.OnLoad; h != nil {
		h(s.id, n, time.Since(start), err)
	}
	if err != nil {
		return err
	}
	s.st, s.loadedOK = st, true
	s.gen++
	s.inflight, s.extra, s.held, s.refused = nil, nil, coordinator.Effects{}, nil
	s.outstanding = map[failer]struct{}{}
	if r := s.rt.opts.Refresh; r != nil {
		r(st)
	}
	st.OnLoaded(s.rt.opts.Clock.Now())
	if sn := s.rt.opts.Snapshot; sn != nil {
		if publish := sn(s.id, st); publish != nil {
			publish()
		}
	}
	return nil
}

// run executes one operation; its effects join the current batch.
func (s *shard[S]) run(j *job[S]) {
	if r := s.rt.opts.Refresh; r != nil {
		r(s.st)
	}
	s.st.SetNow(s.rt.opts.Clock.Now())
	s.outstanding[j.w] = struct{}{}
	defer func() {
		if r := recover(); r != nil {
			s.rt.log.Error("coordinator: operation panicked", "shard", s.id, "panic", r)
			if !j.w.answered() {
				j.w.failNow(kerr.UnknownServerError)
				s.extra = append(s.extra, j.w)
			}
		}
	}()
	j.run(s.st)
}

func (s *shard[S]) runTimers() {
	if r := s.rt.opts.Refresh; r != nil {
		r(s.st)
	}
	s.st.FireTimers(s.rt.opts.Clock.Now())
}

func (s *shard[S]) armTimer() {
	next, ok := s.st.NextDeadline()
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
	d := next.Sub(s.rt.opts.Clock.Now())
	if d < 0 {
		d = 0
	}
	s.stopTimer = s.rt.opts.Clock.AfterFunc(d, func() {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	})
}

// take moves the shard's effects (those held by screen first, and replies the engine gave
// itself) into a batch, keeping the last record per key (a store batch's keys are distinct).
func (s *shard[S]) take() *batch {
	e := s.st.TakeEffects()
	if h := s.held; len(h.Records) > 0 || len(h.Replies) > 0 {
		e.Records = append(h.Records, e.Records...)
		e.Replies = append(h.Replies, e.Replies...)
		s.held = coordinator.Effects{}
	}
	b := &batch{records: s.dedupe(e.Records), replies: e.Replies}
	if len(s.extra) > 0 {
		b.replies = append(b.replies, s.extra...)
		s.extra = nil
	}
	return b
}

// maybeCommit starts an Append of the current effects when fewer than depth batches are in
// flight. The replies of operations that wrote nothing are released at once when no batch is in
// flight, else after the batches in flight (their reads may have seen what those write).
func (s *shard[S]) maybeCommit() {
	if len(s.inflight) >= s.depth {
		return
	}
	b := s.take()
	if len(b.records) == 0 && (len(s.inflight) == 0 || len(b.replies) == 0) {
		s.release(b, nil)
		return
	}
	if sn := s.rt.opts.Snapshot; sn != nil && len(b.records) > 0 && !s.noSnapshot {
		b.publish = sn(s.id, s.st)
	}
	s.inflight = append(s.inflight, b)
	req := appendReq{lease: s.lease, b: b, gen: s.gen}
	oa, ordered := s.lease.(store.OrderedAppender)
	if !ordered {
		s.appends <- req // the whole Append, off the loop
		return
	}
	// Begun here, on the loop, in batch order (it only places the batch in the store's write
	// order: for Pebble an apply to the memtable and the WAL's buffer); the syncer waits.
	bg := begun{req: req, start: time.Now()}
	if len(b.records) > 0 { // else replies only: released after the batches before them
		bg.wait = oa.BeginAppend(context.Background(), b.records)
	}
	s.syncs <- bg
}

// committer is the shard's long-lived Append goroutine for a store without OrderedAppender: it
// runs the Append of each batch the loop hands it (one in flight) and passes the outcome to the
// syncer. A long-lived goroutine keeps its grown stack and saves a goroutine start per batch.
func (s *shard[S]) committer() {
	defer close(s.syncs)
	for req := range s.appends {
		bg := begun{req: req, start: time.Now()}
		if len(req.b.records) > 0 {
			bg.err = req.lease.Append(context.Background(), req.b.records)
		}
		s.syncs <- bg
	}
}

// syncer waits for the shard's batches in the order they were begun, releases the replies of
// each durable one (one goroutine hand-off sooner than through the loop) and reports every
// outcome on commitDone, in order. Once a batch failed, the later batches of the same load fail
// too, whatever their own outcome: the loop fails their calls and reloads the shard.
func (s *shard[S]) syncer() {
	var failedGen uint64 // 0: none (generations start at 1)
	for bg := range s.syncs {
		err := bg.err
		if bg.wait != nil {
			err = bg.wait()
		}
		if err == nil && bg.req.gen == failedGen {
			err = errEarlierBatchFailed
		}
		if err == nil {
			if bg.req.b.publish != nil {
				bg.req.b.publish()
			}
			for _, p := range bg.req.b.replies {
				p.Release()
			}
		} else {
			failedGen = bg.req.gen
		}
		if h := s.rt.opts.Hooks.OnCommit; h != nil && len(bg.req.b.records) > 0 {
			h(s.id, len(bg.req.b.records), time.Since(bg.start), err)
		}
		s.commitDone <- err
	}
}

// committed handles the outcome of the oldest batch in flight; false means the shard must
// reload: the batch failed, and so does every batch in flight after it.
func (s *shard[S]) committed(err error) bool {
	b := s.inflight[0]
	s.inflight[0] = nil
	s.inflight = s.inflight[1:]
	if err == nil {
		for _, p := range b.replies { // released by the syncer already
			if f, ok := p.(failer); ok {
				delete(s.outstanding, f)
			}
		}
		return true
	}
	s.rt.limited.LogKey(fmt.Sprintf("commit %d", s.id), slog.LevelError, "coordinator: batch commit failed; failing its requests and reloading the shard",
		"shard", s.id, "records", len(b.records), "err", err)
	s.release(b, kerr.NotCoordinator)
	for len(s.inflight) > 0 {
		<-s.commitDone
		b := s.inflight[0]
		s.inflight = s.inflight[1:]
		s.release(b, kerr.NotCoordinator)
	}
	s.inflight = nil
	s.abandon(kerr.NotCoordinator)
	if errors.Is(err, store.ErrFenced) {
		s.lease = nil
	}
	return false
}

// waitInflight waits for every batch in flight; false: one failed and the shard must reload.
func (s *shard[S]) waitInflight() bool {
	for len(s.inflight) > 0 {
		if !s.committed(<-s.commitDone) {
			return false
		}
	}
	return true
}

// abandon fails every call not yet answered (the batch being built and the calls waiting on
// the shard) with err and stops the shard's timer, before a reload.
func (s *shard[S]) abandon(err error) {
	s.release(s.take(), err)
	for f := range s.outstanding {
		f.Fail(err)
	}
	if s.stopTimer != nil {
		s.stopTimer()
		s.stopTimer = nil
	}
	if s.counted {
		s.rt.loaded.Add(-1)
		s.counted = false
	}
}

// release sends a batch's replies (err == nil) or fails them with err.
func (s *shard[S]) release(b *batch, err error) {
	for _, p := range b.replies {
		if f, ok := p.(failer); ok {
			delete(s.outstanding, f)
		}
		if err != nil {
			p.Fail(err)
		} else {
			p.Release()
		}
	}
}

// shutdown waits for the batches in flight, commits what is pending, and fails deferred calls.
func (s *shard[S]) shutdown() {
	ok := s.waitInflight()
	if ok && s.loadedOK {
		s.maybeCommit()
		s.waitInflight()
	}
	for f := range s.outstanding {
		f.Fail(kerr.NotCoordinator)
	}
	for {
		select {
		case j := <-s.ops:
			s.queued.Add(-1)
			j.w.Fail(kerr.NotCoordinator)
		default:
			return
		}
	}
}

// dedupe keeps the last record per key, preserving first-seen order of keys. Keys are found
// by a 64-bit hash in the shard's reused index (no allocation per key); a hash shared by two
// different keys falls back to a scan.
func (s *shard[S]) dedupe(recs []coordinator.Record) []store.Record {
	out := make([]store.Record, 0, len(recs))
	if len(recs) < 2 {
		for _, r := range recs {
			out = append(out, store.Record(r))
		}
		return out
	}
	if s.dedupeSeed == (maphash.Seed{}) {
		s.dedupeSeed = maphash.MakeSeed()
	}
	idx := s.dedupeIdx
	if idx == nil || len(recs) > 4096 {
		idx = make(map[uint64]int32, len(recs))
		if len(recs) <= 4096 {
			s.dedupeIdx = idx
		}
	} else {
		clear(idx)
	}
	seed := s.dedupeSeed
	for _, r := range recs {
		h := maphash.Bytes(seed, r.Key)
		if i, ok := idx[h]; ok {
			if bytes.Equal(out[i].Key, r.Key) {
				out[i] = store.Record(r)
				continue
			}
			if j := slices.IndexFunc(out, func(o store.Record) bool { return bytes.Equal(o.Key, r.Key) }); j >= 0 {
				out[j] = store.Record(r)
				continue
			}
			out = append(out, store.Record(r)) // a colliding hash: found by the scan above
			continue
		}
		idx[h] = int32(len(out))
		out = append(out, store.Record(r))
	}
	return out
}
