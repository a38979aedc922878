package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/store"
)

// losable is a lease whose Lost the test closes (a lease manager that could not renew).
type losable struct {
	store.Shard
	lost chan struct{}
	once sync.Once
}

func (l *losable) Lost() <-chan struct{} { return l.lost }
func (l *losable) lose()                 { l.once.Do(func() { close(l.lost) }) }

func acquireLosable(t *testing.T, m store.Store, shard int32) *losable {
	t.Helper()
	l, err := m.Acquire(context.Background(), shard)
	if err != nil {
		t.Fatal(err)
	}
	return &losable{Shard: l, lost: make(chan struct{})}
}

func startManaged(t *testing.T, st store.Store, shards int32) *engine.Runtime[*toy] {
	t.Helper()
	rt := engine.New(engine.Options[*toy]{Shards: shards, New: newToy, Store: st, QueueDepth: 64, Managed: true})
	rt.Start()
	t.Cleanup(rt.Close)
	return rt
}

func waitActive(t *testing.T, rt *engine.Runtime[*toy], shard int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !rt.Active(shard); {
		if time.Now().After(deadline) {
			t.Fatalf("shard %d not active: %v", shard, rt.ShardStatus())
		}
		time.Sleep(time.Millisecond)
	}
}

func waitUnowned(t *testing.T, rt *engine.Runtime[*toy], shard int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); rt.Owned(shard); {
		if time.Now().After(deadline) {
			t.Fatalf("shard %d still owned: %v", shard, rt.ShardStatus())
		}
		time.Sleep(time.Millisecond)
	}
}

// A managed runtime serves nothing until a lease is handed to it; Serve loads the shard,
// Unserve commits what it has and unloads it, and the next Serve (a new epoch) loads what the
// earlier lease wrote.
func TestManagedServeUnserve(t *testing.T) {
	m := store.NewMemory(2)
	rt := startManaged(t, m, 2)
	ctx := ctx10s(t)
	if !rt.Ready() || rt.Owned(0) {
		t.Fatalf("managed runtime before any lease: ready=%v status=%v", rt.Ready(), rt.ShardStatus())
	}
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("call on an unserved shard: %v", err)
	}
	rt.Serve(acquireLosable(t, m, 0))
	waitActive(t, rt, 0)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := rt.Unserve(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if rt.Owned(0) {
		t.Fatal("unserved shard still owned")
	}
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("call after Unserve: %v", err)
	}
	rt.Serve(acquireLosable(t, m, 0))
	waitActive(t, rt, 0)
	if v, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); err != nil || v != "1" {
		t.Fatalf("after a new lease: %q, %v", v, err)
	}
	if rt.Owned(1) {
		t.Fatal("shard 1 was never served")
	}
}

// A lost lease unloads the shard: calls answer NOT_COORDINATOR and nothing more is appended
// under it.
func TestManagedLostLeaseUnloads(t *testing.T) {
	m := store.NewMemory(1)
	rt := startManaged(t, m, 1)
	ctx := ctx10s(t)
	l := acquireLosable(t, m, 0)
	rt.Serve(l)
	waitActive(t, rt, 0)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); err != nil {
		t.Fatal(err)
	}
	l.lose()
	waitUnowned(t, rt, 0)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("b", "2")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("write after the lease was lost: %v", err)
	}
	if got := len(m.Records(0)); got != 1 {
		t.Fatalf("store has %d records, want 1", got)
	}
}

// A fenced Append (another owner took a newer epoch) fails its calls NOT_COORDINATOR and
// unloads the shard instead of reloading it: the stale owner writes nothing more.
func TestManagedFencedAppendUnloads(t *testing.T) {
	m := store.NewMemory(1)
	rt := startManaged(t, m, 1)
	ctx := ctx10s(t)
	rt.Serve(acquireLosable(t, m, 0))
	waitActive(t, rt, 0)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); err != nil {
		t.Fatal(err)
	}
	newer, _ := m.Acquire(ctx, 0) // another node takes over
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "stale")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("stale owner's write: %v", err)
	}
	waitUnowned(t, rt, 0)
	if err := newer.Append(ctx, []store.Record{{Key: []byte("b"), Value: []byte("2")}}); err != nil {
		t.Fatal(err)
	}
	recs := m.Records(0)
	if len(recs) != 2 || string(recs[0].Value) != "1" {
		t.Fatalf("store: %v", recs)
	}
}

// orderedLosable is an orderedStore lease (batches complete when the test says) whose Lost the
// test closes.
type orderedLosable struct {
	*orderedShard
	lost chan struct{}
	once sync.Once
}

func (l *orderedLosable) Lost() <-chan struct{} { return l.lost }
func (l *orderedLosable) lose()                 { l.once.Do(func() { close(l.lost) }) }

func servePipelined(t *testing.T) (*orderedStore, *engine.Runtime[*toy], *orderedLosable) {
	t.Helper()
	o := &orderedStore{Memory: store.NewMemory(1), begun: make(chan orderedBatch, 16)}
	rt := startManaged(t, o, 1)
	sh, err := o.Acquire(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	l := &orderedLosable{orderedShard: sh.(*orderedShard), lost: make(chan struct{})}
	rt.Serve(l)
	waitActive(t, rt, 0)
	return o, rt, l
}

// A lease lost with several batches in flight (an ordered store, managed mode): the shard
// waits for every one of them before it unloads; batches that turn out durable answer their
// calls, in order even when the store completes the later one first.
func TestManagedLostLeaseWaitsForPipelinedBatches(t *testing.T) {
	o, rt, l := servePipelined(t)
	ctx := ctx10s(t)
	first := doAsync(ctx, rt, put("a", "1"))
	b0 := o.next(t)
	second := doAsync(ctx, rt, put("b", "2"))
	b1 := o.next(t) // two batches in flight
	l.lose()
	b1.outcome <- nil
	notYet(t, second, "the later batch, before the earlier one is durable")
	if !rt.Owned(0) {
		t.Fatal("unloaded with batches in flight")
	}
	b0.outcome <- nil
	for _, ch := range []chan result{first, second} {
		if r := answer(t, ch); r.err != nil {
			t.Fatalf("a durable batch's call after the lease was lost: %v", r.err)
		}
	}
	waitUnowned(t, rt, 0)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("c", "3")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("write after the lease was lost: %v", err)
	}
	if got := len(o.Records(0)); got != 2 {
		t.Fatalf("store holds %d records, want 2", got)
	}
}

// The same with the earlier batch failing: both batches' calls fail NOT_COORDINATOR (the later
// one is not acknowledged although the store reported it done) and the shard unloads.
func TestManagedLostLeasePipelinedFailure(t *testing.T) {
	o, rt, l := servePipelined(t)
	ctx := ctx10s(t)
	first := doAsync(ctx, rt, put("a", "1"))
	b0 := o.next(t)
	second := doAsync(ctx, rt, put("b", "2"))
	b1 := o.next(t)
	l.lose()
	b1.outcome <- nil
	b0.outcome <- errors.New("injected")
	for _, ch := range []chan result{first, second} {
		if r := answer(t, ch); !errors.Is(r.err, kerr.NotCoordinator) {
			t.Fatalf("call of a failed or later batch: %q %v, want NOT_COORDINATOR", r.v, r.err)
		}
	}
	waitUnowned(t, rt, 0)
}
