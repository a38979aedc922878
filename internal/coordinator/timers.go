package coordinator

import (
	"container/heap"
	"time"
)

// Timers are data: named deadlines with an operation to run, driven by the shard's clock
// (Kafka's timer keys: "session-timeout-<g>-<m>", "join-<g>", ...). Scheduling an existing key
// replaces it. The shard loop (or a test harness) runs what is due with RunDue.
type Timers struct {
	byKey map[string]*timer
	h     timerHeap
	seq   uint64
}

type timer struct {
	key      string
	deadline time.Time
	seq      uint64
	fn       func(st *State)
	index    int
}

func newTimers() *Timers { return &Timers{byKey: map[string]*timer{}} }

// Schedule arms key to run fn at deadline, replacing an earlier schedule of key.
func (t *Timers) Schedule(key string, deadline time.Time, fn func(st *State)) {
	t.Cancel(key)
	t.seq++
	tm := &timer{key: key, deadline: deadline, seq: t.seq, fn: fn}
	t.byKey[key] = tm
	heap.Push(&t.h, tm)
}

// Cancel disarms key.
func (t *Timers) Cancel(key string) {
	if tm, ok := t.byKey[key]; ok {
		heap.Remove(&t.h, tm.index)
		delete(t.byKey, key)
	}
}

// Has reports whether key is armed.
func (t *Timers) Has(key string) bool { _, ok := t.byKey[key]; return ok }

// Deadline returns key's deadline.
func (t *Timers) Deadline(key string) (time.Time, bool) {
	tm, ok := t.byKey[key]
	if !ok {
		return time.Time{}, false
	}
	return tm.deadline, true
}

// Next returns the earliest deadline.
func (t *Timers) Next() (time.Time, bool) {
	if len(t.h) == 0 {
		return time.Time{}, false
	}
	return t.h[0].deadline, true
}

// Len is the number of armed timers.
func (t *Timers) Len() int { return len(t.h) }

// popDue removes and returns the earliest timer due at now, or nil.
func (t *Timers) popDue(now time.Time) *timer {
	if len(t.h) == 0 || t.h[0].deadline.After(now) {
		return nil
	}
	tm := heap.Pop(&t.h).(*timer)
	delete(t.byKey, tm.key)
	return tm
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].deadline.Equal(h[j].deadline) {
		return h[i].deadline.Before(h[j].deadline)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any)   { tm := x.(*timer); tm.index = len(*h); *h = append(*h, tm) }
func (h *timerHeap) Pop() any {
	old := *h
	tm := old[len(old)-1]
	*h = old[:len(old)-1]
	return tm
}
