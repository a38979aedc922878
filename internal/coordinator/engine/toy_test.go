package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/store"
)

// toy is the smallest shard the engine can drive: a key/value map changed only by replaying
// "key=value" records, and timers that write a record when they fire (as Kafka's
// CoordinatorRuntimeTest drives a MockCoordinatorShard).
type toy struct {
	kv      map[string]string
	now     time.Time
	timers  map[string]time.Time // key → deadline; firing writes key=fired
	out     coordinator.Effects
	loaded  bool
	replays int
}

func newToy(int32) *toy { return &toy{kv: map[string]string{}, timers: map[string]time.Time{}} }

func (t *toy) apply(r coordinator.Record) {
	if r.Value == nil {
		delete(t.kv, string(r.Key))
		return
	}
	t.kv[string(r.Key)] = string(r.Value)
}

func (t *toy) Replay(r coordinator.Record) error {
	if len(r.Key) == 0 {
		return errors.New("empty key")
	}
	t.replays++
	t.apply(r)
	return nil
}
func (t *toy) ReplayBorrowed(r coordinator.Record) error {
	return t.Replay(coordinator.Record{Key: append([]byte(nil), r.Key...), Value: append([]byte(nil), r.Value...)})
}
func (t *toy) OnLoaded(now time.Time)         { t.now, t.loaded = now, true }
func (t *toy) SetNow(now time.Time)           { t.now = now }
func (t *toy) AddReply(p coordinator.Pending) { t.out.Replies = append(t.out.Replies, p) }
func (t *toy) TakeEffects() coordinator.Effects {
	e := t.out
	t.out = coordinator.Effects{}
	return e
}
func (t *toy) FireTimers(now time.Time) {
	for k, d := range t.timers {
		if !d.After(now) {
			delete(t.timers, k)
			t.write(k, "fired")
		}
	}
}
func (t *toy) NextDeadline() (time.Time, bool) {
	var next time.Time
	for _, d := range t.timers {
		if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	return next, !next.IsZero()
}

func (t *toy) write(k, v string) {
	r := coordinator.Record{Key: []byte(k), Value: []byte(v)}
	t.apply(r)
	t.out.Records = append(t.out.Records, r)
}

func put(k, v string) func(*toy, *coordinator.Call[string]) {
	return func(t *toy, c *coordinator.Call[string]) {
		t.write(k, v)
		c.Reply(t, "ok")
	}
}

func get(k string) func(*toy, *coordinator.Call[string]) {
	return func(t *toy, c *coordinator.Call[string]) { c.Reply(t, t.kv[k]) }
}

// gateStore holds every Append until the test opens the gate, and can fail the next one.
type gateStore struct {
	*store.Memory
	gate     chan struct{}
	failNext chan error
	appends  chan int // batch sizes, as Appends start
}

func (g *gateStore) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	sh, err := g.Memory.Acquire(ctx, shard)
	return &gateShard{Shard: sh, g: g}, err
}

type gateShard struct {
	store.Shard
	g *gateStore
}

func (s *gateShard) Append(ctx context.Context, recs []store.Record) error {
	if s.g.appends != nil {
		s.g.appends <- len(recs)
	}
	if s.g.gate != nil {
		<-s.g.gate
	}
	select {
	case err := <-s.g.failNext:
		return err
	default:
	}
	return s.Shard.Append(ctx, recs)
}

func startToy(t *testing.T, st store.Store, clock engine.Clock) *engine.Runtime[*toy] {
	t.Helper()
	if clock == nil {
		clock = engine.WallClock{}
	}
	rt := engine.New(engine.Options[*toy]{Shards: 1, New: newToy, Store: st, Clock: clock, QueueDepth: 64})
	rt.Start()
	t.Cleanup(rt.Close)
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	return rt
}

