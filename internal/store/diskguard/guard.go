// Package diskguard keeps a full or failing disk from taking muster down. A Guard watches the
// free space of the data dir (statfs, every few hundred milliseconds and at once after a write
// error) and the health of the store, and tells every writer whether it may write:
//
//   - OK: everything is written.
//   - LowSpace: the free space fell below muster.storage.min.free.bytes or
//     muster.storage.min.free.ratio of the file system. Writes that grow the store (Produce,
//     CreateTopics, CreatePartitions, group writes) are refused with a retriable error; writes
//     that free space (DeleteRecords, DeleteTopics, retention, log compaction, deletes of
//     groups and offsets) and small metadata writes (configs, leases, producer ids) go on, so an
//     operator can free space with Kafka's own tools. The state ends by itself once the free
//     space is back above the threshold plus a tenth of it (hysteresis).
//   - StoreError: a write failed with an error that did not break the store (a failed batch of
//     another store, an injected fault). Writes are refused as in LowSpace until a probe write
//     succeeds.
//   - Failed: the store cannot write any more. Pebble's commit pipeline does not survive a
//     failed WAL write or sync (Pebble calls Logger.Fatalf; see Logger): every write is refused
//     until a restart, /readyz reports not ready with the reason, and reads go on.
//
// The state is logged once when it is entered and once when it is left. Writers ask with one
// atomic load (Refuse, Refusing); the fast path makes no system call.
package diskguard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/muster-io/muster/internal/lograte"
)

// State is what the store accepts now.
type State int32

// The states, from healthy to broken.
const (
	OK State = iota
	LowSpace
	StoreError
	Failed
)

func (s State) String() string {
	return [...]string{"ok", "low_disk_space", "store_error", "store_failed"}[s]
}

// Write is the kind of a write, for the refusal policy and the refusal counters.
type Write int

// The kinds of writes. The first four grow the store and are refused while space is short;
// the rest are refused only when the store failed.
const (
	Produce Write = iota
	CreateTopics
	CreatePartitions
	GroupWrite // coordinator records with values (offsets, group metadata, members)
	GroupDelete
	DeleteRecords
	DeleteTopics
	Retention
	Compaction
	Configs // topic, broker and group configs
	ProducerIDs
	Lease // coordinator shard leases
	// TxnMarker is a transaction marker in a data partition: refused only when the store
	// failed, so transactions already prepared can always finish (and the last stable offset
	// move on) while space is short.
	TxnMarker
	numWrites
)

var writeNames = [numWrites]string{"produce", "create_topics", "create_partitions", "group_write",
	"group_delete", "delete_records", "delete_topics", "retention", "compaction", "configs",
	"producer_ids", "lease", "txn_marker"}

func (w Write) String() string { return writeNames[w] }

// grows reports whether w adds data (refused while space is short).
func (w Write) grows() bool { return w <= GroupWrite }

// Writes lists every kind of write (metrics).
func Writes() []Write {
	out := make([]Write, numWrites)
	for i := range out {
		out[i] = Write(i)
	}
	return out
}

// ErrRefused matches every error the guard returns for a refused write (errors.Is).
var ErrRefused = errors.New("storage refuses writes")

// ErrStoreFailed matches the refusals and commit errors of a failed store (errors.Is).
var ErrStoreFailed = errors.New("store failed")

