package engine

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/store"
)

// Managed mode (Options.Managed, cluster mode): a lease manager decides which shards this node
// serves. It acquires a shard's lease from the store and hands it to Serve; the shard loads
// with it and serves until one of:
//
//   - Unserve: the manager hands the shard to another node (rebalancing, graceful stop). The
//     shard commits what it has, fails what waits with NOT_COORDINATOR and unloads; Unserve
//     returns once the lease is no longer used, so the manager can Release it.
//   - the lease's Lost channel closes (the manager could not renew it, or saw another node take
//     it): the shard waits for its Append in flight, fails every other call and unloads.
//   - an Append or a Load returns store.ErrFenced (a newer epoch owns the shard): the shard
//     unloads at once.
//
// An unloaded shard answers NOT_COORDINATOR until the manager serves it again.

// Serve hands shard l.ID()'s lease to its loop, which loads the shard with it (managed mode).
func (rt *Runtime[S]) Serve(l store.Shard) {
	s := rt.shards[l.ID()]
	select {
	case s.serveCh <- l:
	case <-rt.stop:
	case <-s.done:
	}
}

// Unserve stops serving shard after its last Append and returns once its lease is unused
// (managed mode); the caller then releases the lease. A shard not served returns at once.
func (rt *Runtime[S]) Unserve(ctx context.Context, shard int32) error {
	s := rt.shards[shard]
	done := make(chan struct{})
	select {
	case s.unserveCh <- done:
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// managed is a managed shard's loop: idle until a lease arrives, then load and serve until the
// shard unloads, and again.
func (s *shard[S]) managed() {
	for {
		select {
		case <-s.rt.stop:
			s.failQueued()
			return
		case l := <-s.serveCh:
			s.lease = l
		case j := <-s.ops:
			s.queued.Add(-1)
			j.w.Fail(kerr.NotCoordinator)
			continue
		case done := <-s.unserveCh:
			select { // a lease handed over but not yet loaded is dropped too
			case <-s.serveCh:
			default:
			}
			close(done)
			continue
		}
		if !s.load() {
			if s.stopping() {
				return
			}
			continue
		}
		if s.serve() {
			return
		}
	}
}

// stopping reports whether the runtime is closing.
func (s *shard[S]) stopping() bool {
	select {
	case <-s.rt.stop:
		return true
	default:
		return false
	}
}

// abandonLease unloads a shard whose lease is lost: the Appends in flight finish (the replies
// of each that succeeded go out: it is durable and the next owner loads it; after one fails,
// the later ones fail too), everything else fails with err.
func (s *shard[S]) abandonLease(err error) {
	s.waitInflight()
	if s.loadedOK {
		s.release(s.take(), err)
	}
	s.unload()
}

// unload drops the shard's state and lease: every call still waiting fails with
// NOT_COORDINATOR, and the shard answers NOT_COORDINATOR until it is served again. No Append is
// in flight.
func (s *shard[S]) unload() {
	if s.loadedOK {
		s.release(s.take(), kerr.NotCoordinator)
	}
	for f := range s.outstanding {
		f.Fail(kerr.NotCoordinator)
	}
	s.outstanding = nil
	if s.stopTimer != nil {
		s.stopTimer()
		s.stopTimer = nil
	}
	if s.counted {
		s.rt.loaded.Add(-1)
		s.counted = false
	}
	var zero S
	s.st, s.loadedOK, s.lease, s.inflight, s.extra, s.refused = zero, false, nil, nil, nil, nil
	s.held = coordinator.Effects{}
	s.status.Store(shardUnowned)
	s.failQueued()
}

// failQueued answers every queued call NOT_COORDINATOR.
func (s *shard[S]) failQueued() {
	for {
		select {
		case j := <-s.ops:
			s.queued.Add(-1)
			j.w.Fail(kerr.NotCoordinator)
		default:
			return
		}
	}
}
