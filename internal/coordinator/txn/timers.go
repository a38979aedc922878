package txn

import "time"

// timers are a shard's named deadlines (data, as the group coordinator's): scheduling a name
// again replaces it. A shard has a handful (the two sweeps and the recovery kick), so a slice
// scan is enough.
type timers []timer

type timer struct {
	name string
	at   time.Time
	fn   func(st *ShardState)
}

func (t *timers) schedule(name string, at time.Time, fn func(st *ShardState)) {
	for i := range *t {
		if (*t)[i].name == name {
			(*t)[i].at, (*t)[i].fn = at, fn
			return
		}
	}
	*t = append(*t, timer{name: name, at: at, fn: fn})
}

func (t timers) next() (time.Time, bool) {
	var next time.Time
	for _, tm := range t {
		if next.IsZero() || tm.at.Before(next) {
			next = tm.at
		}
	}
	return next, !next.IsZero()
}

// popDue removes and returns the earliest timer due at now (ties: scheduling order).
func (t *timers) popDue(now time.Time) func(st *ShardState) {
	best := -1
	for i, tm := range *t {
		if !tm.at.After(now) && (best < 0 || tm.at.Before((*t)[best].at)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	fn := (*t)[best].fn
	*t = append((*t)[:best], (*t)[best+1:]...)
	return fn
}
