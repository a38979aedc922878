package assignor

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The flat accessors agree with Map: member numbering, Index, per-kind
// counts and subtopology order.
func TestAssignmentAccessors(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for round := 0; round < 200; round++ {
		spec := randomSpec(r, 30)
		a, err := Sticky().Assign(spec)
		if err != nil {
			t.Fatal(err)
		}
		m := a.Map()
		if a.Len() != len(spec.Members) || len(m) != a.Len() {
			t.Fatalf("Len %d, Map %d, members %d", a.Len(), len(m), len(spec.Members))
		}
		for i := 0; i < a.Len(); i++ {
			id := a.MemberID(i)
			if i > 0 && a.MemberID(i-1) >= id {
				t.Fatalf("member ids not ascending at %d", i)
			}
			if a.Index(id) != i {
				t.Fatalf("Index(%q) = %d, want %d", id, a.Index(id), i)
			}
			for kind, ts := range [numKinds]TaskSet{m[id].Active, m[id].Standby, m[id].Warmup} {
				k := TaskKind(kind)
				if a.Subtopologies(i, k) != len(ts) || a.Count(i, k) != countTasks(ts) {
					t.Fatalf("%s kind %d: %d subtopologies, %d tasks; map %v", id, k, a.Subtopologies(i, k), a.Count(i, k), ts)
				}
				prev := ""
				for j := range a.Subtopologies(i, k) {
					s, ps := a.Tasks(i, k, j)
					if j > 0 && s <= prev {
						t.Fatalf("%s kind %d: subtopologies not ascending", id, k)
					}
					prev = s
					if !slices.Equal(ps, ts[s]) || cap(ps) != len(ps) {
						t.Fatalf("%s kind %d sub %s: %v, map %v", id, k, s, ps, ts[s])
					}
				}
			}
		}
		for _, id := range []string{"", "m", "m0000", "zzz"} {
			if a.Index(id) != -1 {
				t.Fatalf("Index(%q) = %d, want -1", id, a.Index(id))
			}
		}
	}
	var zero Assignment
	if zero.Len() != 0 || zero.Index("a") != -1 || len(zero.Map()) != 0 {
		t.Fatal("zero Assignment not empty")
	}
	a, err := Sticky().Assign(&GroupSpec{Members: []MemberSpec{{MemberID: "a"}}})
	if err != nil || a.Len() != 1 || a.Count(0, ActiveTasks) != 0 || a.Subtopologies(0, StandbyTasks) != 0 {
		t.Fatalf("no tasks: %v %v", a, err)
	}
}
