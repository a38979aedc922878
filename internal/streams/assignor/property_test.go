package assignor

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

const propertyRounds = 400

// Fresh groups: invariants, balance, determinism under shuffle and a fixed
// point (assigning again from the result changes nothing).
func TestPropertyFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < propertyRounds; round++ {
		spec := randomSpec(r, 30)
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			a := mustAssign(t, spec)
			if w := check(t, spec, a); w != 0 {
				t.Fatalf("%d warm-ups without lags", w)
			}
			if s := spread(a, activeCount); s > 1 {
				t.Fatalf("active tasks per member spread %d", s)
			}
			if s := spread(a, func(ma MemberAssignment) int { return statefulCount(spec, ma.Active) }); s > 1 {
				t.Fatalf("stateful active tasks per member spread %d", s)
			}
			b := mustAssign(t, shuffled(r, spec))
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("output depends on member order")
			}
			again := mustAssign(t, shuffled(r, withPrevious(spec, a)))
			check(t, spec, again)
			if !reflect.DeepEqual(a, again) {
				t.Fatalf("reassigning the result moved tasks: %d active moves", moves(a, again))
			}
		})
	}
}

func statefulCount(spec *GroupSpec, ts TaskSet) int {
	n := 0
	for _, s := range spec.Subtopologies {
		if s.Stateful {
			n += len(ts[s.ID])
		}
	}
	return n
}

// One member per process: per-member and per-process balance coincide.
func TestPropertyBalanceOneMemberPerProcess(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < propertyRounds; round++ {
		spec := randomSpec(r, 40)
		for i := range spec.Members {
			spec.Members[i].ProcessID = "p-" + spec.Members[i].MemberID
		}
		a := mustAssign(t, spec)
		check(t, spec, a)
		if s := spread(a, activeCount); s > 1 {
			t.Fatalf("round %d: active spread %d", round, s)
		}
		// Greedy standby placement can end one task off when the last
		// standbys are left only for processes holding the task (Kafka's
		// assignor gives no bound here at all).
		if s := spread(a, totalCount); s > 2 && spec.NumStandbyReplicas < len(spec.Members) {
			t.Fatalf("round %d: active+standby spread %d", round, s)
		}
	}
}

// Processes of several members: processes balanced by capacity.
func TestPropertyProcessBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < propertyRounds; round++ {
		spec := randomSpec(r, 40)
		a := mustAssign(t, spec)
		check(t, spec, a)
		load := map[string]int{}
		capa := map[string]int{}
		for _, m := range spec.Members {
			load[procOf(m)] += activeCount(a[m.MemberID])
			capa[procOf(m)]++
		}
		// Every member is within one task of every other, so the per-member
		// load of two processes differs by less than one task.
		for p, l := range load {
			for q, k := range load {
				if float64(l)/float64(capa[p])-float64(k)/float64(capa[q]) > 1 {
					t.Fatalf("round %d: process %s load %d/%d vs %s %d/%d", round, p, l, capa[p], q, k, capa[q])
				}
			}
		}
	}
}

// One member joins or leaves a stable group: few active tasks move, and
// invariants and balance hold.
func TestPropertyStickyJoinLeave(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := 0; round < propertyRounds; round++ {
		spec := randomSpec(r, 30)
		a := mustAssign(t, spec)
		total := 0
		for _, s := range spec.Subtopologies {
			total += int(s.NumTasks)
		}
		next := withPrevious(spec, a)
		n := len(spec.Members)
		leave := r.IntN(2) == 0 && n > 1
		if leave {
			i := r.IntN(n)
			next.Members = append(next.Members[:i:i], next.Members[i+1:]...)
		} else {
			next.Members = append(next.Members, MemberSpec{MemberID: "new", ProcessID: fmt.Sprintf("p%03d", r.IntN(n+1))})
		}
		b := mustAssign(t, shuffled(r, next))
		check(t, next, b)
		if s := spread(b, activeCount); s > 1 {
			t.Fatalf("round %d: active spread %d", round, s)
		}
		m := len(next.Members)
		// Optimal is about total/max(n,m) moves; allow slack for the
		// stateful/stateless split and remainders.
		limit := (total+max(n, m)-1)/max(n, m) + 2*2
		if leave {
			limit = (total+n-1)/n + 4
		}
		if mv := moves(a, b); mv > limit {
			t.Fatalf("round %d (leave=%v, %d->%d members, %d tasks): %d moves, limit %d", round, leave, n, m, total, mv, limit)
		}
	}
}

// Random, partly invalid previous assignments and lags: invariants hold and
// the output does not depend on member order.
func TestPropertyGarbagePrevious(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for round := 0; round < propertyRounds; round++ {
		spec := randomSpec(r, 20)
		for i := range spec.Members {
			m := &spec.Members[i]
			m.Active, m.Standby, m.Warmup = flat(randomTS(r, spec)), flat(randomTS(r, spec)), flat(randomTS(r, spec))
			if r.IntN(2) == 0 {
				m.TaskLags = []TaskLag{}
				for _, k := range tasksOf(randomTS(r, spec)) {
					m.TaskLags = append(m.TaskLags, TaskLag{k.sub, k.p, int64(r.IntN(300)) - 10})
				}
			}
		}
		a := mustAssign(t, spec)
		check(t, spec, a)
		if w := countWarmups(a); w == 0 {
			if s := spread(a, activeCount); s > 1 {
				t.Fatalf("round %d: active spread %d", round, s)
			}
		}
		if b := mustAssign(t, shuffled(r, spec)); !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: output depends on member order", round)
		}
	}
}

func countWarmups(a AssignmentMap) int {
	n := 0
	for _, ma := range a {
		n += countTasks(ma.Warmup)
	}
	return n
}

func randomTS(r *rand.Rand, spec *GroupSpec) TaskSet {
	if r.IntN(4) == 0 {
		return nil
	}
	ts := TaskSet{}
	for i := r.IntN(6); i > 0; i-- {
		sub := fmt.Sprint(r.IntN(len(spec.Subtopologies) + 1)) // may be unknown
		ts[sub] = append(ts[sub], int32(r.IntN(30))-2)         // may be out of range or duplicated
	}
	return ts
}
