package lag

import "encoding/binary"

// window is a partition's last commits (Burrow's "intervals"), oldest first, packed: each
// observation is three zigzag varints (offset, lag, commit time in ms), the first relative to
// the origin {0, 0, base} (base: a time its tracker picks per topic, so the first commit time
// takes a byte or three rather than six) and every later one relative to the one before it. A partition committed once costs one 16-byte
// allocation; a full window of ten commits made seconds apart about 80 bytes, where a ring of
// Observations costs 240 (a tracker holds one window per group and partition: memory per
// committed offset). Adding decodes and re-encodes the few observations in place.
type window []byte

// maxWindow bounds the observations a window decodes at once without allocating.
const maxWindow = 16

// decode appends the window's observations to out, oldest first.
func (w window) decode(out []Observation, base int64) []Observation {
	var startBuf [maxWindow]int // the starts are not wanted: no allocation for them
	out, _ = w.scan(out, startBuf[:0], base)
	return out
}

// scan is decode that also appends to starts the byte offset at which each observation begins.
func (w window) scan(out []Observation, starts []int, base int64) ([]Observation, []int) {
	prev := Observation{At: base}
	for i := 0; i < len(w); {
		start := i
		var d [3]int64
		for k := range d {
			v, n := binary.Varint(w[i:])
			if n <= 0 {
				return out, starts // not produced by add; never happens
			}
			d[k], i = v, i+n
		}
		o := Observation{Offset: prev.Offset + d[0], Lag: prev.Lag + d[1], At: prev.At + d[2]}
		out, starts = append(out, o), append(starts, start)
		prev = o
	}
	return out, starts
}

// appendObs appends o encoded relative to prev.
func appendObs(b []byte, prev, o Observation) []byte {
	b = binary.AppendVarint(b, o.Offset-prev.Offset)
	b = binary.AppendVarint(b, o.Lag-prev.Lag)
	return binary.AppendVarint(b, o.At-prev.At)
}

// put replaces the bytes from at on with o encoded relative to prev, growing the window to the
// exact size (rounded to an allocation class) when it has no room: windows are many, and slack
// in each is memory per committed offset.
func (w window) put(at int, prev, o Observation) window {
	var tmp [3 * binary.MaxVarintLen64]byte
	enc := appendObs(tmp[:0], prev, o)
	if at+len(enc) <= cap(w) {
		return append(w[:at], enc...)
	}
	b := make(window, at+len(enc))
	copy(b, w[:at])
	copy(b[at:], enc)
	return b
}

// add records a commit, keeping at most size observations. A commit closer than minDistanceMs
// to the newest one replaces it (Burrow's min-distance: a client committing many times a second
// does not flush the window); one older than the newest is dropped. Appending or replacing the
// newest rewrites only its bytes; dropping the oldest re-encodes the next one as the first and
// keeps the rest as they are.
func (w *window) add(o Observation, size int, minDistanceMs, base int64) {
	*w = w.with(o, size, minDistanceMs, base)
}

// with is add returning the window (the caller's buffer, when it has room, holds it: a value
// receiver does not make a stack buffer escape).
func (w window) with(o Observation, size int, minDistanceMs, base int64) window {
	var obsBuf [maxWindow]Observation
	var startBuf [maxWindow]int
	obs, starts := w.scan(obsBuf[:0], startBuf[:0], base)
	n := len(obs)
	origin := Observation{At: base}
	prev := origin
	if n > 0 {
		last := obs[n-1]
		if o.At < last.At {
			return w // an older commit arriving late
		}
		if o.At-last.At < minDistanceMs {
			if n > 1 {
				prev = obs[n-2]
			}
			return w.put(starts[n-1], prev, o)
		}
		prev = last
	}
	if n < size {
		return w.put(len(w), prev, o)
	}
	// Full: the oldest n+1-size go; the first one kept is re-encoded relative to the origin.
	k := n + 1 - size
	var tmp [maxWindow * 3 * binary.MaxVarintLen64]byte
	b := tmp[:0]
	if k < n {
		b = appendObs(b, origin, obs[k])
		if k+1 < n {
			b = append(b, w[starts[k+1]:]...)
		}
		b = appendObs(b, obs[n-1], o)
	} else {
		b = appendObs(b, origin, o)
	}
	if cap(w) >= len(b) && cap(w) <= 2*len(b)+16 {
		return append(w[:0], b...)
	}
	return append(window(nil), b...) // exact size (rounded to an allocation class)
}

// last returns the newest observation.
func (w window) last(base int64) (Observation, bool) {
	var buf [maxWindow]Observation
	obs := w.decode(buf[:0], base)
	if len(obs) == 0 {
		return Observation{}, false
	}
	return obs[len(obs)-1], true
}

// appendTo appends the observations, oldest first.
func (w window) appendTo(out []Observation, base int64) []Observation { return w.decode(out, base) }

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