// RefusedError is a write the guard refused: why, and in which state.
type RefusedError struct {
	State  State
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrRefused) hold for every refusal, and errors.Is(err,
// ErrStoreFailed) for those of a failed store.
func (e *RefusedError) Is(target error) bool {
	return target == ErrRefused || (target == ErrStoreFailed && e.State == Failed)
}

// Options configure a Guard.
type Options struct {
	// Dir is a directory on the file system to watch (the store's).
	Dir string
	// MinFreeBytes and MinFreeRatio are muster.storage.min.free.bytes and
	// muster.storage.min.free.ratio: writes that grow the store are refused while the free space
	// is below the larger of MinFreeBytes and MinFreeRatio × the file system's size. Both 0: the
	// free space is not watched.
	MinFreeBytes int64
	MinFreeRatio float64
	// Interval between free-space checks (default 250 ms).
	Interval time.Duration
	Log      *slog.Logger
	// DiskUsage reads the space available to this process and the size of the file system
	// holding dir (default: statfs through Pebble's vfs).
	DiskUsage func(dir string) (avail, total uint64, err error)
	// Probe writes a little durably; StoreError ends when it succeeds (nil: at the next check).
	Probe func() error
}

// Status is the guard's view of the store.
type Status struct {
	State State
	// Reason explains a state other than OK ("" when OK).
	Reason string
	// Since is when the state was entered.
	Since time.Time
	// Free and Total are the bytes available to muster and the file system's size at the last
	// check; Threshold is the free space below which writes that grow the store are refused,
	// Resume the free space at which they resume.
	Free, Total, Threshold, Resume uint64
	// Episodes counts the times the store stopped taking writes since start.
	Episodes uint64
}

// snapshot is the immutable current state writers read with one atomic load.
type snapshot struct {
	state State
	err   *RefusedError // nil when OK
}

// Guard watches the disk and the store; its methods are safe for concurrent use, and those of a
// nil Guard allow everything.
type Guard struct {
	opts Options
	log  *slog.Logger
	// Pebble is the rate-limited log of Pebble's errors (Logger, EventListener).
	pebbleLog *lograte.Limiter

	cur     atomic.Pointer[snapshot]
	refused [4][numWrites]atomic.Int64 // by State (reason) and Write
	bgErrs  atomic.Int64
	// budget is half the free space above the threshold at the last check, less what Spend
	// reported since: a check runs as soon as it is spent, so a burst of writes cannot run far
	// past the threshold between two periodic checks.
	budget atomic.Int64

	mu       sync.Mutex // orders state changes and guards the fields below
	status   Status
	storeErr string // the write error that entered StoreError
	failure  string // why the store failed ("" = not failed)

	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	startOnce sync.Once
	stopOnce  sync.Once

	reclaim reclaimer
	backoff atomic.Int64 // ns to wait after an ENOSPC of a table write (FS)
}

// New returns a Guard; Start begins watching.
func New(opts Options) *Guard {
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.DiskUsage == nil {
		opts.DiskUsage = func(dir string) (uint64, uint64, error) {
			u, err := vfs.Default.GetDiskUsage(dir)
			return u.AvailBytes, u.TotalBytes, err
		}
	}
	g := &Guard{opts: opts, log: opts.Log, pebbleLog: lograte.New(opts.Log, 30*time.Second),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	g.cur.Store(&snapshot{state: OK})
	g.status.Since = time.Now()
	g.reclaim.init()
	return g
}

// Start checks the free space once (so a broker starting on a full disk starts degraded) and
// then every Interval until Close.
func (g *Guard) Start() {
	g.startOnce.Do(func() {
		g.check()
		go g.loop()
	})
}

// Close stops watching (and any space reclaim in progress).
func (g *Guard) Close() {
	if g == nil {
		return
	}
	g.stopOnce.Do(func() { close(g.stop) })
	g.startOnce.Do(func() { close(g.done) }) // never started
	<-g.done
	g.reclaim.wait()
}

func (g *Guard) loop() {
	defer close(g.done)
	t := time.NewTicker(g.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		case <-g.wake:
		}
		g.check()
		g.pebbleLog.Flush()
	}
}

// CheckNow asks for a check at once (after a write error); it does not wait for it.
func (g *Guard) CheckNow() {
	if g == nil {
		return
	}
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Refusing reports whether some writes are refused now: one atomic load, the fast path of
// every writer.
func (g *Guard) Refusing() bool {
	return g != nil && g.cur.Load().state != OK
}

// Refuse returns nil when a write of kind w may proceed, else why not (a *RefusedError; the
// refusal is counted).
func (g *Guard) Refuse(w Write) error {
	if g == nil {
		return nil
	}
	s := g.cur.Load()
	if s.state == OK || (s.state != Failed && !w.grows()) {
		return nil
	}
	g.refused[s.state][w].Add(1)
	return s.err
}

// Spend tells the guard that about n bytes are being written; when the writes since the last
// check may have used half the room above the threshold, a check runs at once. One atomic add.
func (g *Guard) Spend(n int) {
	if g != nil && g.budget.Add(-int64(n)) < 0 {
		g.CheckNow()
	}
}

// Refused returns how many writes of kind w were refused in state s since start.
func (g *Guard) Refused(s State, w Write) int64 {
	if g == nil {
		return 0
	}
	return g.refused[s][w].Load()
}

// BackgroundErrors counts the errors Pebble reported from flushes and compactions.
func (g *Guard) BackgroundErrors() int64 {
	if g == nil {
		return 0
	}
	return g.bgErrs.Load()
}

// Status returns the current state with the last free-space figures.
func (g *Guard) Status() Status {
	if g == nil {
		return Status{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.status
}

// Fail moves the guard to Failed for good: the store cannot write any more.
func (g *Guard) Fail(reason error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	if g.failure == "" {
		g.failure = reason.Error()
	}
	g.mu.Unlock()
	g.check()
}

// ReportError tells the guard that a write failed with err. A refusal, a failed store or a
// lost lease changes nothing; a full disk is seen by the free-space check that runs at once;
// any other error moves the guard to StoreError until a probe write succeeds.
func (g *Guard) ReportError(err error) {
	if g == nil || err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrStoreFailed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	if errors.Is(err, syscall.ENOSPC) {
		g.CheckNow()
		return
	}
	g.mu.Lock()
	if g.storeErr == "" {
		g.storeErr = err.Error()
	}
	g.mu.Unlock()
	g.check()
}

// threshold is the free space below which writes that grow the store are refused.
func (g *Guard) threshold(total uint64) uint64 {
	t := uint64(max(g.opts.MinFreeBytes, 0))
	if r := uint64(g.opts.MinFreeRatio * float64(total)); r > t {
		t = r
	}
	return t
}

// check reads the free space, probes the store when a write failed, and moves to the state
// they call for.
func (g *Guard) check() {
	avail, total, derr := g.opts.DiskUsage(g.opts.Dir)
	// The probe write runs unlocked: a store that fails it calls Fail (through Pebble's
	// Logger.Fatalf), which checks again.
	g.mu.Lock()
	needProbe := g.storeErr != "" && g.failure == ""
	g.mu.Unlock()
	probed := needProbe && (g.opts.Probe == nil || g.probe() == nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	if probed {
		g.storeErr = ""
	}
	st := &g.status
	prev := g.cur.Load().state
	if derr == nil {
		st.Free, st.Total = avail, total
		st.Threshold = g.threshold(total)
		st.Resume = st.Threshold + st.Threshold/10
		if st.Threshold > 0 && st.Free > st.Threshold {
			g.budget.Store(int64(st.Free-st.Threshold) / 2)
		} else {
			g.budget.Store(1 << 62) // no threshold, or refusing already
		}
	} else {
		g.pebbleLog.Log(slog.LevelWarn, "storage: reading the free space of the data dir failed", "dir", g.opts.Dir, "err", derr)
	}
	next, reason := OK, ""
	low := st.Threshold > 0 && (st.Free < st.Threshold || (prev == LowSpace && st.Free < st.Resume))
	switch {
	case g.failure != "":
		next = Failed
		reason = "the store failed and takes no writes until muster restarts: " + g.failure
	case g.storeErr != "":
		next = StoreError
		reason = "a write to the store failed; writes are refused until a probe write succeeds: " + g.storeErr
	case low && st.Free < st.Threshold:
		next = LowSpace
		reason = fmt.Sprintf("free disk space %s is below the threshold %s (muster.storage.min.free.bytes, muster.storage.min.free.ratio); writes that grow the store are refused until %s are free",
			bytesString(st.Free), bytesString(st.Threshold), bytesString(st.Resume))
	case low:
		next = LowSpace
		reason = fmt.Sprintf("free disk space %s is back above the threshold %s but not yet above %s (threshold + 10 %%); writes that grow the store are refused until then",
			bytesString(st.Free), bytesString(st.Threshold), bytesString(st.Resume))
	}
	if next == prev && (next == OK || reason == st.Reason) {
		return
	}
	if next == prev {
		// Same state, new figures: keep the reason current without logging.
		st.Reason = reason
		g.cur.Store(&snapshot{state: next, err: &RefusedError{State: next, Reason: reason}})
		return
	}
	now := time.Now()
	st.State, st.Reason, st.Since = next, reason, now
	if next == OK {
		g.cur.Store(&snapshot{state: OK})
		g.log.Info("storage: writes resume", "was", prev.String(), "free_bytes", st.Free, "threshold_bytes", st.Threshold)
	} else {
		if prev == OK {
			st.Episodes++
		}
		g.cur.Store(&snapshot{state: next, err: &RefusedError{State: next, Reason: reason}})
		lvl := slog.LevelWarn
		if next == Failed {
			lvl = slog.LevelError
		}
		g.log.Log(context.Background(), lvl, "storage: degraded, refusing writes", "state", next.String(), "reason", reason,
			"free_bytes", st.Free, "threshold_bytes", st.Threshold)
	}
}

// probe runs the probe write, turning a panic (a Pebble fatal) into a failed store.
func (g *Guard) probe() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("probe write: %v", r)
			g.mu.Lock()
			if g.failure == "" {
				g.failure = err.Error()
			}
			g.mu.Unlock()
		}
	}()
	return g.opts.Probe()
}

// bytesString is n in binary units, e.g. "9.5 MiB".
func bytesString(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
