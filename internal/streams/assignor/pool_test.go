package assignor

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

// Assign reuses pooled working state: concurrent calls, calls after
// errors and calls of different sizes must not see each other's data.
func TestPooledStateIsolation(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	specs := make([]*GroupSpec, 24)
	want := make([]AssignmentMap, len(specs))
	for i := range specs {
		specs[i] = randomSpec(r, 10+i*5)
		want[i] = mustAssign(t, specs[i])
	}
	bad := &GroupSpec{Members: []MemberSpec{{MemberID: "a"}, {MemberID: "a"}}, Subtopologies: []Subtopology{{ID: "s", NumTasks: 3}}}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 30; k++ {
				i := (g*7 + k*5) % len(specs)
				if k%4 == 0 {
					if _, err := Sticky().Assign(bad); err == nil {
						t.Errorf("duplicate member ids accepted")
					}
				}
				got, err := Sticky().Assign(specs[i])
				if err != nil {
					t.Errorf("spec %d: %v", i, err)
					return
				}
				if !reflect.DeepEqual(got.Map(), want[i]) {
					t.Errorf("spec %d: assignment differs from the first computation", i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}
