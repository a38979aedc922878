package coordinator

import "cmp"

// ptree is a persistent sorted map (a B+tree with path copying), the structure behind the
// shard's committed offsets. A tree value is a version: readers keep it and never see a change.
// Its owner changes it with an edit token: nodes created under the current token are changed in
// place, any other node is copied first (with the path above it), so a version handed out
// before the token changed (Offsets.Freeze) stays as it was, and a burst of changes between two
// freezes copies each touched node once. Kafka keeps its coordinator state in timeline data
// structures for the same reason: reads at the last committed offset while writes go on.
//
// Leaves hold up to leafMax items; internal nodes up to ptreeMax children, with the smallest
// key of each child. A node left empty by a delete is removed; nodes are not merged (deletes
// are rare next to overwrites: offsets are deleted with their group or topic).
type ptree[K cmp.Ordered, V keyed[K]] struct {
	root *pnode[K, V]
	n    int
}

const (
	ptreeMax = 32
	// leafMax and the capacities a leaf grows through (leafCap) keep a leaf's items on Go's
	// allocation size classes, counting the 8-byte header of an object of pointers over 512
	// bytes: 4, 12, 25 and 51 offsets of 40 bytes are objects of 160, 480, 1024 and 2048 bytes.
	leafMax = 51
)

// leafCap is the capacity of a leaf's items for n of them.
func leafCap(n int) int {
	switch {
	case n <= 4:
		return 4
	case n <= 12:
		return 12
	case n <= 25:
		return 25
	}
	return leafMax
}

// keyed is an item of a ptree: it carries its own key (an offset its partition), so a leaf is
// a plain sorted slice of items.
type keyed[K cmp.Ordered] interface{ key() K }

type pnode[K cmp.Ordered, V keyed[K]] struct {
	edit  uint64
	items []V            // a leaf's items, sorted by key
	keys  []K            // an internal node's children's smallest keys, sorted
	kids  []*pnode[K, V] // an internal node's children (nil for a leaf)
}

func (n *pnode[K, V]) leaf() bool { return n.kids == nil }

// Len is the number of items.
func (t *ptree[K, V]) Len() int { return t.n }

// child is the index of the child of internal node n whose range holds k.
func (n *pnode[K, V]) child(k K) int {
	lo, hi := 0, len(n.keys) // the last i with keys[i] <= k; 0 when k is below every key
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.keys[m] <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

// search is the position of k in leaf n, and whether it is there.
func (n *pnode[K, V]) search(k K) (int, bool) {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.items[m].key() < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.items) && n.items[lo].key() == k
}

// Get returns k's value.
func (t *ptree[K, V]) Get(k K) (V, bool) {
	n := t.root
	if n == nil {
		var zero V
		return zero, false
	}
	for !n.leaf() {
		n = n.kids[n.child(k)]
	}
	if i, ok := n.search(k); ok {
		return n.items[i], true
	}
	var zero V
	return zero, false
}

// ref returns a pointer to k's value for reading in place (nil when absent); it is valid until
// the next change of the tree.
func (t *ptree[K, V]) ref(k K) *V {
	n := t.root
	if n == nil {
		return nil
	}
	for !n.leaf() {
		n = n.kids[n.child(k)]
	}
	if i, ok := n.search(k); ok {
		return &n.items[i]
	}
	return nil
}

// mutable returns n itself when it was made under edit, else a copy made under edit.
func (n *pnode[K, V]) mutable(edit uint64) *pnode[K, V] {
	if n.edit == edit {
		return n
	}
	c := &pnode[K, V]{edit: edit}
	if n.leaf() {
		c.items = make([]V, len(n.items), leafCap(len(n.items)+1))
		copy(c.items, n.items)
	} else {
		c.keys = make([]K, len(n.keys), len(n.keys)+1)
		copy(c.keys, n.keys)
		c.kids = make([]*pnode[K, V], len(n.kids), len(n.kids)+1)
		copy(c.kids, n.kids)
	}
	return c
}

// Set puts v (replacing the item of its key) under edit.
func (t *ptree[K, V]) Set(edit uint64, v V) {
	if t.root == nil {
		t.root = &pnode[K, V]{edit: edit, items: append(make([]V, 0, 4), v)}
		t.n = 1
		return
	}
	root, right, added := t.root.set(edit, v.key(), v)
	if right != nil {
		root = &pnode[K, V]{edit: edit, keys: []K{root.minKey(), right.minKey()}, kids: []*pnode[K, V]{root, right}}
	}
	t.root = root
	if added {
		t.n++
	}
}

func (n *pnode[K, V]) minKey() K {
	if n.leaf() {
		return n.items[0].key()
	}
	return n.keys[0]
}

