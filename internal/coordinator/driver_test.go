package coordinator

import (
	"strconv"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/metadata"
)

// The in-package test driver: what the engine does for one operation, synchronously. (Tests
// outside the package use coordtest.Harness; this package's own tests cannot import it.)

// testResult is a call's answer; it implements Waiter.
type testResult[T any] struct {
	resp T
	err  error
	set  bool
	done bool
}

func (r *testResult[T]) Set(resp T, err error) {
	if !r.set {
		r.set, r.resp, r.err = true, resp, err
	}
}
func (r *testResult[T]) Release()       { r.done = true }
func (r *testResult[T]) Fail(err error) { r.err, r.done = err, true }

// shardDriver runs operations and timers on one State, one batch each, and keeps the records
// the batches committed.
type shardDriver struct {
	t       testing.TB
	st      *State
	records []Record
	meta    Meta
	// image, when set, gives the shard its topics before every step.
	image func() *metadata.Image
}

func (d *shardDriver) driver() *shardDriver { return d }

func (d *shardDriver) step(now time.Time, fn func()) {
	if d.image != nil {
		d.st.SetImage(d.image())
	}
	d.st.SetNow(now)
	fn()
	e := d.st.TakeEffects()
	d.records = append(d.records, e.Records...)
	for _, p := range e.Replies {
		p.Release()
	}
}

// run runs op as one call in its own batch at the shard's current time and returns its answer;
// the test fails when op did not answer at once.
func run[T any](h interface{ driver() *shardDriver }, op func(*State, *Call[T])) T {
	d := h.driver()
	r := &testResult[T]{}
	c := NewCall(d.meta, Waiter[T](r))
	d.step(d.st.Now, func() { op(d.st, c) })
	if !r.done {
		d.t.Fatalf("operation did not reply")
	}
	return r.resp
}

// advance moves the shard's time by dt and fires every due timer, in one batch.
func (d *shardDriver) advance(dt time.Duration) {
	now := d.st.Now.Add(dt)
	d.step(now, func() { d.st.FireTimers(now) })
}

// testIDs is a deterministic IDSource.
type testIDs struct{ n byte }

func (s *testIDs) NewUUID() [16]byte {
	s.n++
	return [16]byte{15: s.n, 14: 0x5e}
}

// testConfig is the configuration of Kafka's defaults on one shard.
func testConfig() *Config {
	cfg := ConfigFrom(config.Defaults())
	cfg.Shards = 1
	return cfg
}

// durableView is coordtest.DurableView for this package's own tests.
func durableView(st *State) map[string]any {
	out := map[string]any{}
	for id, g := range st.Groups {
		if d, ok := g.(interface{ HasDurableContent() bool }); ok && !d.HasDurableContent() && !st.Offsets.HasOffsets(id) {
			continue
		}
		out["group/"+id] = struct {
			Type GroupType
			D    any
		}{g.Type(), g.Durable()}
	}
	for _, g := range st.Offsets.GroupIDs() {
		st.Offsets.Each(g, func(t string, v *OffsetValue) bool {
			out["offset/"+g+"/"+t+"/"+strconv.Itoa(int(v.Partition))] = *v
			return true
		})
	}
	return out
}
