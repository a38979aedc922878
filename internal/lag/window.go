package lag

// window is a partition's ring of its last commits (Burrow's "intervals"), oldest first.
type window struct {
	obs   []Observation // capacity = the configured intervals
	start int           // index of the oldest
	n     int
}

// add records a commit. A commit closer than minDistanceMs to the newest one replaces it
// (Burrow's min-distance: a client committing many times a second does not flush the window).
func (w *window) add(o Observation, size int, minDistanceMs int64) {
	if w.obs == nil {
		w.obs = make([]Observation, size)
	}
	if w.n > 0 {
		li := (w.start + w.n - 1) % len(w.obs)
		last := &w.obs[li]
		if o.At < last.At {
			return // an older commit arriving late
		}
		if o.At-last.At < minDistanceMs {
			*last = o
			return
		}
	}
	if w.n < len(w.obs) {
		w.obs[(w.start+w.n)%len(w.obs)] = o
		w.n++
		return
	}
	w.obs[w.start] = o
	w.start = (w.start + 1) % len(w.obs)
}

// last returns the newest observation.
func (w *window) last() (Observation, bool) {
	if w.n == 0 {
		return Observation{}, false
	}
	return w.obs[(w.start+w.n-1)%len(w.obs)], true
}

// appendTo appends the observations, oldest first.
func (w *window) appendTo(out []Observation) []Observation {
	for i := 0; i < w.n; i++ {
		out = append(out, w.obs[(w.start+i)%len(w.obs)])
	}
	return out
}

// ring is a fixed-size ring of log end samples (Burrow's broker offsets).
type ring struct {
	v     []int64
	start int
	n     int
}

func (r *ring) add(x int64, size int) {
	if r.v == nil {
		r.v = make([]int64, size)
	}
	if r.n < len(r.v) {
		r.v[(r.start+r.n)%len(r.v)] = x
		r.n++
		return
	}
	r.v[r.start] = x
	r.start = (r.start + 1) % len(r.v)
}

func (r *ring) appendTo(out []int64) []int64 {
	for i := 0; i < r.n; i++ {
		out = append(out, r.v[(r.start+i)%len(r.v)])
	}
	return out
}
