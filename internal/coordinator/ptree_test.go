package coordinator

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// checkPtree verifies t's structure and that it holds exactly want.
func checkPtree(t *testing.T, tr ptree[int32, tItem], want map[int32]int) {
	t.Helper()
	if tr.Len() != len(want) {
		t.Fatalf("Len %d, want %d", tr.Len(), len(want))
	}
	var got []int32
	tr.Ascend(func(v *tItem) bool {
		k := v.k
		if w, ok := want[k]; !ok || w != v.v {
			t.Fatalf("item %d=%d, want %v (present %v)", k, v.v, w, ok)
		}
		got = append(got, k)
		return true
	})
	if len(got) != len(want) || !slices.IsSorted(got) {
		t.Fatalf("ascend gave %d keys (sorted %v), want %d", len(got), slices.IsSorted(got), len(want))
	}
	for k, w := range want {
		if v, ok := tr.Get(k); !ok || v.v != w {
			t.Fatalf("Get(%d) = %d %v, want %d", k, v.v, ok, w)
		}
	}
	var walk func(n *pnode[int32, tItem], depth int) int
	leafDepth := -1
	walk = func(n *pnode[int32, tItem], depth int) int {
		if n.leaf() {
			if len(n.items) == 0 || len(n.items) > leafMax {
				t.Fatalf("leaf of %d items", len(n.items))
			}
			if leafDepth >= 0 && leafDepth != depth {
				t.Fatalf("leaves at depths %d and %d", leafDepth, depth)
			}
			leafDepth = depth
			return len(n.items)
		}
		if len(n.kids) == 0 || len(n.kids) > ptreeMax || len(n.keys) != len(n.kids) {
			t.Fatalf("internal node of %d kids, %d keys", len(n.kids), len(n.keys))
		}
		total := 0
		for i, c := range n.kids {
			if n.keys[i] != c.minKey() {
				t.Fatalf("separator %d, child's smallest %d", n.keys[i], c.minKey())
			}
			total += walk(c, depth+1)
		}
		return total
	}
	if tr.root != nil {
		if n := walk(tr.root, 0); n != len(want) {
			t.Fatalf("nodes hold %d items, want %d", n, len(want))
		}
	}
}

// TestPtreeProperty: random sets and deletes against a map; versions frozen along the way
// (their edit token retired) keep exactly what they held.
func TestPtreeProperty(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var tr ptree[int32, tItem]
		want := map[int32]int{}
		edit := uint64(1)
		type version struct {
			tr   ptree[int32, tItem]
			want map[int32]int
		}
		var versions []version
		keySpace := int32(10 + rng.Intn(2000))
		for step := 0; step < 3000; step++ {
			k := rng.Int31n(keySpace)
			switch op := rng.Intn(10); {
			case op < 6:
				tr.Set(edit, tItem{k, step})
				want[k] = step
			case op < 9:
				_, had := want[k]
				if tr.Delete(edit, k) != had {
					t.Fatalf("seed %d: Delete(%d) disagrees with the map (%v)", seed, k, had)
				}
				delete(want, k)
			default:
				versions = append(versions, version{tr, copyMap(want)})
				edit++
			}
		}
		checkPtree(t, tr, want)
		for _, v := range versions {
			checkPtree(t, v.tr, v.want)
		}
	}
}

func copyMap(m map[int32]int) map[int32]int {
	c := make(map[int32]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Appending keys in order leaves full leaves; building from sorted items too.
func TestPtreeSequentialFill(t *testing.T) {
	var tr ptree[int32, tItem]
	want := map[int32]int{}
	for i := int32(0); i < 1000; i++ {
		tr.Set(1, tItem{i, int(i)})
		want[i] = int(i)
	}
	checkPtree(t, tr, want)
	leaves := 0
	tr.root.ascendNodes(func(n *pnode[int32, tItem]) {
		if n.leaf() {
			leaves++
		}
	})
	if leaves != (1000+leafMax-1)/leafMax {
		t.Fatalf("%d leaves for 1000 keys appended in order", leaves)
	}
	items := make([]tItem, 0, 1000)
	for i := int32(0); i < 1000; i++ {
		items = append(items, tItem{i, int(i)})
	}
	checkPtree(t, buildPtree[int32](1, items), want)
	b := buildPtree[int32](1, items)
	b.Set(2, tItem{5000, 1})
	want[5000] = 1
	checkPtree(t, b, want)
	_ = fmt.Sprint()
}

func (n *pnode[K, V]) ascendNodes(fn func(*pnode[K, V])) {
	fn(n)
	for _, c := range n.kids {
		c.ascendNodes(fn)
	}
}

type tItem struct {
	k int32
	v int
}

func (i tItem) key() int32 { return i.k }