func ctx10s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A write's reply waits for its Append; the operations that queue meanwhile share the next
// Append (group commit), and a read that follows a pending write waits for that write too.
func TestToyReplyAfterDurableAndGroupCommit(t *testing.T) {
	gs := &gateStore{Memory: store.NewMemory(1), gate: make(chan struct{}), failNext: make(chan error, 1), appends: make(chan int, 16)}
	rt := startToy(t, gs, nil)
	ctx := ctx10s(t)
	first := make(chan error, 1)
	go func() { _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); first <- err }()
	if n := <-gs.appends; n != 1 {
		t.Fatalf("first batch has %d records, want 1", n)
	}
	select {
	case err := <-first:
		t.Fatalf("write answered before its Append finished: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put(fmt.Sprint("k", i), "v")); err != nil {
				t.Error(err)
			}
		}()
	}
	readDone := make(chan string, 1)
	time.Sleep(20 * time.Millisecond) // let the five queue behind the in-flight Append
	go func() { v, _ := engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); readDone <- v }()
	time.Sleep(20 * time.Millisecond)
	close(gs.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := <-gs.appends; n != 5 {
		t.Fatalf("second batch has %d records, want the 5 queued writes in one Append", n)
	}
	wg.Wait()
	if v := <-readDone; v != "1" {
		t.Fatalf("read = %q", v)
	}
	if got := len(gs.Records(0)); got != 6 {
		t.Fatalf("store holds %d records, want 6", got)
	}
}

// A failed Append answers its calls NOT_COORDINATOR and reloads the shard from the store: the
// failed write is gone, the acknowledged one stays.
func TestToyFailedAppendReloads(t *testing.T) {
	gs := &gateStore{Memory: store.NewMemory(1), failNext: make(chan error, 1)}
	rt := startToy(t, gs, nil)
	ctx := ctx10s(t)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); err != nil {
		t.Fatal(err)
	}
	gs.failNext <- errors.New("injected")
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "2")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("failed write: %v, want NOT_COORDINATOR", err)
	}
	var v string
	for {
		var err error
		if v, err = engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if v != "1" {
		t.Fatalf("after reload a = %q, want the acknowledged 1", v)
	}
}

// A fenced Append (a newer lease took the shard) fails the call and the shard re-acquires.
func TestToyFencedAppend(t *testing.T) {
	mem := store.NewMemory(1)
	rt := startToy(t, mem, nil)
	ctx := ctx10s(t)
	if _, err := mem.Acquire(ctx, 0); err != nil { // another owner
		t.Fatal(err)
	}
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("write by a fenced owner: %v, want NOT_COORDINATOR", err)
	}
	for {
		if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "2")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if recs := mem.Records(0); len(recs) != 1 || string(recs[0].Value) != "2" {
		t.Fatalf("store = %v", recs)
	}
}

// An operation that panics answers UNKNOWN_SERVER_ERROR and the shard keeps serving.
func TestToyPanicAnswersUnknownServerError(t *testing.T) {
	rt := startToy(t, store.NewMemory(1), nil)
	ctx := ctx10s(t)
	_, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, func(*toy, *coordinator.Call[string]) { panic("boom") })
	if !errors.Is(err, kerr.UnknownServerError) {
		t.Fatalf("panicking op: %v", err)
	}
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); err != nil {
		t.Fatal(err)
	}
}

// Timers fire on the engine's clock without any request, and their records are made durable;
// a restart replays them.
func TestToyTimersAndReload(t *testing.T) {
	mem := store.NewMemory(1)
	clock := coordtest.NewManualClock(coordtest.T0)
	rt := startToy(t, mem, clock)
	ctx := ctx10s(t)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, func(t *toy, c *coordinator.Call[string]) {
		t.timers["tick"] = t.now.Add(5 * time.Second)
		c.Reply(t, "armed")
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	for deadline := time.Now().Add(5 * time.Second); len(mem.Records(0)) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timer never fired")
		}
	}
	rt.Close()
	rt2 := startToy(t, mem, clock)
	v, err := engine.Do(ctx, rt2, 0, coordinator.Meta{}, get("tick"))
	if err != nil || v != "fired" {
		t.Fatalf("after restart tick = %q, %v", v, err)
	}
}

