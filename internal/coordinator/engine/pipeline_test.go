package engine_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/store"
)

// orderedStore is a store whose shards claim the OrderedAppender capability but whose batches
// complete whenever the test says, in any order: BeginAppend reports each batch on begun and its
// wait blocks until the test sends the batch's outcome on its channel (nil: the records are
// applied to the in-memory store).
type orderedStore struct {
	*store.Memory
	begun chan orderedBatch
}

type orderedBatch struct {
	recs    []store.Record
	outcome chan error
}

func (o *orderedStore) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	sh, err := o.Memory.Acquire(ctx, shard)
	return &orderedShard{Shard: sh, o: o}, err
}

type orderedShard struct {
	store.Shard
	o *orderedStore
}

func (s *orderedShard) BeginAppend(ctx context.Context, recs []store.Record) func() error {
	b := orderedBatch{recs: recs, outcome: make(chan error, 1)}
	s.o.begun <- b
	return func() error {
		if err := <-b.outcome; err != nil {
			return err
		}
		return s.Shard.Append(ctx, recs)
	}
}

func startOrdered(t *testing.T) (*orderedStore, *engine.Runtime[*toy]) {
	o := &orderedStore{Memory: store.NewMemory(1), begun: make(chan orderedBatch, 16)}
	return o, startToy(t, o, nil)
}

func (o *orderedStore) next(t *testing.T) orderedBatch {
	t.Helper()
	select {
	case b := <-o.begun:
		return b
	case <-time.After(5 * time.Second):
		t.Fatal("no batch was begun")
		return orderedBatch{}
	}
}

type result struct {
	v   string
	err error
}

func doAsync(ctx context.Context, rt *engine.Runtime[*toy], op func(*toy, *coordinator.Call[string])) chan result {
	ch := make(chan result, 1)
	go func() {
		v, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, op)
		ch <- result{v, err}
	}()
	return ch
}

func notYet(t *testing.T, ch chan result, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s answered early: %q %v", what, r.v, r.err)
	case <-time.After(30 * time.Millisecond):
	}
}

func answer(t *testing.T, ch chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		return result{}
	}
}

