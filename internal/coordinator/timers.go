package coordinator

import (
	"container/heap"
	"time"
)

// Timers are data: named deadlines with an operation to run, driven by the shard's clock
// (Kafka's timer keys: "session-timeout-<g>-<m>", "join-<g>", ...). Scheduling an existing key
// replaces it. The shard loop (or a test harness) runs what is due with RunDue.
//
// Timers run in (deadline, scheduling order) order. Moving an armed timer to a later deadline
// (a session timeout re-armed by every heartbeat) is lazy: the timer keeps its heap position,
// keyed by the earlier deadline, and only its deadline field changes; when the stale position
// reaches the top of the heap it is moved to its real deadline. Every heap key is at most its
// timer's real (deadline, order), so the firing order is exactly the eager one.
type Timers struct {
	byKey map[string]*timer
	h     timerHeap
	seq   uint64
}

type timer struct {
	key      string
	deadline time.Time // when it fires
	seq      uint64    // scheduling order, breaks deadline ties
	at       time.Time // heap position: at ≤ deadline
	atSeq    uint64
	fn       func(st *State)
	tag      any // Rearm's identity of fn; nil: not re-armable
	index    int
}

func (tm *timer) stale() bool { return tm.atSeq != tm.seq }

func newTimers() *Timers { return &Timers{byKey: map[string]*timer{}} }

// Schedule arms key to run fn at deadline, replacing an earlier schedule of key.
func (t *Timers) Schedule(key string, deadline time.Time, fn func(st *State)) {
	t.ScheduleTagged(key, nil, deadline, fn)
}

// ScheduleTagged is Schedule with a tag naming what fn does (a comparable value, e.g. a typed
// constant or the owning group): Rearm may then move the timer without a new fn.
func (t *Timers) ScheduleTagged(key string, tag any, deadline time.Time, fn func(st *State)) {
	if tm, ok := t.byKey[key]; ok {
		tm.fn, tm.tag = fn, tag
		t.move(tm, deadline)
		return
	}
	t.seq++
	tm := &timer{key: key, deadline: deadline, seq: t.seq, at: deadline, atSeq: t.seq, fn: fn, tag: tag}
	t.byKey[key] = tm
	heap.Push(&t.h, tm)
}

// Rearm moves key to deadline, keeping its fn, when key is armed with tag (non-nil); it is
// Schedule(key, deadline, same fn) without allocating. false: nothing done (not armed, or armed
// by something else).
func (t *Timers) Rearm(key string, tag any, deadline time.Time) bool {
	tm, ok := t.byKey[key]
	if !ok || tag == nil || tm.tag != tag {
		return false
	}
	t.move(tm, deadline)
	return true
}

// move re-schedules an armed timer: a new scheduling order as a fresh Schedule would get, and
// the heap fixed only when the timer must fire earlier than its heap position says.
func (t *Timers) move(tm *timer, deadline time.Time) {
	t.seq++
	tm.deadline, tm.seq = deadline, t.seq
	if deadline.Before(tm.at) {
		tm.at, tm.atSeq = deadline, tm.seq
		heap.Fix(&t.h, tm.index)
	}
	// Otherwise (deadline, seq) is after (at, atSeq): the position stays, lazily.
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

// settleTop moves stale timers at the top of the heap to their real position, so that h[0] is
// the next timer to fire.
func (t *Timers) settleTop() {
	for len(t.h) > 0 && t.h[0].stale() {
		tm := t.h[0]
		tm.at, tm.atSeq = tm.deadline, tm.seq
		heap.Fix(&t.h, 0)
	}
}

// Next returns the earliest deadline.
func (t *Timers) Next() (time.Time, bool) {
	t.settleTop()
	if len(t.h) == 0 {
		return time.Time{}, false
	}
	return t.h[0].deadline, true
}

// Len is the number of armed timers.
func (t *Timers) Len() int { return len(t.h) }

// popDue removes and returns the earliest timer due at now, or nil.
func (t *Timers) popDue(now time.Time) *timer {
	for len(t.h) > 0 && !t.h[0].at.After(now) && t.h[0].stale() {
		tm := t.h[0]
		tm.at, tm.atSeq = tm.deadline, tm.seq
		heap.Fix(&t.h, 0)
	}
	if len(t.h) == 0 || t.h[0].at.After(now) {
		return nil
	}
	tm := heap.Pop(&t.h).(*timer)
	delete(t.byKey, tm.key)
	return tm
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].atSeq < h[j].atSeq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any)   { tm := x.(*timer); tm.index = len(*h); *h = append(*h, tm) }
func (h *timerHeap) Pop() any {
	old := *h
	tm := old[len(old)-1]
	*h = old[:len(old)-1]
	return tm
}

// timerTag is a Rearm tag for timers whose fn depends on nothing but the key (it looks the
// group and member up by id when it fires).
type timerTag string
