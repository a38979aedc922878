package assignor

import "hash/maphash"

// subTable finds a subtopology's index by ID. It is an open-addressing hash
// table over st.subs, cheaper than a map[string]int32 for the tens of
// thousands of lookups of a large assignment (one per subtopology entry of
// every member's task sets and lags), and reused across assignments.
//
// It hashes with a cheap function of the ID's length and its first, middle
// and last eight bytes, which tells typical IDs ("0", "1", ... or names
// with a number) apart; should a set of IDs collide so
// that some lookup needs more than maxProbe probes, it switches to
// maphash.
type subTable struct {
	seed   maphash.Seed
	strong bool    // hash with maphash
	slots  []int32 // subtopology index + 1; 0 is empty
	mask   uint64
}

const maxProbe = 24

// build indexes subs (IDs unique and non-empty).
func (h *subTable) build(subs []Subtopology) {
	size := 8
	for size < 4*len(subs) {
		size *= 2
	}
	h.mask = uint64(size - 1)
	h.strong = false
	if !h.fill(subs, size) {
		if h.seed == (maphash.Seed{}) {
			h.seed = maphash.MakeSeed()
		}
		h.strong = true
		h.fill(subs, size)
	}
}

// fill inserts subs; false if a probe sequence got longer than maxProbe
// (then only the strong hash is used, which never gives up).
func (h *subTable) fill(subs []Subtopology, size int) bool {
	h.slots = filled(h.slots, size, 0)
	for i, s := range subs {
		j := h.hash(s.ID) & h.mask
		d := 0
		for h.slots[j] != 0 {
			j = (j + 1) & h.mask
			d++
		}
		if d >= maxProbe && !h.strong {
			return false
		}
		h.slots[j] = int32(i + 1)
	}
	return true
}

func (h *subTable) hash(s string) uint64 {
	if h.strong {
		return maphash.String(h.seed, s)
	}
	var x uint64
	if n := len(s); n >= 8 {
		x = load8(s, 0) ^ (load8(s, n-8)<<7 | load8(s, n-8)>>57) ^ uint64(n)
		if n > 16 {
			m := load8(s, (n-8)/2)
			x ^= m<<23 | m>>41
		}
	} else {
		for i := 0; i < n; i++ {
			x = x<<8 | uint64(s[i])
		}
		x ^= uint64(n) << 56
	}
	// murmur3's finalizer: every input bit reaches the low bits.
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

// load8 returns the little-endian integer of s[i:i+8].
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// find returns the index of subtopology id in subs, or -1.
func (h *subTable) find(subs []Subtopology, id string) int32 {
	j := h.hash(id) & h.mask
	for {
		v := h.slots[j]
		if v == 0 {
			return -1
		}
		if subs[v-1].ID == id {
			return v - 1
		}
		j = (j + 1) & h.mask
	}
}
