// Package coordtest is the group coordinator's test kit (in the manner of etcd-io/raft's
// rafttest): a Harness that drives one shard's pure state synchronously with a manual clock,
// deterministic member ids and an in-memory topic set; the replay-equivalence check; and a
// scripted scenario runner with golden output (datadriven). Tests and benchmarks import it; the
// product never does.
package coordtest

import (
	"sync"
	"time"
)

// ManualClock is a Clock that moves only when told to, for tests that never sleep.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	seq     int
	pending map[int]manualTimer
}

type manualTimer struct {
	at time.Time
	f  func()
}

// NewManualClock starts at t.
func NewManualClock(t time.Time) *ManualClock {
	return &ManualClock{now: t, pending: map[int]manualTimer{}}
}

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements Clock.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	id := c.seq
	c.pending[id] = manualTimer{at: c.now.Add(d), f: f}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.pending[id]
		delete(c.pending, id)
		return ok
	}
}

// Advance moves the clock forward by d and fires every callback now due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for id, t := range c.pending {
		if !t.at.After(c.now) {
			due = append(due, t.f)
			delete(c.pending, id)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}
