package data

import (
	"sync"
)

// partition is one partition's in-memory state. The records live in Pebble.
type partition struct {
	topicID [16]byte
	index   int32

	mu        sync.Mutex
	next      int64            // log end offset including appends not yet durable
	hw        int64            // high watermark: every offset below it is durable
	logStart  int64            // log start offset (DeleteRecords advances it)
	inflight  []*pendingAppend // appends in offset order, not yet all done
	producers map[int64]*producerState
	// lastExpiryCheck is when (ms) producers were last checked for expiry.
	lastExpiryCheck int64
	waiters         map[chan struct{}]struct{} // long-polling fetches

	// segs are the log's segments in offset order; the last is the active
	// one (never compacted). Never empty.
	segs []segment
	// firstDirty is the log cleaner's checkpoint (Kafka's
	// cleaner-offset-checkpoint): the first offset not yet cleaned; -1 when
	// the log was never cleaned.
	firstDirty int64

	// Transactions (txn.go): each producer's open transaction in this partition, the first
	// offset of the earliest one (-1: none; the last stable offset stops there), and the
	// aborted transactions whose markers are durable, ordered by marker offset.
	openTxns      map[int64]*openTxn
	firstUnstable int64
	aborted       []abortedTxn

	// logMu serializes the rewrites of stored batches below the high
	// watermark: DeleteRecords, retention and the log cleaner's commits.
	// Appends never touch those keys and do not take it. Lock order: logMu
	// before mu.
	logMu sync.Mutex
}

// pendingAppend is one batch whose offsets are assigned and whose Pebble
// commit may still be running.
type pendingAppend struct {
	end    int64 // one past the batch's last offset
	done   bool
	failed bool // the commit failed (set before ch is closed)
	// stall: the commit failed inside the store and may be visible there until
	// a restart; the high watermark never passes it.
	stall bool
	ch    chan struct{} // closed when the commit finished (successfully or not)
}

func newPartition(id [16]byte, index int32, nowMs int64) *partition {
	return &partition{
		topicID:    id,
		index:      index,
		producers:  make(map[int64]*producerState),
		waiters:    make(map[chan struct{}]struct{}),
		segs:       []segment{newActiveSegment(0, nowMs)},
		firstDirty: -1,

		openTxns:      make(map[int64]*openTxn),
		firstUnstable: -1,
	}
}

// begin reserves n offsets (p.mu held) and returns the base offset.
func (p *partition) begin(n int64) (int64, *pendingAppend) {
	base := p.next
	p.next += n
	pa := &pendingAppend{end: p.next, ch: make(chan struct{})}
	p.inflight = append(p.inflight, pa)
	return base, pa
}

// finish marks pa done and advances the high watermark over the finished
// prefix of in-flight appends (stopping at a stalled one), waking fetches when
// it moved.
func (p *partition) finish(pa *pendingAppend, failed, stall bool) {
	p.mu.Lock()
	pa.done, pa.failed, pa.stall = true, failed, stall
	close(pa.ch)
	moved := false
	for len(p.inflight) > 0 && p.inflight[0].done && !p.inflight[0].stall {
		p.hw = p.inflight[0].end
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
		moved = true
	}
	if len(p.inflight) == 0 {
		p.inflight = nil
	}
	if moved {
		p.wakeLocked()
	}
	p.mu.Unlock()
}

func (p *partition) wakeLocked() {
	for w := range p.waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

func (p *partition) wake() {
	p.mu.Lock()
	p.wakeLocked()
	p.mu.Unlock()
}

func (p *partition) addWaiter(w chan struct{}) {
	p.mu.Lock()
	p.waiters[w] = struct{}{}
	p.mu.Unlock()
}

func (p *partition) removeWaiter(w chan struct{}) {
	p.mu.Lock()
	delete(p.waiters, w)
	p.mu.Unlock()
}

// offsets returns the log start offset and high watermark.
func (p *partition) offsets() (logStart, hw int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logStart, p.hw
}
