package topodesc

import (
	"context"
	"sync"
)

// pool runs plugin work on a fixed number of goroutines fed by a bounded
// queue, so a slow backend can never block the coordinator nor grow the
// number of goroutines. Work submitted to a full queue is refused (the
// caller reports ErrBusy); work still queued at Close is given a cancelled
// context.
type pool struct {
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	mu     sync.RWMutex
	closed bool
	jobs   chan func(context.Context)
	wg     sync.WaitGroup
}

func newPool(workers, queue int) *pool {
	if workers < 1 {
		workers = 1
	}
	if queue < 0 {
		queue = 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &pool{ctx: ctx, cancel: cancel, jobs: make(chan func(context.Context), queue)}
	p.wg.Add(workers)
	for range workers {
		go func() {
			defer p.wg.Done()
			for job := range p.jobs {
				job(p.ctx)
			}
		}()
	}
	return p
}

// submit queues job; it returns ErrClosed or ErrBusy without queuing.
func (p *pool) submit(job func(context.Context)) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrClosed
	}
	select {
	case p.jobs <- job:
		return nil
	default:
		return ErrBusy
	}
}

// close cancels running and queued work and waits for the workers; queued
// jobs still run (with a cancelled context) so each delivers its result.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cancel()
	close(p.jobs)
	p.mu.Unlock()
	p.wg.Wait()
}

// merge returns a context cancelled when either ctx or the pool is.
func (p *pool) merge(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.ctx, cancel)
	return c, func() { stop(); cancel() }
}

func (p *pool) runErr(fn func(context.Context) error, ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	err := p.submit(func(context.Context) {
		c, cancel := p.merge(ctx)
		defer cancel()
		if err := c.Err(); err != nil {
			ch <- err
			return
		}
		ch <- fn(c)
	})
	if err != nil {
		ch <- err
	}
	return ch
}

func (p *pool) runGet(fn func(context.Context) GetResult, ctx context.Context) <-chan GetResult {
	ch := make(chan GetResult, 1)
	err := p.submit(func(context.Context) {
		c, cancel := p.merge(ctx)
		defer cancel()
		if err := c.Err(); err != nil {
			ch <- GetResult{Err: err}
			return
		}
		ch <- fn(c)
	})
	if err != nil {
		ch <- GetResult{Err: err}
	}
	return ch
}

// runEpochs runs fn like runErr, for StoredEpochs.
func (p *pool) runEpochs(fn func(context.Context) EpochsResult, ctx context.Context) <-chan EpochsResult {
	ch := make(chan EpochsResult, 1)
	err := p.submit(func(context.Context) {
		c, cancel := p.merge(ctx)
		defer cancel()
		if err := c.Err(); err != nil {
			ch <- EpochsResult{Err: err}
			return
		}
		ch <- fn(c)
	})
	if err != nil {
		ch <- EpochsResult{Err: err}
	}
	return ch
}
