package diskguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestWALWriteFaultFailsTheStoreWithoutPanic: Pebble's WAL writes fail (errorfs). The commit
// that meets the fault returns a *CommitError instead of ending the process, the guard is
// Failed, later writes are refused before they reach Pebble, reads go on, and the files on disk
// reopened hold every acknowledged write and none of the refused ones.
func TestWALWriteFaultFailsTheStoreWithoutPanic(t *testing.T) {
	dir := t.TempDir()
	var on atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return errorfs.ErrInjected
		}
		return nil
	})
	d := &fakeDisk{}
	d.total.Store(1 << 30)
	d.avail.Store(1 << 29)
	g, lb := newTestGuard(t, d, Options{MinFreeBytes: 1 << 20})
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{
		Logger: g.PebbleLogger(), EventListener: g.EventListener(), FS: g.FS(errorfs.Wrap(vfs.Default, inj)),
	})
	if err != nil {
		t.Fatal(err)
	}
	set := func(k string) error {
		return g.Commit(Produce, func() error { return db.Set([]byte(k), []byte("v"), pebble.Sync) })
	}
	for i := 0; i < 10; i++ {
		if err := set(fmt.Sprintf("acked-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	on.Store(true)
	err = set("unacked")
	var ce *CommitError
	if !errors.As(err, &ce) || !errors.Is(err, ErrStoreFailed) {
		t.Fatalf("commit during a WAL fault: %v", err)
	}
	t.Logf("commit during a WAL write fault: %v", err)
	if s := g.Status(); s.State != Failed || !strings.Contains(s.Reason, "fatal commit error") {
		t.Fatalf("guard after the fault: %+v", s)
	}
	on.Store(false)
	for _, w := range Writes() {
		err := g.Commit(w, func() error { t.Fatalf("%s reached Pebble after it failed", w); return nil })
		if !errors.Is(err, ErrStoreFailed) || !errors.Is(err, ErrRefused) {
			t.Fatalf("%s after the failure: %v", w, err)
		}
	}
	if v, closer, err := db.Get([]byte("acked-9")); err != nil || string(v) != "v" {
		t.Fatalf("read after the failure: %q %v", v, err)
	} else {
		closer.Close()
	}
	if strings.Count(lb.String(), "storage: degraded") != 1 {
		t.Fatalf("want one degraded line:\n%s", lb.String())
	}
	// The DB is abandoned (its commit pipeline is dead); a copy of the files stands in for the
	// disk after a restart.
	after := filepath.Join(t.TempDir(), "after")
	if err := os.CopyFS(after, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(after, "pebble", "LOCK"))
	db2, err := pebble.Open(filepath.Join(after, "pebble"), &pebble.Options{Logger: g.PebbleLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for i := 0; i < 10; i++ {
		if _, closer, err := db2.Get([]byte(fmt.Sprintf("acked-%d", i))); err != nil {
			t.Fatalf("acknowledged write %d lost: %v", i, err)
		} else {
			closer.Close()
		}
	}
	if _, _, err := db2.Get([]byte("unacked")); !errors.Is(err, pebble.ErrNotFound) {
		t.Logf("the failed write survived on disk (an ambiguous outcome, never acknowledged): %v", err)
	}
}

// TestPebbleErrorsAreRateLimited: ten thousand identical background errors (file numbers
// differ) write one log line.
func TestPebbleErrorsAreRateLimited(t *testing.T) {
	d := &fakeDisk{}
	d.total.Store(1 << 30)
	d.avail.Store(1 << 29)
	g, lb := newTestGuard(t, d, Options{})
	el := g.EventListener()
	for i := 0; i < 10000; i++ {
		el.BackgroundError(fmt.Errorf("write /data/pebble/%06d.sst: %w", i, syscall.ENOSPC))
	}
	if n := strings.Count(lb.String(), "\n"); n != 1 {
		t.Fatalf("%d log lines for 10,000 identical errors:\n%s", n, lb.String())
	}
	if g.BackgroundErrors() != 10000 {
		t.Fatalf("counted %d background errors", g.BackgroundErrors())
	}
}

// TestTableENOSPCBacksOff: a table write that finds the disk full waits before it returns,
// longer each time, so Pebble's immediate flush retries do not spin; a WAL write does not wait.
func TestTableENOSPCBacksOff(t *testing.T) {
	d := &fakeDisk{}
	d.total.Store(1 << 30)
	d.avail.Store(1 << 29)
	g, _ := newTestGuard(t, d, Options{})
	start := time.Now()
	g.noteWriteErr("/d/000012.log", fmt.Errorf("write: %w", syscall.ENOSPC))
	if time.Since(start) > 50*time.Millisecond {
		t.Fatal("a WAL write waited")
	}
	start = time.Now()
	g.noteWriteErr("/d/000013.sst", fmt.Errorf("write: %w", syscall.ENOSPC))
	g.noteWriteErr("/d/000014.sst", fmt.Errorf("write: %w", syscall.ENOSPC))
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("two table ENOSPCs waited %v, want ≥ 100 + 200 ms", el)
	}
}
