package member

import "time"

// Clock is the time source of the heartbeat loop. Now gives the current
// time; After fires once d has elapsed (like time.After). A test or
// simulation may supply its own.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// RealClock returns the wall clock.
func RealClock() Clock { return realClock{} }
