package diskguard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// How Pebble v2 behaves when a write fails, and what the guard does about it.
//
// A failed WAL write or sync is sticky: the WAL's flusher keeps the error and fails every later
// sync, and a WAL rotation over a failed WAL panics. DB.Apply (Batch.Commit, DB.Set, ...) then
// calls Logger.Fatalf("pebble: fatal commit error: ...") on the committing goroutine, after the
// batch was applied to the memtable (readers may see it) and without holding Pebble's locks;
// if Fatalf returned, Apply would report success for a batch that is not durable. Logger.Fatalf
// therefore marks the guard Failed and panics with fatalCommit, which Guard.Commit (the only way
// muster commits) turns into an error: the batch is refused, nothing is acknowledged, and every
// later write is refused before it reaches Pebble, so no commit runs into the broken pipeline.
//
// The other Fatalf calls come from Pebble's background goroutines (a MANIFEST write failing
// under a flush or a compaction, with DB.mu held) where a panic would end the process and
// returning would let Pebble go on from a state it considers corrupt (its comment prefers
// fatal to unwinding file reference counts). Fatalf marks the guard Failed and parks that
// goroutine for good: Pebble's files stay as they were (a restart recovers them), reads go on,
// writes are refused.
//
// A failed flush or compaction is not fatal: Pebble reports it to EventListener.BackgroundError
// and retries at once, without back-off. The guard's FS sleeps after a table write fails with
// ENOSPC (100 ms, doubling to 5 s, reset by a table write that succeeds) and the errors are
// logged through a rate limiter (first line, then one summary with a count per 30 s).
//
// The free-space threshold keeps all of this rare: writes that grow the store stop while
// Pebble still has room for its WAL, its flushes and its compactions.

// fatalCommit is the panic of Logger.Fatalf on a commit; Guard.Commit recovers it.
type fatalCommit struct{ msg string }

// Logger is Pebble's logger for a guarded store: informational lines at debug level, errors
// rate-limited, and no Fatalf ends the process (see above).
type Logger struct{ g *Guard }

// PebbleLogger returns the logger to pass in pebble.Options.Logger.
func (g *Guard) PebbleLogger() Logger { return Logger{g} }

// Infof implements pebble.Logger.
func (l Logger) Infof(format string, args ...any) {
	l.g.log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

// Errorf implements pebble.Logger.
func (l Logger) Errorf(format string, args ...any) {
	l.g.pebbleLog.Log(slog.LevelError, "pebble: "+fmt.Sprintf(format, args...))
}

// Fatalf implements pebble.Logger: the store is marked failed; a commit's goroutine panics
// (recovered by Guard.Commit), any other goroutine is parked.
func (l Logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.g.pebbleLog.Log(slog.LevelError, "pebble fatal: "+msg)
	l.g.Fail(errors.New(strings.TrimPrefix(msg, "pebble: ")))
	if strings.HasPrefix(msg, "pebble: fatal commit error") {
		panic(fatalCommit{msg})
	}
	select {} // see the package comment: neither returning nor exiting is safe here
}

// EventListener returns Pebble's event listener for a guarded store: background errors (failed
// flushes and compactions) are counted, logged through the rate limiter and, when the disk is
// full, trigger a free-space check; data corruption found by a read is logged (the read fails
// with an error) instead of Pebble's default Fatalf.
func (g *Guard) EventListener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			g.bgErrs.Add(1)
			if errors.Is(err, syscall.ENOSPC) {
				g.CheckNow()
			}
			g.pebbleLog.Log(slog.LevelError, "pebble: background error: "+err.Error())
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			g.pebbleLog.Log(slog.LevelError, "pebble: data corruption: "+info.String())
		},
	}
}

// CommitError is a commit that failed inside the store: it may be visible to readers until a
// restart (Pebble applies a batch to its memtable before its WAL sync reports), it was not
// acknowledged, and the store takes no more writes.
type CommitError struct{ Reason string }

func (e *CommitError) Error() string { return "the store failed during the write: " + e.Reason }

// Is makes errors.Is(err, ErrStoreFailed) hold.
func (e *CommitError) Is(target error) bool { return target == ErrStoreFailed }

// Commit runs commit, one write of kind w to the Pebble store (Batch.Commit, DB.Set, ...),
// unless the guard refuses it (a *RefusedError: nothing was written). A Pebble fatal commit
// error, or any panic out of commit, marks the store failed and returns a *CommitError. Every
// write to the store goes through Commit; on the fast path it costs one atomic load.
func (g *Guard) Commit(w Write, commit func() error) (err error) {
	if g == nil {
		return commit()
	}
	if err := g.Refuse(w); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			reason := fmt.Sprint(r)
			if f, ok := r.(fatalCommit); ok {
				reason = f.msg
			}
			g.Fail(errors.New(reason))
			err = &CommitError{Reason: reason}
		}
	}()
	return commit()
}

