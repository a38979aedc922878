package assign

import (
	"cmp"
	"slices"
)

// maxBalanceIterations bounds the balancing passes over the topics in
// heterogeneous groups (Kafka uses the same limit: each pass roughly halves
// the imbalance when subscriptions overlap without being identical).
const maxBalanceIterations = 16

// uniformHeterogeneous assigns when members subscribe to different topics
// (Kafka: UniformHeterogeneousAssignmentBuilder):
//  1. members keep every current partition of a topic they still subscribe to;
//  2. topics, most partitions per subscriber first, hand their unassigned
//     partitions to their least loaded subscribers (total load across topics);
//  3. topic by topic, partitions move from the most to the least loaded
//     subscribers until the loads of each topic's subscribers differ by at
//     most one, or no pass moves anything.
func (b *builder) uniformHeterogeneous() error {
	nm := len(b.members)
	load := make([]int32, nm)
	b.racks.keepMismatched = true
	var buf []curTopic
	for m := range b.members {
		if len(b.members[m].Current) == 0 {
			continue
		}
		buf = b.currentTopics(m, buf)
		subs, si := b.subs[m], 0 // both sorted: merge instead of searching
		for _, ct := range buf {
			for si < len(subs) && subs[si] < ct.t {
				si++
			}
			if si == len(subs) || subs[si] != ct.t {
				continue // no longer subscribed
			}
			for _, p := range ct.ps {
				if b.claimable(m, ct.t, p) {
					b.owner[b.topics[ct.t].off+p] = int32(m)
					load[m]++
				}
			}
		}
	}

	order := b.heterogeneousTopicOrder()
	rem := make([]int32, nm)
	var unassigned, sorted, hist []int32
	for _, t := range order {
		ti := b.topics[t]
		unassigned = unassigned[:0]
		for gp := ti.off; gp < ti.off+ti.n; gp++ {
			if b.owner[gp] < 0 {
				unassigned = append(unassigned, gp)
			}
		}
		if len(unassigned) == 0 {
			continue
		}
		sorted = waterFill(b.subscribers[t], load, rem, int64(len(unassigned)), sorted, &hist)
		if err := b.fill(unassigned, sorted, rem, true); err != nil {
			return err
		}
	}
	return b.balance(order, load)
}

