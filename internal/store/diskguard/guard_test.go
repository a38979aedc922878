package diskguard

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDisk is a file system whose free space the test sets.
type fakeDisk struct {
	avail, total atomic.Uint64
}

func (d *fakeDisk) usage(string) (uint64, uint64, error) { return d.avail.Load(), d.total.Load(), nil }

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newTestGuard(t testing.TB, d *fakeDisk, opts Options) (*Guard, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	opts.Log = slog.New(slog.NewTextHandler(lb, nil))
	opts.DiskUsage = d.usage
	opts.Interval = time.Hour // the test drives check()
	g := New(opts)
	g.Start()
	t.Cleanup(g.Close)
	return g, lb
}

// TestLowSpaceHysteresis: below the threshold the guard refuses exactly the writes that grow the
// store, logs once on entry and once on exit, and leaves only above the threshold plus a tenth.
func TestLowSpaceHysteresis(t *testing.T) {
	d := &fakeDisk{}
	d.total.Store(1000 << 20)
	d.avail.Store(500 << 20)
	g, lb := newTestGuard(t, d, Options{MinFreeBytes: 100 << 20, MinFreeRatio: 0.05})
	if g.Refusing() || g.Refuse(Produce) != nil {
		t.Fatal("refusing with 500 MiB free")
	}
	if s := g.Status(); s.Threshold != 100<<20 || s.Resume != 110<<20 {
		t.Fatalf("threshold %d resume %d", s.Threshold, s.Resume)
	}
	d.avail.Store(99 << 20)
	for i := 0; i < 5; i++ {
		g.check()
	}
	if !g.Refusing() {
		t.Fatal("not refusing below the threshold")
	}
	for _, w := range Writes() {
		err := g.Refuse(w)
		if w.grows() != (err != nil) {
			t.Errorf("%s: refused=%v, want %v", w, err != nil, w.grows())
		}
		if err != nil && (!errors.Is(err, ErrRefused) || errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), "below the threshold 100.0 MiB")) {
			t.Errorf("%s: %v", w, err)
		}
	}
	if n := g.Refused(LowSpace, Produce); n != 1 {
		t.Fatalf("refused produce counted %d", n)
	}
	d.avail.Store(105 << 20) // above the threshold, below threshold + 10 %
	g.check()
	if !g.Refusing() {
		t.Fatal("left the low-space state inside the hysteresis band")
	}
	d.avail.Store(111 << 20)
	g.check()
	g.check()
	if g.Refusing() || g.Refuse(Produce) != nil {
		t.Fatal("still refusing above threshold + 10 %")
	}
	out := lb.String()
	if strings.Count(out, "storage: degraded") != 1 || strings.Count(out, "storage: writes resume") != 1 {
		t.Fatalf("want one entry and one exit line:\n%s", out)
	}
	if s := g.Status(); s.Episodes != 1 || s.State != OK {
		t.Fatalf("status %+v", s)
	}
	// The ratio wins on a large file system.
	d.total.Store(10 << 30)
	d.avail.Store(400 << 20)
	g.check()
	if s := g.Status(); s.Threshold != uint64(0.05*float64(10<<30)) || s.State != LowSpace {
		t.Fatalf("ratio threshold: %+v", s)
	}
}

// TestStartsDegradedOnFullDisk: Start checks before it returns.
func TestStartsDegradedOnFullDisk(t *testing.T) {
	d := &fakeDisk{}
	d.total.Store(40 << 20)
	d.avail.Store(1 << 20)
	g, _ := newTestGuard(t, d, Options{MinFreeBytes: 8 << 20})
	if s := g.Status(); s.State != LowSpace || !strings.Contains(s.Reason, "1.0 MiB is below the threshold 8.0 MiB") {
		t.Fatalf("status after Start on a full disk: %+v", s)
	}
}

// TestStoreErrorProbe: a failed write refuses writes until a probe write succeeds; a failed
// store never recovers.
func TestStoreErrorProbe(t *testing.T) {
	d := &fakeDisk{}
	d.total.Store(1 << 30)
	d.avail.Store(1 << 29)
	var probeErr atomic.Pointer[error]
	bad := errors.New("injected")
	probeErr.Store(&bad)
	g, _ := newTestGuard(t, d, Options{MinFreeBytes: 1 << 20, Probe: func() error { return *probeErr.Load() }})
	g.ReportError(errors.New("batch commit: disk on fire"))
	if s := g.Status(); s.State != StoreError || !strings.Contains(s.Reason, "disk on fire") {
		t.Fatalf("%+v", s)
	}
	if g.Refuse(GroupWrite) == nil || g.Refuse(GroupDelete) != nil {
		t.Fatal("store error: group writes must be refused, deletes taken")
	}
	g.check()
	if g.Status().State != StoreError {
		t.Fatal("left StoreError while the probe fails")
	}
	var ok error
	probeErr.Store(&ok)
	g.check()
	if g.Status().State != OK {
		t.Fatal("probe succeeded but the guard stays in StoreError")
	}
	g.ReportError(&RefusedError{State: LowSpace}) // refusals are not store errors
	if g.Refusing() {
		t.Fatal("a refusal moved the guard")
	}
	g.Fail(errors.New("wal: sync failed"))
	g.check()
	if s := g.Status(); s.State != Failed || g.Refuse(DeleteTopics) == nil || !errors.Is(g.Refuse(Retention), ErrStoreFailed) {
		t.Fatalf("failed store: %+v", s)
	}
}

// TestNilGuard: a nil Guard allows everything.
func TestNilGuard(t *testing.T) {
	var g *Guard
	if g.Refusing() || g.Refuse(Produce) != nil {
		t.Fatal("nil guard refuses")
	}
	ran := false
	if err := g.Commit(Produce, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatal("nil guard did not commit")
	}
	g.Reclaim([]byte("a"), []byte("b"))
	g.ReportError(errors.New("x"))
	g.Close()
}

// BenchmarkFastPath is what the guard adds to one produce while the store takes every write:
// the refusal check, Spend and the Commit wrapper around an empty commit.
func BenchmarkFastPath(b *testing.B) {
	d := &fakeDisk{}
	d.total.Store(1 << 40)
	d.avail.Store(1 << 39)
	g, _ := newTestGuard(b, d, Options{MinFreeBytes: 1 << 30})
	commit := func() error { return nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if g.Refuse(Produce) != nil {
				b.Fatal("refused")
			}
			g.Spend(100 << 10)
			if err := g.Commit(Produce, commit); err != nil {
				b.Fatal(err)
			}
		}
	})
}
