package assign

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestAssignmentAccessors checks the flat Assignment against its Map form:
// Index finds every member (also when the member order is not by id: range
// with static members) and nothing else, topics come in ascending topic id
// order, and Partitions counts them.
func TestAssignmentAccessors(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for i := range 200 {
		for _, a := range assignors {
			spec, md := randomSpec(r, i%2 == 1)
			out, err := a.Assign(spec, md)
			if err != nil {
				t.Fatal(err)
			}
			m := out.Map()
			if out.Len() != len(spec.Members) || len(m) != len(spec.Members) {
				t.Fatalf("%s: %d members, want %d", a.Name(), out.Len(), len(spec.Members))
			}
			for _, ms := range spec.Members {
				k := out.Index(ms.MemberID)
				if k < 0 || out.MemberID(k) != ms.MemberID {
					t.Fatalf("%s: Index(%q) = %d", a.Name(), ms.MemberID, k)
				}
				if out.Topics(k) != len(m[ms.MemberID]) {
					t.Fatalf("%s: %q has %d topics, map %d", a.Name(), ms.MemberID, out.Topics(k), len(m[ms.MemberID]))
				}
				var ids []TopicID
				n := 0
				for j := range out.Topics(k) {
					id, ps := out.Topic(k, j)
					ids = append(ids, id)
					n += len(ps)
					if len(ps) == 0 || cap(ps) != len(ps) || !slices.Equal(ps, m[ms.MemberID][id]) {
						t.Fatalf("%s: %q topic %x: %v (cap %d)", a.Name(), ms.MemberID, id, ps, cap(ps))
					}
				}
				if !slices.IsSortedFunc(ids, compareTopicID) || out.Partitions(k) != n {
					t.Fatalf("%s: %q topics %x, partitions %d != %d", a.Name(), ms.MemberID, ids, out.Partitions(k), n)
				}
			}
			for _, id := range []string{"", "member-", "member-99", "zzz", fmt.Sprint(i)} {
				if k := out.Index(id); k >= 0 {
					t.Fatalf("%s: Index(%q) = %d for a non-member", a.Name(), id, k)
				}
			}
		}
	}
	var zero Assignment
	if zero.Len() != 0 || zero.Index("a") != -1 || len(zero.Map()) != 0 {
		t.Fatal("zero Assignment is not empty")
	}
}

// TestConcurrentAssign runs both assignors from several goroutines at once
// (the owner array is pooled across calls) and compares every result with
// the sequential one; run with -race.
func TestConcurrentAssign(t *testing.T) {
	gs := digestGroups()[:60]
	want := make([][]AssignmentMap, len(assignors))
	for i, a := range assignors {
		for _, g := range gs {
			m, err := assignMap(a, g.spec, g.md)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = append(want[i], m)
		}
	}
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for k := range gs {
				k = (k + 15*w) % len(gs)
				for i, a := range assignors {
					m, err := assignMap(a, gs[k].spec, gs[k].md)
					if err == nil && !reflect.DeepEqual(m, want[i][k]) {
						err = fmt.Errorf("%s %s: concurrent result differs", a.Name(), gs[k].name)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
