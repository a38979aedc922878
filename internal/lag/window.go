package lag

import "encoding/binary"

// window is a partition's last commits (Burrow's "intervals"), oldest first, packed: each
// observation is three zigzag varints (offset, lag, commit time in ms), the first absolute and
// every later one relative to the one before it. A partition committed once costs one 16-byte
// allocation; a full window of ten commits made seconds apart about 80 bytes, where a ring of
// Observations costs 240 (a tracker holds one window per group and partition: memory per
// committed offset). Adding decodes and re-encodes the few observations in place.
type window []byte

// maxWindow bounds the observations a window decodes at once without allocating.
const maxWindow = 16

// decode appends the window's observations to out, oldest first.
func (w window) decode(out []Observation) []Observation {
	var prev Observation
	for b := []byte(w); len(b) > 0; {
		var o Observation
		var d [3]int64
		for i := range d {
			v, n := binary.Varint(b)
			if n <= 0 {
				return out // not produced by encode; never happens
			}
			d[i], b = v, b[n:]
		}
		o.Offset, o.Lag, o.At = prev.Offset+d[0], prev.Lag+d[1], prev.At+d[2]
		out = append(out, o)
		prev = o
	}
	return out
}

// encode replaces the window's contents with obs, reusing its memory when it fits.
func (w *window) encode(obs []Observation) {
	var tmp [maxWindow * 3 * binary.MaxVarintLen64]byte
	b := tmp[:0]
	if len(obs) > maxWindow {
		b = make([]byte, 0, len(obs)*3*binary.MaxVarintLen64)
	}
	var prev Observation
	for _, o := range obs {
		b = binary.AppendVarint(b, o.Offset-prev.Offset)
		b = binary.AppendVarint(b, o.Lag-prev.Lag)
		b = binary.AppendVarint(b, o.At-prev.At)
		prev = o
	}
	if cap(*w) >= len(b) && cap(*w) <= 2*len(b)+16 {
		*w = append((*w)[:0], b...)
		return
	}
	*w = append(window(nil), b...) // exact size (rounded to an allocation class)
}

// add records a commit, keeping at most size observations. A commit closer than minDistanceMs
// to the newest one replaces it (Burrow's min-distance: a client committing many times a second
// does not flush the window); one older than the newest is dropped.
func (w *window) add(o Observation, size int, minDistanceMs int64) {
	var buf [maxWindow]Observation
	obs := w.decode(buf[:0])
	if n := len(obs); n > 0 {
		last := obs[n-1]
		if o.At < last.At {
			return // an older commit arriving late
		}
		if o.At-last.At < minDistanceMs {
			obs[n-1] = o
			w.encode(obs)
			return
		}
	}
	obs = append(obs, o)
	if len(obs) > size {
		obs = obs[len(obs)-size:]
	}
	w.encode(obs)
}

// last returns the newest observation.
func (w window) last() (Observation, bool) {
	var buf [maxWindow]Observation
	obs := w.decode(buf[:0])
	if len(obs) == 0 {
		return Observation{}, false
	}
	return obs[len(obs)-1], true
}

// appendTo appends the observations, oldest first.
func (w window) appendTo(out []Observation) []Observation { return w.decode(out) }

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
