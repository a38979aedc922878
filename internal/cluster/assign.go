package cluster

import (
	"hash/fnv"
	"sort"

	"github.com/muster-io/muster/internal/store/postgres"
)

// Assignment maps each shard of one lease kind to the node that should hold it.
type Assignment map[int32]int32

// assign computes the fair share of shards of kind over the live, non-draining nodes of v:
// every node gets at most ceil(shards/nodes). It is a function of the view alone, so every node
// computes the same answer from the same view. A shard stays with its live holder while the
// holder is within its share (few moves when nodes come and go); the others go, in shard order,
// to the first node with room in the shard's own ranking (rendezvous hashing), so where a shard
// lands does not depend on which other shards moved.
func assign(v *postgres.View, kind string, shards int32) Assignment {
	var nodes []int32
	for _, n := range v.Nodes {
		if n.Live && !n.Draining {
			nodes = append(nodes, n.ID)
		}
	}
	out := Assignment{}
	if len(nodes) == 0 {
		return out
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i] < nodes[j] })
	limit := (int(shards) + len(nodes) - 1) / len(nodes)
	count := map[int32]int{}
	eligible := map[int32]bool{}
	for _, id := range nodes {
		eligible[id] = true
	}
	holder := map[int32]int32{}
	for _, l := range v.Leases {
		if l.Kind == kind && v.Held(l) && eligible[l.Owner] {
			holder[l.Shard] = l.Owner
		}
	}
	for sh := int32(0); sh < shards; sh++ {
		if h, ok := holder[sh]; ok && count[h] < limit {
			out[sh] = h
			count[h]++
		}
	}
	for sh := int32(0); sh < shards; sh++ {
		if _, ok := out[sh]; ok {
			continue
		}
		for _, id := range rank(nodes, kind, sh) {
			if count[id] < limit {
				out[sh] = id
				count[id]++
				break
			}
		}
	}
	return out
}

// rank orders nodes by their rendezvous weight for (kind, shard), highest first.
func rank(nodes []int32, kind string, shard int32) []int32 {
	type w struct {
		id int32
		h  uint64
	}
	ws := make([]w, len(nodes))
	for i, id := range nodes {
		h := fnv.New64a()
		h.Write([]byte(kind))
		h.Write([]byte{byte(shard >> 24), byte(shard >> 16), byte(shard >> 8), byte(shard), 0,
			byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)})
		ws[i] = w{id, mix(h.Sum64())}
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].h != ws[j].h {
			return ws[i].h > ws[j].h
		}
		return ws[i].id < ws[j].id
	})
	out := make([]int32, len(ws))
	for i, x := range ws {
		out[i] = x.id
	}
	return out
}

// mix is a 64-bit finalizer (splitmix64) that spreads FNV's low-entropy results.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