// FS wraps fs for a guarded store: an ENOSPC from a write or sync makes the guard check the
// free space at once, and one from a table file (a flush or compaction output) is followed by a
// back-off sleep, so that Pebble, which retries a failed flush at once, does not spin on a full
// disk.
func (g *Guard) FS(fs vfs.FS) vfs.FS { return &guardFS{FS: fs, g: g} }

type guardFS struct {
	vfs.FS
	g *Guard
}

func (fs *guardFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		fs.g.noteWriteErr(name, err)
		return f, err
	}
	return &guardFile{File: f, g: fs.g, name: name}, nil
}

// Create implements vfs.FS.
func (fs *guardFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

// OpenReadWrite implements vfs.FS.
func (fs *guardFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

// ReuseForWrite implements vfs.FS.
func (fs *guardFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

// Unwrap returns the wrapped FS.
func (fs *guardFS) Unwrap() vfs.FS { return fs.FS }

type guardFile struct {
	vfs.File
	g    *Guard
	name string
}

func (f *guardFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		f.g.noteWriteErr(f.name, err)
	}
	return n, err
}

func (f *guardFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	if err != nil {
		f.g.noteWriteErr(f.name, err)
	}
	return n, err
}

func (f *guardFile) Sync() error { return f.synced(f.File.Sync()) }

func (f *guardFile) SyncData() error { return f.synced(f.File.SyncData()) }

func (f *guardFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.synced(err)
}

func (f *guardFile) synced(err error) error {
	if err != nil {
		f.g.noteWriteErr(f.name, err)
	} else if isTable(f.name) {
		f.g.backoff.Store(0)
	}
	return err
}

func isTable(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// noteWriteErr reacts to a failed write of file name: a free-space check for ENOSPC, and a
// back-off sleep when a table write found the disk full.
func (g *Guard) noteWriteErr(name string, err error) {
	if !errors.Is(err, syscall.ENOSPC) {
		return
	}
	g.CheckNow()
	if !isTable(name) {
		return
	}
	d := time.Duration(g.backoff.Load())
	switch {
	case d == 0:
		d = minBackoff
	case d < maxBackoff:
		d = min(2*d, maxBackoff)
	}
	g.backoff.Store(int64(d))
	select {
	case <-time.After(d):
	case <-g.stop:
	}
}

// reclaimer compacts the key ranges of deletes while the store refuses writes, so that the
// space of deleted records comes back now, not at Pebble's next compaction: Pebble frees the
// space of deleted keys only when the memtable holding them is flushed (its WAL files are then
// deleted) and the tables holding them are compacted.
type reclaimer struct {
	compact func(ctx context.Context, start, end []byte) error
	ctx     context.Context
	cancel  context.CancelFunc
	work    chan [2][]byte
	done    chan struct{}
	started bool
}

func (r *reclaimer) init() {
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.work = make(chan [2][]byte, 1024)
	r.done = make(chan struct{})
}

// StartReclaimer lets Reclaim compact ranges of db; call it once, before writes begin, and
// Close the guard before db.
func (g *Guard) StartReclaimer(db *pebble.DB) {
	g.reclaim.compact = func(ctx context.Context, start, end []byte) error {
		return db.Compact(ctx, start, end, false)
	}
	g.reclaim.started = true
	go g.reclaimLoop()
}

// Reclaim tells the guard that the keys in [start, end) were deleted. While the store refuses
// writes, the range is compacted in the background and the free space checked again after it;
// otherwise Pebble's own compactions reclaim the space in due course.
func (g *Guard) Reclaim(start, end []byte) {
	if g == nil || !g.reclaim.started || !g.Refusing() || g.cur.Load().state == Failed {
		return
	}
	select {
	case g.reclaim.work <- [2][]byte{append([]byte(nil), start...), append([]byte(nil), end...)}:
	default: // a thousand ranges queued: the ones before cover enough
	}
}

func (g *Guard) reclaimLoop() {
	defer close(g.reclaim.done)
	for {
		select {
		case <-g.reclaim.ctx.Done():
			return
		case span := <-g.reclaim.work:
			if s := g.cur.Load().state; s == OK || s == Failed {
				continue // no longer needed, or a flush would meet a broken WAL
			}
			start := time.Now()
			err := g.reclaim.compact(g.reclaim.ctx, span[0], span[1])
			if err != nil && g.reclaim.ctx.Err() == nil {
				g.pebbleLog.Log(slog.LevelWarn, "storage: compacting deleted records to free space failed", "err", err)
			} else {
				g.log.Debug("storage: compacted deleted records to free space", "took", time.Since(start))
			}
			g.CheckNow()
		}
	}
}

func (r *reclaimer) wait() {
	r.cancel()
	if r.started {
		<-r.done
	}
}