// heterogeneousTopicOrder sorts the subscribed topics by partitions per
// subscriber descending, then subscriber count ascending, then topic id.
func (b *builder) heterogeneousTopicOrder() []int32 {
	order := make([]int32, 0, len(b.topics))
	for t := range b.topics {
		if len(b.subscribers[t]) > 0 {
			order = append(order, int32(t))
		}
	}
	slices.SortFunc(order, func(x, y int32) int {
		nx, sx := int64(b.topics[x].n), int64(len(b.subscribers[x]))
		ny, sy := int64(b.topics[y].n), int64(len(b.subscribers[y]))
		if c := cmp.Compare(ny*sx, nx*sy); c != 0 {
			return c
		}
		if c := cmp.Compare(sx, sy); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return order
}

// waterFill decides how many of k new partitions each of subs receives so
// that the least loaded get them first: it sets rem[m] to that number, adds
// it to load[m], and returns the receiving members, least loaded first (ties
// by member index), reusing buf. subs must be ascending member indices.
//
// The receivers are the members up to the water level: levelling the least
// loaded up to the next load costs (next load - level) × (members below),
// taken while k allows. Loads usually span a narrow range, so the level is
// found on a histogram of the loads (hist is its reusable buffer) and only
// the receivers are placed in order (counting sort, stable, so ties stay in
// index order); loads spanning more than 4·len(subs) fall back to sorting.
func waterFill(subs []int32, load, rem []int32, k int64, buf []int32, hist *[]int32) []int32 {
	lo, hi := load[subs[0]], load[subs[0]]
	for _, m := range subs[1:] {
		lo, hi = min(lo, load[m]), max(hi, load[m])
	}
	if int64(hi)-int64(lo) > 4*int64(len(subs)) {
		return giveOut(sortByLoad(subs, load, buf), load, rem, k)
	}
	width := int(hi-lo) + 1
	if cap(*hist) < width+1 {
		*hist = make([]int32, width+1)
	}
	h := (*hist)[:width+1]
	clear(h)
	for _, m := range subs {
		h[load[m]-lo]++
	}
	// Level: walk the non-empty buckets from the lowest.
	v := 0 // bucket of the current level
	j := int64(h[0])
	used := int64(0)
	for w := 1; w < width; w++ {
		if h[w] == 0 {
			continue
		}
		need := int64(w-v) * j
		if used+need > k {
			break
		}
		used += need
		v = w
		j += int64(h[w])
	}
	// Receivers (load <= lo+v) in (load, index) order: bucket starts.
	sum := int32(0)
	for w := 0; w <= v; w++ {
		c := h[w]
		h[w] = sum
		sum += c
	}
	s := buf[:0]
	if cap(s) < int(sum) {
		s = make([]int32, sum)
	}
	s = s[:sum]
	top := lo + int32(v)
	for _, m := range subs {
		if l := load[m]; l <= top {
			s[h[l-lo]] = m
			h[l-lo]++
		}
	}
	level := int64(top)
	each := (k - used) / j
	extra := (k - used) % j
	for i, m := range s {
		give := level - int64(load[m]) + each
		if int64(i) < extra {
			give++
		}
		rem[m] = int32(give)
		load[m] += int32(give)
	}
	return s
}

// giveOut is waterFill's level computation and distribution over s, the
// members sorted by (load, index).
func giveOut(s []int32, load, rem []int32, k int64) []int32 {
	level := int64(load[s[0]])
	j := 1
	used := int64(0)
	for j < len(s) {
		next := int64(load[s[j]])
		need := (next - level) * int64(j)
		if used+need > k {
			break
		}
		used += need
		level = next
		j++
	}
	each := (k - used) / int64(j)
	extra := (k - used) % int64(j)
	for i := 0; i < j; i++ {
		m := s[i]
		give := level - int64(load[m]) + each
		if int64(i) < extra {
			give++
		}
		rem[m] = int32(give)
		load[m] += int32(give)
	}
	return s[:j]
}

// balance moves partitions of each topic from its most loaded to its least
// loaded subscribers.
func (b *builder) balance(order []int32, load []int32) error {
	nm := len(b.members)
	cnt := make([]int32, nm)  // partitions of the current topic per member
	give := make([]int32, nm) // net partitions to give away
	take := make([]int32, nm) // net partitions to receive
	var pool, receivers []int32
	var lo, hi loadHeap
	for iter := 0; iter < maxBalanceIterations; iter++ {
		moved := false
		for _, t := range order {
			subs := b.subscribers[t]
			if len(subs) < 2 {
				continue
			}
			minL, maxL := load[subs[0]], load[subs[0]]
			for _, m := range subs[1:] {
				minL = min(minL, load[m])
				maxL = max(maxL, load[m])
			}
			if maxL-minL <= 1 {
				continue
			}
			ti := b.topics[t]
			seg := b.owner[ti.off : ti.off+ti.n]
			for _, m := range seg {
				cnt[m]++
			}
			lo.reset(load, false)
			hi.reset(load, true)
			for _, m := range subs {
				lo.push(m)
				if cnt[m] > 0 {
					hi.push(m)
				}
			}
			moves := 0
			for {
				d := hi.popValid(func(m int32) bool { return cnt[m] > 0 })
				r := lo.popValid(nil)
				if d < 0 || r < 0 || load[d]-load[r] <= 1 {
					break
				}
				load[d]--
				cnt[d]--
				if take[d] > 0 {
					take[d]--
				} else {
					give[d]++
				}
				load[r]++
				cnt[r]++
				if give[r] > 0 {
					give[r]--
				} else {
					take[r]++
				}
				moves++
				lo.push(d)
				lo.push(r)
				if cnt[d] > 0 {
					hi.push(d)
				}
				hi.push(r)
			}
			if moves > 0 {
				moved = true
				// Donors give rack-mismatched partitions first, then their
				// highest-numbered ones.
				pool = pool[:0]
				if b.racks.aware {
					for p := len(seg) - 1; p >= 0; p-- {
						m := seg[p]
						if give[m] > 0 && b.racks.mismatch(int(m), ti.off+int32(p)) {
							give[m]--
							pool = append(pool, ti.off+int32(p))
							seg[p] = -1
						}
					}
				}
				for p := len(seg) - 1; p >= 0; p-- {
					if m := seg[p]; m >= 0 && give[m] > 0 {
						give[m]--
						pool = append(pool, ti.off+int32(p))
						seg[p] = -1
					}
				}
				slices.Sort(pool)
				receivers = receivers[:0]
				for _, m := range subs {
					if take[m] > 0 {
						receivers = append(receivers, m)
					}
				}
				if err := b.fill(pool, receivers, take, true); err != nil {
					return err
				}
			}
			for _, m := range subs {
				cnt[m], give[m], take[m] = 0, 0, 0
			}
		}
		if !moved {
			break
		}
	}
	return nil
}

// loadHeap is a binary heap of member indices keyed by their load at push
// time; entries whose load changed since are stale and skipped on pop.
// Min-heap orders by (load, index) ascending; max-heap by (load, index)
// descending.
type loadHeap struct {
	load []int32
	max  bool
	m    []int32
	key  []int32
}

func (h *loadHeap) reset(load []int32, max bool) {
	h.load, h.max = load, max
	h.m, h.key = h.m[:0], h.key[:0]
}

func (h *loadHeap) less(i, j int) bool {
	if h.key[i] != h.key[j] {
		return (h.key[i] < h.key[j]) != h.max
	}
	return (h.m[i] < h.m[j]) != h.max
}

func (h *loadHeap) swap(i, j int) {
	h.m[i], h.m[j] = h.m[j], h.m[i]
	h.key[i], h.key[j] = h.key[j], h.key[i]
}

func (h *loadHeap) push(m int32) {
	h.m = append(h.m, m)
	h.key = append(h.key, h.load[m])
	for i := len(h.m) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *loadHeap) pop() (m, key int32) {
	m, key = h.m[0], h.key[0]
	last := len(h.m) - 1
	h.swap(0, last)
	h.m, h.key = h.m[:last], h.key[:last]
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < last && h.less(l, s) {
			s = l
		}
		if r < last && h.less(r, s) {
			s = r
		}
		if s == i {
			break
		}
		h.swap(i, s)
		i = s
	}
	return m, key
}

// popValid pops until an entry whose key is the member's current load (and
// that passes ok, when given); returns -1 when the heap runs empty.
func (h *loadHeap) popValid(ok func(int32) bool) int32 {
	for len(h.m) > 0 {
		m, key := h.pop()
		if key == h.load[m] && (ok == nil || ok(m)) {
			return m
		}
	}
	return -1
}

// sortByLoad returns subs (ascending member indices) ordered by load, ties by
// member index, in buf. Loads usually span a narrow range, so a counting sort
// (stable, hence keeping index order) is used when the range is at most
// 4·len(subs); otherwise a comparison sort.
func sortByLoad(subs []int32, load []int32, buf []int32) []int32 {
	s := append(buf[:0], subs...)
	lo, hi := load[subs[0]], load[subs[0]]
	for _, m := range subs[1:] {
		lo, hi = min(lo, load[m]), max(hi, load[m])
	}
	if int64(hi)-int64(lo) > 4*int64(len(subs)) || !slices.IsSorted(subs) {
		slices.SortFunc(s, func(x, y int32) int {
			if c := cmp.Compare(load[x], load[y]); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		return s
	}
	width := int(hi-lo) + 1
	pos := make([]int32, width+1)
	for _, m := range subs {
		pos[load[m]-lo+1]++
	}
	for i := 1; i <= width; i++ {
		pos[i] += pos[i-1]
	}
	for _, m := range subs {
		k := load[m] - lo
		s[pos[k]] = m
		pos[k]++
	}
	return s
}
