package coordinator

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// refTimers is the eager model of Timers: every schedule takes a new order number, the next
// timer is the minimum (deadline, order).
type refTimers struct {
	seq    uint64
	armed  map[string]refTimer
	fired  []string
	nextID int
}

type refTimer struct {
	deadline time.Time
	seq      uint64
	tag      any
	name     string
}

func (r *refTimers) next() (string, refTimer, bool) {
	var bestKey string
	var best refTimer
	found := false
	for k, tm := range r.armed {
		if !found || tm.deadline.Before(best.deadline) || (tm.deadline.Equal(best.deadline) && tm.seq < best.seq) {
			bestKey, best, found = k, tm, true
		}
	}
	return bestKey, best, found
}

// TestTimersLazyRearmOrder: random Schedule, Rearm, Cancel and clock steps fire the same timers
// in the same order, with the same Next, as the eager model.
func TestTimersLazyRearmOrder(t *testing.T) {
	for seed := int64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		tm := newTimers()
		ref := &refTimers{armed: map[string]refTimer{}}
		now := time.Unix(1000, 0)
		var fired []string
		tags := []any{nil, timerTag("a"), timerTag("b")}
		for step := 0; step < 300; step++ {
			key := fmt.Sprintf("k%d", rng.Intn(12))
			deadline := now.Add(time.Duration(rng.Intn(20)) * time.Second)
			switch op := rng.Intn(10); {
			case op < 4:
				tag := tags[rng.Intn(len(tags))]
				name := fmt.Sprintf("%s@%d", key, step)
				tm.ScheduleTagged(key, tag, deadline, func(*State) { fired = append(fired, name) })
				ref.seq++
				ref.armed[key] = refTimer{deadline: deadline, seq: ref.seq, tag: tag, name: name}
			case op < 7:
				tag := tags[rng.Intn(len(tags))]
				got := tm.Rearm(key, tag, deadline)
				old, ok := ref.armed[key]
				want := ok && tag != nil && old.tag == tag
				if got != want {
					t.Fatalf("seed %d step %d: Rearm %s = %v, want %v", seed, step, key, got, want)
				}
				if want {
					ref.seq++
					old.deadline, old.seq = deadline, ref.seq
					ref.armed[key] = old
				}
			case op < 8:
				tm.Cancel(key)
				delete(ref.armed, key)
			default:
				now = now.Add(time.Duration(rng.Intn(8)) * time.Second)
				for {
					x := tm.popDue(now)
					k, r, ok := ref.next()
					if x == nil {
						if ok && !r.deadline.After(now) {
							t.Fatalf("seed %d step %d: %s due at %v not fired", seed, step, k, r.deadline)
						}
						break
					}
					if !ok || k != x.key || !r.deadline.Equal(x.deadline) {
						t.Fatalf("seed %d step %d: fired %s@%v, want %s@%v", seed, step, x.key, x.deadline, k, r.deadline)
					}
					delete(ref.armed, k)
					x.fn(nil)
					ref.fired = append(ref.fired, r.name)
				}
			}
			if tm.Len() != len(ref.armed) {
				t.Fatalf("seed %d step %d: Len %d, want %d", seed, step, tm.Len(), len(ref.armed))
			}
			if step%2 == 0 {
				continue // leave stale heap tops to popDue
			}
			n, ok := tm.Next()
			_, r, rok := ref.next()
			if ok != rok || (ok && !n.Equal(r.deadline)) {
				t.Fatalf("seed %d step %d: Next %v %v, want %v %v", seed, step, n, ok, r.deadline, rok)
			}
			for k, r := range ref.armed {
				if d, ok := tm.Deadline(k); !ok || !d.Equal(r.deadline) {
					t.Fatalf("seed %d step %d: Deadline(%s) %v %v, want %v", seed, step, k, d, ok, r.deadline)
				}
			}
		}
		if fmt.Sprint(fired) != fmt.Sprint(ref.fired) {
			t.Fatalf("seed %d: fired %v, want %v", seed, fired, ref.fired)
		}
	}
}