// On a store that keeps batches in order, a second batch is begun while the first is still
// in flight; when the store completes them out of order the later batch's reply waits for the
// earlier batch, and a read behind both waits for both.
func TestPipelinedBatchesReleaseInOrder(t *testing.T) {
	o, rt := startOrdered(t)
	ctx := ctx10s(t)
	first := doAsync(ctx, rt, put("a", "1"))
	b0 := o.next(t)
	second := doAsync(ctx, rt, put("b", "2"))
	b1 := o.next(t) // begun with b0 still in flight: pipelined
	if string(b0.recs[0].Key) != "a" || string(b1.recs[0].Key) != "b" {
		t.Fatalf("batches begun out of order: %q then %q", b0.recs[0].Key, b1.recs[0].Key)
	}
	read := doAsync(ctx, rt, get("b"))
	notYet(t, read, "a read behind two batches in flight")

	b1.outcome <- nil // the later batch completes first
	notYet(t, second, "the later batch's write, before the earlier batch is durable")
	notYet(t, first, "the earlier batch's write, before its own Append completed")
	notYet(t, read, "the read")

	b0.outcome <- nil
	for _, ch := range []chan result{first, second} {
		if r := answer(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if r := answer(t, read); r.err != nil || r.v != "2" {
		t.Fatalf("read = %q %v", r.v, r.err)
	}
	if got := len(o.Records(0)); got != 2 {
		t.Fatalf("store holds %d records", got)
	}
}

// When an earlier batch fails, a later one in flight fails too even if the store reports it
// done: its calls answer NOT_COORDINATOR and the shard reloads from the store.
func TestPipelinedFailureFailsLaterBatches(t *testing.T) {
	o, rt := startOrdered(t)
	ctx := ctx10s(t)
	first := doAsync(ctx, rt, put("a", "1"))
	b0 := o.next(t)
	second := doAsync(ctx, rt, put("b", "2"))
	b1 := o.next(t)
	b1.outcome <- nil
	notYet(t, second, "the later batch")
	b0.outcome <- errors.New("injected")
	if r := answer(t, first); !errors.Is(r.err, kerr.NotCoordinator) {
		t.Fatalf("failed batch: %q %v, want NOT_COORDINATOR", r.v, r.err)
	}
	if r := answer(t, second); !errors.Is(r.err, kerr.NotCoordinator) {
		t.Fatalf("batch behind a failed one: %q %v, want NOT_COORDINATOR", r.v, r.err)
	}
	for {
		r := answer(t, doAsync(ctx, rt, get("a")))
		if r.err == nil {
			if r.v != "" {
				t.Fatalf("after reload a = %q, want nothing (its batch failed)", r.v)
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	// Serving again, pipelined.
	w := doAsync(ctx, rt, put("c", "3"))
	o.next(t).outcome <- nil
	if r := answer(t, w); r.err != nil {
		t.Fatal(r.err)
	}
}

// A store without the capability has one Append in flight: a second write waits for the first
// Append before its own begins.
func TestUnorderedStoreOneBatchInFlight(t *testing.T) {
	gs := &gateStore{Memory: store.NewMemory(1), gate: make(chan struct{}), failNext: make(chan error, 1), appends: make(chan int, 16)}
	rt := startToy(t, gs, nil)
	ctx := ctx10s(t)
	first := doAsync(ctx, rt, put("a", "1"))
	<-gs.appends
	second := doAsync(ctx, rt, put("b", "2"))
	select {
	case <-gs.appends:
		t.Fatal("a second Append began while the first was in flight on a store without OrderedAppender")
	case <-time.After(30 * time.Millisecond):
	}
	close(gs.gate)
	for _, ch := range []chan result{first, second} {
		if r := answer(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
}

// The published snapshot of a batch appears once the batch is durable and before its reply is
// released, in batch order; a failed batch publishes nothing.
func TestSnapshotPublishedWhenDurable(t *testing.T) {
	o := &orderedStore{Memory: store.NewMemory(1), begun: make(chan orderedBatch, 16)}
	var mu sync.Mutex
	published := map[string]string{}
	rt := engine.New(engine.Options[*toy]{Shards: 1, New: newToy, Store: o, QueueDepth: 64,
		Snapshot: func(_ int32, s *toy) func() {
			v := maps.Clone(s.kv)
			return func() {
				mu.Lock()
				published = v
				mu.Unlock()
			}
		}})
	rt.Start()
	t.Cleanup(rt.Close)
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	seen := func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return published
	}
	ctx := ctx10s(t)
	first := doAsync(ctx, rt, put("a", "1"))
	b0 := o.next(t)
	second := doAsync(ctx, rt, put("b", "2"))
	b1 := o.next(t)
	b1.outcome <- nil
	time.Sleep(20 * time.Millisecond)
	if got := seen(); len(got) != 0 {
		t.Fatalf("published %v before any batch was durable", got)
	}
	b0.outcome <- nil
	if r := answer(t, first); r.err != nil {
		t.Fatal(r.err)
	}
	if got := seen(); got["a"] != "1" {
		t.Fatalf("the first write's reply came before its snapshot: %v", got)
	}
	if r := answer(t, second); r.err != nil {
		t.Fatal(r.err)
	}
	if got := seen(); got["a"] != "1" || got["b"] != "2" {
		t.Fatalf("published %v after both batches", got)
	}
	failed := doAsync(ctx, rt, put("c", "3"))
	o.next(t).outcome <- errors.New("injected")
	if r := answer(t, failed); !errors.Is(r.err, kerr.NotCoordinator) {
		t.Fatalf("failed batch: %v", r.err)
	}
	if got := seen(); got["c"] != "" {
		t.Fatalf("a failed batch was published: %v", got)
	}
}
