// Package storefault wraps a store.Store to inject storage faults on command, for reliability
// tests of the coordinator runtime: failed or ambiguous Appends, fencing, failed loads and
// stalled Appends. It changes nothing unless a fault is armed.
package storefault

import (
	"context"
	"sync"

	"github.com/muster-io/muster/internal/store"
)

// AppendFault is one armed Append failure. With Applied set the records are committed to the
// wrapped store first and the error is returned anyway (an ambiguous outcome: the caller cannot
// tell whether the batch happened).
type AppendFault struct {
	Err     error
	Applied bool
}

// Acquired records one lease handed out.
type Acquired struct {
	Shard int32
	Epoch int64
}

// Store is a fault-injecting store.Store.
type Store struct {
	store.Store

	mu          sync.Mutex
	appendFault []AppendFault
	loadFault   []error
	acquired    []Acquired
	appends     int
	failed      int
	gate        chan struct{}
}

// Wrap returns s with no faults armed.
func Wrap(s store.Store) *Store { return &Store{Store: s} }

// FailAppends arms faults for the next Appends, one per Append, on any shard, in order.
func (s *Store) FailAppends(f ...AppendFault) {
	s.mu.Lock()
	s.appendFault = append(s.appendFault, f...)
	s.mu.Unlock()
}

// FailLoads arms errors for the next Loads, in order.
func (s *Store) FailLoads(errs ...error) {
	s.mu.Lock()
	s.loadFault = append(s.loadFault, errs...)
	s.mu.Unlock()
}

// Hold makes every Append wait until the returned release function is called (a slow disk), so
// that concurrent requests pile up behind the batch in flight.
func (s *Store) Hold() (release func()) {
	g := make(chan struct{})
	s.mu.Lock()
	s.gate = g
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.gate = nil
			s.mu.Unlock()
			close(g)
		})
	}
}

// Acquired lists every lease handed out, in order.
func (s *Store) Acquired() []Acquired {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Acquired(nil), s.acquired...)
}

// Appends returns the number of Appends attempted and how many of them returned an injected
// fault.
func (s *Store) Appends() (total, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appends, s.failed
}

// Acquire implements store.Store.
func (s *Store) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	sh, err := s.Store.Acquire(ctx, shard)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.acquired = append(s.acquired, Acquired{Shard: shard, Epoch: sh.Epoch()})
	s.mu.Unlock()
	return &faultShard{Shard: sh, s: s}, nil
}

type faultShard struct {
	store.Shard
	s *Store
}

func (f *faultShard) Load(ctx context.Context, fn func(store.Record) error) error {
	f.s.mu.Lock()
	var err error
	if len(f.s.loadFault) > 0 {
		err, f.s.loadFault = f.s.loadFault[0], f.s.loadFault[1:]
	}
	f.s.mu.Unlock()
	if err != nil {
		return err
	}
	return f.Shard.Load(ctx, fn)
}

func (f *faultShard) Append(ctx context.Context, recs []store.Record) error {
	f.s.mu.Lock()
	f.s.appends++
	gate := f.s.gate
	var fault *AppendFault
	if len(f.s.appendFault) > 0 {
		fault = &f.s.appendFault[0]
		f.s.appendFault = f.s.appendFault[1:]
		f.s.failed++
	}
	f.s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fault == nil {
		return f.Shard.Append(ctx, recs)
	}
	if fault.Applied {
		if err := f.Shard.Append(ctx, recs); err != nil {
			return err
		}
	}
	return fault.Err
}