// set puts k → v below n and returns n's replacement, a new right sibling when it split, and
// whether k is new.
func (n *pnode[K, V]) set(edit uint64, k K, v V) (*pnode[K, V], *pnode[K, V], bool) {
	if n.leaf() {
		i, found := n.search(k)
		if found {
			if n.edit != edit {
				n = n.mutable(edit)
			}
			n.items[i] = v
			return n, nil, false
		}
		n = n.mutable(edit)
		if len(n.items) < leafMax {
			n.items = insertAt(n.items, i, v)
			return n, nil, true
		}
		// Full: split at the insertion point, the new item ending the left leaf. Keys come in
		// runs (offsets are committed for ranges of partitions): the rest of a run goes after
		// the new item, filling the left leaf, while the right one keeps what was after it. An
		// insert at the end (partitions in order) leaves this leaf full.
		var right *pnode[K, V]
		switch {
		case i == len(n.items):
			right = &pnode[K, V]{edit: edit, items: append(make([]V, 0, leafCap(1)), v)}
		case i == 0:
			right = &pnode[K, V]{edit: edit, items: n.items} // n is mutable: its items are its own
			n.items = append(make([]V, 0, leafCap(1)), v)
		default:
			right = &pnode[K, V]{edit: edit, items: append(make([]V, 0, leafCap(len(n.items)-i)), n.items[i:]...)}
			clear(n.items[i:])
			n.items = append(n.items[:i], v)
		}
		return n, right, true
	}
	i := n.child(k)
	kid, right, added := n.kids[i].set(edit, k, v)
	if kid == n.kids[i] && right == nil && k >= n.keys[i] {
		return n, nil, added // changed in place below: n is unchanged
	}
	n = n.mutable(edit)
	n.kids[i] = kid
	n.keys[i] = kid.minKey()
	if right == nil {
		return n, nil, added
	}
	n.keys = append(n.keys, k)
	n.kids = append(n.kids, nil)
	copy(n.keys[i+2:], n.keys[i+1:])
	copy(n.kids[i+2:], n.kids[i+1:])
	n.keys[i+1], n.kids[i+1] = right.minKey(), right
	if len(n.kids) <= ptreeMax {
		return n, nil, added
	}
	at := splitAt(len(n.kids), i+1)
	sib := &pnode[K, V]{edit: edit,
		keys: append(make([]K, 0, len(n.keys)-at+1), n.keys[at:]...),
		kids: append(make([]*pnode[K, V], 0, len(n.kids)-at+1), n.kids[at:]...)}
	clear(n.kids[at:])
	n.keys, n.kids = n.keys[:at], n.kids[:at]
	return n, sib, added
}

// splitAt is where an internal node of n children (one over the maximum) splits after an
// insert at i: in the middle, or, for an insert at the end, leaving the left node full.
func splitAt(n, i int) int {
	if i == n-1 {
		return n - 1
	}
	return n / 2
}

// Delete removes k under edit; false when it was not there.
func (t *ptree[K, V]) Delete(edit uint64, k K) bool {
	if t.root == nil {
		return false
	}
	root, removed := t.root.del(edit, k)
	if !removed {
		return false
	}
	t.n--
	for root != nil && !root.leaf() && len(root.kids) == 1 {
		root = root.kids[0]
	}
	t.root = root
	return true
}

// del removes k below n; the replacement is nil when n is left empty.
func (n *pnode[K, V]) del(edit uint64, k K) (*pnode[K, V], bool) {
	if n.leaf() {
		i, found := n.search(k)
		if !found {
			return n, false
		}
		if len(n.items) == 1 {
			return nil, true
		}
		n = n.mutable(edit)
		copy(n.items[i:], n.items[i+1:])
		var zero V
		n.items[len(n.items)-1] = zero
		n.items = n.items[:len(n.items)-1]
		return n, true
	}
	i := n.child(k)
	kid, removed := n.kids[i].del(edit, k)
	if !removed {
		return n, false
	}
	if kid == nil && len(n.kids) == 1 {
		return nil, true
	}
	n = n.mutable(edit)
	if kid == nil {
		copy(n.keys[i:], n.keys[i+1:])
		copy(n.kids[i:], n.kids[i+1:])
		n.kids[len(n.kids)-1] = nil
		n.keys, n.kids = n.keys[:len(n.keys)-1], n.kids[:len(n.kids)-1]
		return n, true
	}
	n.kids[i], n.keys[i] = kid, kid.minKey()
	return n, true
}

// Ascend calls fn for every item in key order until fn returns false; fn must not change the
// tree.
func (t *ptree[K, V]) Ascend(fn func(v *V) bool) {
	if t.root != nil {
		t.root.ascend(fn)
	}
}

func (n *pnode[K, V]) ascend(fn func(v *V) bool) bool {
	if n.leaf() {
		for i := range n.items {
			if !fn(&n.items[i]) {
				return false
			}
		}
		return true
	}
	for _, c := range n.kids {
		if !c.ascend(fn) {
			return false
		}
	}
	return true
}

// build makes a tree of sorted, distinct items, every node full but the last of a level.
func buildPtree[K cmp.Ordered, V keyed[K]](edit uint64, items []V) ptree[K, V] {
	if len(items) == 0 {
		return ptree[K, V]{}
	}
	var level []*pnode[K, V]
	for i := 0; i < len(items); i += leafMax {
		chunk := items[i:min(i+leafMax, len(items))]
		level = append(level, &pnode[K, V]{edit: edit, items: append(make([]V, 0, leafCap(len(chunk))), chunk...)})
	}
	for len(level) > 1 {
		var up []*pnode[K, V]
		for i := 0; i < len(level); i += ptreeMax {
			kids := level[i:min(i+ptreeMax, len(level))]
			n := &pnode[K, V]{edit: edit, kids: append(make([]*pnode[K, V], 0, len(kids)), kids...)}
			for _, c := range kids {
				n.keys = append(n.keys, c.minKey())
			}
			up = append(up, n)
		}
		level = up
	}
	return ptree[K, V]{root: level[0], n: len(items)}
}

// insertAt inserts v at i, growing the slice through leafCap.
func insertAt[V any](items []V, i int, v V) []V {
	if len(items) == cap(items) {
		grown := make([]V, len(items), leafCap(len(items)+1))
		copy(grown, items)
		items = grown
	}
	var zero V
	items = append(items, zero)
	copy(items[i+1:], items[i:])
	items[i] = v
	return items
}