// Closing the runtime answers queued calls NOT_COORDINATOR and waits for the in-flight Append.
func TestToyCloseDrains(t *testing.T) {
	gs := &gateStore{Memory: store.NewMemory(1), gate: make(chan struct{}), failNext: make(chan error, 1), appends: make(chan int, 16)}
	rt := engine.New(engine.Options[*toy]{Shards: 1, New: newToy, Store: gs, QueueDepth: 64})
	rt.Start()
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	ctx := ctx10s(t)
	first := make(chan error, 1)
	go func() { _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "1")); first <- err }()
	<-gs.appends
	closed := make(chan struct{})
	go func() { rt.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned with an Append in flight")
	case <-time.After(20 * time.Millisecond):
	}
	close(gs.gate)
	<-closed
	if err := <-first; err != nil {
		t.Fatalf("in-flight write: %v", err)
	}
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("call after Close: %v", err)
	}
}

// toyGate is a WriteGate the test sets: refusing everything, only values, or nothing.
type toyGate struct {
	refusing, deletesToo atomic.Bool
	refused              atomic.Int64
}

func (g *toyGate) Refusing() bool { return g.refusing.Load() }
func (g *toyGate) Refuse(deletesOnly bool) error {
	if !g.refusing.Load() || (deletesOnly && !g.deletesToo.Load()) {
		return nil
	}
	g.refused.Add(1)
	return errors.New("disk full")
}

func del(k string) func(*toy, *coordinator.Call[string]) {
	return func(t *toy, c *coordinator.Call[string]) {
		r := coordinator.Record{Key: []byte(k)}
		t.apply(r)
		t.out.Records = append(t.out.Records, r)
		c.Reply(t, "deleted")
	}
}

// While the store refuses writes, a write is refused with COORDINATOR_NOT_AVAILABLE and the
// reason, its record is gone after the shard reloads, reads and deletes are served without a
// reload, and writes resume when the gate opens.
func TestToyRefusedWrites(t *testing.T) {
	mem := store.NewMemory(1)
	gate := &toyGate{}
	var loads atomic.Int64
	rt := engine.New(engine.Options[*toy]{Shards: 1, New: newToy, Store: mem, QueueDepth: 64, Writes: gate,
		Hooks: engine.Hooks{OnLoad: func(int32, int, time.Duration, error) { loads.Add(1) }}})
	rt.Start()
	t.Cleanup(rt.Close)
	waitReady := func() {
		for !rt.Ready() {
			time.Sleep(time.Millisecond)
		}
	}
	waitReady()
	ctx := ctx10s(t)
	for _, k := range []string{"a", "b"} {
		if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put(k, "1")); err != nil {
			t.Fatal(err)
		}
	}
	gate.refusing.Store(true)
	_, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "2"))
	if !errors.Is(err, engine.ErrWritesRefused) || !errors.Is(err, kerr.CoordinatorNotAvailable) ||
		coordinator.ErrorMessage(err) == nil || *coordinator.ErrorMessage(err) != "disk full" {
		t.Fatalf("write while refusing: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); loads.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shard did not reload after a refused write")
		}
	}
	waitReady()
	for i := 0; i < 20; i++ {
		if v, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, get("a")); err != nil || v != "1" {
			t.Fatalf("read while refusing: %q %v (the refused write must not be visible)", v, err)
		}
	}
	if v, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, del("b")); err != nil || v != "deleted" {
		t.Fatalf("delete while short of space: %q %v", v, err)
	}
	if n := loads.Load(); n != 2 {
		t.Fatalf("reads and deletes reloaded the shard (%d loads)", n)
	}
	if recs := mem.Records(0); len(recs) != 1 || string(recs[0].Key) != "a" || string(recs[0].Value) != "1" {
		t.Fatalf("store = %v", recs)
	}
	gate.deletesToo.Store(true) // a failed store takes no deletes either
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, del("a")); !errors.Is(err, engine.ErrWritesRefused) {
		t.Fatalf("delete on a failed store: %v", err)
	}
	for loads.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	waitReady()
	gate.refusing.Store(false)
	gate.deletesToo.Store(false)
	if _, err := engine.Do(ctx, rt, 0, coordinator.Meta{}, put("a", "3")); err != nil {
		t.Fatal(err)
	}
	if recs := mem.Records(0); len(recs) != 1 || string(recs[0].Value) != "3" {
		t.Fatalf("store = %v", recs)
	}
	if gate.refused.Load() != 2 {
		t.Fatalf("refused %d, want 2", gate.refused.Load())
	}
}
