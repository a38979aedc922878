package assign

import (
	"slices"
	"unsafe"
)

// rackInfo holds the racks relevant to rack-aware assignment: the racks of
// the members, interned as small integers, and for every partition the
// interned member racks on which it has a replica (racks without a member are
// irrelevant and dropped).
type rackInfo struct {
	names  []string         // interned member racks
	index  map[string]int16 // name -> id, used when there are many racks
	member []int16          // per member index: rack id or -1
	off    []int32          // per global partition: start in ids; len total+1
	ids    []int16
	// aware is set when rack-aware assignment can change the outcome: some
	// partition has replicas on some, but not all, member racks.
	aware bool
	// keepMismatched: members keep current partitions without a replica on
	// their rack (heterogeneous uniform, whose water-filling gives no
	// guarantee that such a partition would come back to its owner).
	keepMismatched bool
}

// linearRackLimit is the number of racks up to which rack names are looked up
// by a linear scan instead of a map.
const linearRackLimit = 8

func (r *rackInfo) lookup(name string) int16 {
	if r.index == nil {
		for i, n := range r.names {
			if n == name {
				return int16(i)
			}
		}
		return -1
	}
	if id, ok := r.index[name]; ok {
		return id
	}
	return -1
}

func (r *rackInfo) load(b *builder, md TopicMetadata) {
	r.member = make([]int16, len(b.members))
	byName := map[string]int16{}
	for m, ms := range b.members {
		r.member[m] = -1
		if ms.RackID == "" {
			continue
		}
		id, ok := byName[ms.RackID]
		if !ok {
			if len(r.names) >= 1<<15-1 {
				continue // absurd input; ignore further racks
			}
			id = int16(len(r.names))
			byName[ms.RackID] = id
			r.names = append(r.names, ms.RackID)
		}
		r.member[m] = id
	}
	if len(r.names) == 0 || b.total == 0 {
		return
	}
	if len(r.names) > linearRackLimit {
		r.index = byName
	}
	r.off = make([]int32, b.total+1)
	r.ids = make([]int16, 0, b.total)
	// Metadata usually repeats a few replica rack lists; the last few lists
	// seen (compared by content) and their resolved ids are cached.
	type cached struct {
		names []string
		ids   []int16
	}
	var cache [4]cached
	next := 0
	for _, t := range b.topics {
		if t.off > 0 && cap(r.ids) == b.total {
			// Size ids once from the first topic's racks per partition,
			// instead of growing it step by step.
			r.ids = slices.Grow(r.ids, int(int64(len(r.ids))*int64(b.total)/int64(t.off))+64-len(r.ids))
		}
	partitions:
		for p := int32(0); p < t.n; p++ {
			gp := t.off + p
			r.off[gp] = int32(len(r.ids))
			start := len(r.ids)
			names := md.PartitionRacks(t.id, p)
			// Same strings (same bytes in memory) first, then equal ones.
			hit := -1
			for i := range cache {
				if cache[i].names != nil && sameStrings(cache[i].names, names) {
					hit = i
					break
				}
			}
			if hit < 0 {
				for i := range cache {
					if cache[i].names != nil && slices.Equal(cache[i].names, names) {
						hit = i
						break
					}
				}
			}
			if hit >= 0 {
				ids := cache[hit].ids
				r.ids = append(r.ids, ids...)
				if n := len(ids); n > 0 && n < len(r.names) {
					r.aware = true
				}
				continue partitions
			}
			for _, name := range names {
				id := r.lookup(name)
				if id < 0 {
					continue
				}
				dup := false
				for _, x := range r.ids[start:] {
					if x == id {
						dup = true
						break
					}
				}
				if !dup {
					r.ids = append(r.ids, id)
				}
			}
			if c := len(r.ids) - start; c > 0 && c < len(r.names) {
				r.aware = true
			}
			if names != nil {
				cache[next] = cached{slices.Clone(names), slices.Clone(r.ids[start:])} // copies: md may reuse its slices
				next = (next + 1) % len(cache)
			}
		}
	}
	r.off[b.total] = int32(len(r.ids))
	if !r.aware {
		r.off, r.ids = nil, nil
	}
}

// sameStrings reports whether a and b hold the very same strings (same
// length and data pointer each), a cheap sufficient test for equality.
func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) || unsafe.StringData(a[i]) != unsafe.StringData(b[i]) {
			return false
		}
	}
	return true
}

// of returns the member racks holding a replica of global partition gp.
func (r *rackInfo) of(gp int32) []int16 { return r.ids[r.off[gp]:r.off[gp+1]] }

func (r *rackInfo) count(gp int32) int { return int(r.off[gp+1] - r.off[gp]) }

// mismatch reports whether member m has a rack, partition gp has a replica on
// some member's rack, but not on m's.
func (r *rackInfo) mismatch(m int, gp int32) bool {
	if !r.aware || r.member[m] < 0 {
		return false
	}
	return r.misplaced(m, gp)
}

// misplaced is mismatch without the aware check.
func (r *rackInfo) misplaced(m int, gp int32) bool {
	rs := r.of(gp)
	if len(rs) == 0 {
		return false
	}
	for _, x := range rs {
		if x == r.member[m] {
			return false
		}
	}
	return true
}

// intersectCoPartitioned replaces the racks of partition p of every topic by
// the racks shared by partition p of all topics, so that co-partitioned
// topics make the same rack-aware choices (range assignor). All topics must
// have the same partition count.
func (r *rackInfo) intersectCoPartitioned(b *builder) {
	if !r.aware || len(b.topics) < 2 {
		return
	}
	n := b.topics[0].n
	// Per partition index p: the racks shared by all topics.
	pOff := make([]int32, n+1)
	pIDs := make([]int16, 0, n)
	for p := int32(0); p < n; p++ {
		pOff[p] = int32(len(pIDs))
		start := len(pIDs)
		pIDs = append(pIDs, r.of(b.topics[0].off+p)...)
		for _, t := range b.topics[1:] {
			rs := r.of(t.off + p)
			k := start
			for _, x := range pIDs[start:] {
				for _, y := range rs {
					if x == y {
						pIDs[k] = x
						k++
						break
					}
				}
			}
			pIDs = pIDs[:k]
		}
	}
	pOff[n] = int32(len(pIDs))
	off := make([]int32, b.total+1)
	ids := make([]int16, 0, len(pIDs)*len(b.topics))
	for _, t := range b.topics {
		for p := int32(0); p < n; p++ {
			off[t.off+p] = int32(len(ids))
			ids = append(ids, pIDs[pOff[p]:pOff[p+1]]...)
		}
	}
	off[b.total] = int32(len(ids))
	r.off, r.ids = off, ids
}
