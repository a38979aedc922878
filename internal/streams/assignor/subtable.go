package assignor

import "hash/maphash"

// subTable finds a subtopology's index by ID. It is an open-addressing hash
// table over st.subs, cheaper than a map[string]int32 for the tens of
// thousands of lookups of a large assignment (one per subtopology entry of
// every member's task sets and lags), and reused across assignments.
type subTable struct {
	seed  maphash.Seed
	slots []int32 // subtopology index + 1; 0 is empty
	mask  uint64
}

// build indexes subs (IDs unique and non-empty).
func (h *subTable) build(subs []Subtopology) {
	if h.seed == (maphash.Seed{}) {
		h.seed = maphash.MakeSeed()
	}
	size := 8
	for size < 2*len(subs) {
		size *= 2
	}
	h.slots = filled(h.slots, size, 0)
	h.mask = uint64(size - 1)
	for i, s := range subs {
		j := maphash.String(h.seed, s.ID) & h.mask
		for h.slots[j] != 0 {
			j = (j + 1) & h.mask
		}
		h.slots[j] = int32(i + 1)
	}
}

// find returns the index of subtopology id in subs, or -1.
func (h *subTable) find(subs []Subtopology, id string) int32 {
	j := maphash.String(h.seed, id) & h.mask
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
