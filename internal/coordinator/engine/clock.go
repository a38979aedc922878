// Package engine drives pure coordinator shards (Kafka's CoordinatorRuntime): one goroutine per
// shard owns its state, runs operations and timers on it, commits the records they produced to
// the store in groups (group commit) and releases each response only after its records are
// durable. It owns the store lease of every shard, loads and reloads shards, and the clock.
package engine

import (
	"crypto/rand"
	"time"
)

// Clock is the coordinator's time source. The state machine never reads the wall clock: the shard
// loop stamps each operation with Now, and due timers are found by comparing against it.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has elapsed on this clock; stop cancels it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// WallClock is the real clock.
type WallClock struct{}

// Now implements Clock.
func (WallClock) Now() time.Time { return time.Now() }

// AfterFunc implements Clock.
func (WallClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// RandomIDs is the coordinator.IDSource of a running broker: UUIDs from crypto/rand.
type RandomIDs struct{}

// NewUUID implements coordinator.IDSource.
func (RandomIDs) NewUUID() [16]byte {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return b
}
