package storefault_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/storefault"
)

// fatalLogger records Pebble's Fatalf and ends the calling goroutine instead of the process, so
// the test can inspect what a crashing broker would leave behind.
type fatalLogger struct {
	quiet
	fatal atomic.Pointer[string]
}

func (f *fatalLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.fatal.Store(&msg)
	runtime.Goexit()
}

// TestDiskWriteFault fails Pebble's WAL writes at the file-system level (errorfs). Pebble
// treats a failed WAL write or sync as fatal (Logger.Fatalf, here a logger that ends the
// calling goroutine; the broker's, diskguard.Logger, turns it into an error and fails the store:
// TestWALFaultFailsTheNodeWithoutPanic): the commit that hit the fault is never acknowledged,
// and a restart from the files on disk has every acknowledged commit.
func TestDiskWriteFault(t *testing.T) {
	dir := t.TempDir()
	var on atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return errorfs.ErrInjected
		}
		return nil
	})
	lg := &fatalLogger{}
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: lg, FS: errorfs.Wrap(vfs.Default, inj)})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := store.OpenPebble(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, db: db, fs: storefault.Wrap(ps), timeout: time.Second}
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	e.rt, e.svc = newCoordinator(cfg, e.fs, slog.New(slog.DiscardHandler))
	e.rt.Start()
	e.waitReady()
	if c := e.commit("g", 0, 1); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	on.Store(true)
	if c := e.commit("g", 0, 2); c == 0 {
		t.Fatal("a commit whose WAL write failed was acknowledged")
	} else {
		t.Logf("commit during a WAL write fault: %v", kerr.ErrorForCode(c))
	}
	if m := lg.fatal.Load(); m == nil {
		t.Fatal("Pebble did not treat the WAL write fault as fatal")
	} else {
		t.Logf("pebble: %s", *m)
	}
	// The "crashed" runtime and DB are abandoned (their commit pipeline is dead); a copy of the
	// files stands in for the disk after a restart.
	after := filepath.Join(t.TempDir(), "after")
	if err := os.CopyFS(after, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(after, "pebble", "LOCK"))
	r := open(t, after)
	defer r.close()
	if got := r.fetch("g"); got[0] != 1 {
		t.Fatalf("after restart: committed %v, acknowledged {0: 1}", got)
	}
}

// TestDiskReadFault fails reads of Pebble's table files (errorfs). At open, Pebble refuses to
// open (so the broker refuses to start). While a shard loads, the load fails with an error (no
// panic), the shard reports "failed" and retries, and once the disk reads again it loads every
// acknowledged commit.
func TestDiskReadFault(t *testing.T) {
	dir := t.TempDir()
	var on atomic.Bool
	var hits atomic.Int64
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && strings.HasSuffix(op.Path, ".sst") && op.Kind.ReadOrWrite() == errorfs.OpIsRead {
			hits.Add(1)
			return errorfs.ErrInjected
		}
		return nil
	})
	// Commit, flush to a table file and close.
	{
		e := open(t, dir)
		for p := int32(0); p < 50; p++ {
			if c := e.commit("g", p, int64(100+p)); c != 0 {
				t.Fatal(kerr.ErrorForCode(c))
			}
		}
		if err := e.db.Flush(); err != nil {
			t.Fatal(err)
		}
		e.close()
	}
	// Table reads failing already at open: Pebble refuses to open (the broker refuses to start).
	on.Store(true)
	if _, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: quiet{}, FS: errorfs.Wrap(vfs.Default, inj)}); err == nil {
		t.Fatal("pebble opened although its table reads fail")
	} else {
		t.Logf("open with failing table reads: %v", err)
	}
	os.Remove(filepath.Join(dir, "pebble", "LOCK"))
	// Reopen healthy, with a block cache too small to keep anything, then fail table reads
	// before the shard loads.
	on.Store(false)
	cache := pebble.NewCache(1)
	defer cache.Unref()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: quiet{}, FS: errorfs.Wrap(vfs.Default, inj), Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := store.OpenPebble(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	on.Store(true)
	e := &env{t: t, dir: dir, db: db, fs: storefault.Wrap(ps)}
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	e.rt, e.svc = newCoordinator(cfg, e.fs, slog.New(slog.DiscardHandler))
	e.rt.Start()
	defer e.close()
	for deadline := time.Now().Add(10 * time.Second); e.rt.ShardStatus()[0] != "failed"; {
		if time.Now().After(deadline) {
			t.Fatalf("shard did not fail while its table reads fail (status %v, %d injected read errors)", e.rt.ShardStatus(), hits.Load())
		}
		time.Sleep(time.Millisecond)
	}
	on.Store(false)
	e.waitReady()
	got := e.fetch("g")
	for p := int32(0); p < 50; p++ {
		if got[p] != int64(100+p) {
			t.Fatalf("after the read fault cleared: partition %d committed %d, want %d", p, got[p], 100+p)
		}
	}
	t.Logf("%d injected table read errors; shard failed, retried and loaded 50 offsets", hits.Load())
}
