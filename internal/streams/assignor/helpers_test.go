package assignor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

type taskKey struct {
	sub string
	p   int32
}

func tasksOf(ts TaskSet) []taskKey {
	var out []taskKey
	for s, ps := range ts {
		for _, p := range ps {
			out = append(out, taskKey{s, p})
		}
	}
	return out
}

func countTasks(ts TaskSet) int {
	n := 0
	for _, ps := range ts {
		n += len(ps)
	}
	return n
}

func procOf(m MemberSpec) string {
	if m.ProcessID == "" {
		return "\x00" + m.MemberID
	}
	return m.ProcessID
}

// check verifies the invariants every assignment must satisfy and returns
// the number of warm-ups.
func check(t *testing.T, spec *GroupSpec, a AssignmentMap) int {
	t.Helper()
	if len(a) != len(spec.Members) {
		t.Fatalf("assignment has %d members, spec %d", len(a), len(spec.Members))
	}
	proc := map[string]string{}
	procs := map[string]bool{}
	for _, m := range spec.Members {
		if _, ok := a[m.MemberID]; !ok {
			t.Fatalf("member %s missing from assignment", m.MemberID)
		}
		proc[m.MemberID] = procOf(m)
		procs[procOf(m)] = true
	}
	subs := map[string]Subtopology{}
	for _, s := range spec.Subtopologies {
		subs[s.ID] = s
	}
	activeOwner := map[taskKey]string{}
	warmOwner := map[taskKey]string{}
	standbyProcs := map[taskKey]map[string]bool{}
	for id, ma := range a {
		for kind, ts := range map[string]TaskSet{"active": ma.Active, "standby": ma.Standby, "warmup": ma.Warmup} {
			for s, ps := range ts {
				sub, ok := subs[s]
				if !ok {
					t.Fatalf("%s: %s task of unknown subtopology %s", id, kind, s)
				}
				if len(ps) == 0 {
					t.Fatalf("%s: empty %s entry for %s", id, kind, s)
				}
				if !slices.IsSorted(ps) {
					t.Fatalf("%s: %s partitions of %s not sorted: %v", id, kind, s, ps)
				}
				for i, p := range ps {
					if p < 0 || p >= sub.NumTasks {
						t.Fatalf("%s: %s task %s_%d out of range", id, kind, s, p)
					}
					if i > 0 && ps[i-1] == p {
						t.Fatalf("%s: duplicate %s task %s_%d", id, kind, s, p)
					}
					k := taskKey{s, p}
					switch kind {
					case "active":
						if o, dup := activeOwner[k]; dup {
							t.Fatalf("task %v active on %s and %s", k, o, id)
						}
						activeOwner[k] = id
					case "warmup":
						if !sub.Stateful {
							t.Fatalf("warm-up of stateless task %v", k)
						}
						if o, dup := warmOwner[k]; dup {
							t.Fatalf("task %v warm-up on %s and %s", k, o, id)
						}
						warmOwner[k] = id
					case "standby":
						if !sub.Stateful {
							t.Fatalf("standby of stateless task %v", k)
						}
						if standbyProcs[k] == nil {
							standbyProcs[k] = map[string]bool{}
						}
						if standbyProcs[k][proc[id]] {
							t.Fatalf("two standbys of %v on process %s", k, proc[id])
						}
						standbyProcs[k][proc[id]] = true
					}
				}
			}
		}
	}
	total := 0
	for _, s := range spec.Subtopologies {
		total += int(s.NumTasks)
	}
	if len(spec.Members) > 0 && len(activeOwner) != total {
		t.Fatalf("%d tasks active, want %d", len(activeOwner), total)
	}
	if len(warmOwner) > spec.NumWarmupReplicas {
		t.Fatalf("%d warm-ups, limit %d", len(warmOwner), spec.NumWarmupReplicas)
	}
	for k, w := range warmOwner {
		if proc[w] == proc[activeOwner[k]] {
			t.Fatalf("warm-up of %v on the active's process", k)
		}
	}
	for _, s := range spec.Subtopologies {
		if !s.Stateful || len(spec.Members) == 0 {
			continue
		}
		for p := int32(0); p < s.NumTasks; p++ {
			k := taskKey{s.ID, p}
			sp := standbyProcs[k]
			if sp[proc[activeOwner[k]]] {
				t.Fatalf("standby of %v on the active's process", k)
			}
			if w, ok := warmOwner[k]; ok && sp[proc[w]] {
				t.Fatalf("standby of %v on the warm-up's process", k)
			}
			avail := len(procs) - 1
			if _, ok := warmOwner[k]; ok {
				avail--
			}
			if want := min(spec.NumStandbyReplicas, avail); len(sp) != want {
				t.Fatalf("task %v has %d standbys, want %d", k, len(sp), want)
			}
		}
	}
	return len(warmOwner)
}

// spread returns max-min of f over members.
func spread(a AssignmentMap, f func(MemberAssignment) int) int {
	lo, hi := 1<<30, -1
	for _, ma := range a {
		n := f(ma)
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

func activeCount(ma MemberAssignment) int { return countTasks(ma.Active) }
func totalCount(ma MemberAssignment) int  { return countTasks(ma.Active) + countTasks(ma.Standby) }

// withPrevious returns a copy of spec whose members carry a's tasks as their
// previous target (members missing from a start empty).
func withPrevious(spec *GroupSpec, a AssignmentMap) *GroupSpec {
	out := *spec
	out.Members = slices.Clone(spec.Members)
	for i := range out.Members {
		ma := a[out.Members[i].MemberID]
		out.Members[i].Active, out.Members[i].Standby, out.Members[i].Warmup = flat(ma.Active), flat(ma.Standby), flat(ma.Warmup)
	}
	return &out
}

// moves counts active tasks whose owner differs between a and b.
func moves(a, b AssignmentMap) int {
	owner := map[taskKey]string{}
	for id, ma := range a {
		for _, k := range tasksOf(ma.Active) {
			owner[k] = id
		}
	}
	n := 0
	for id, ma := range b {
		for _, k := range tasksOf(ma.Active) {
			if owner[k] != id {
				n++
			}
		}
	}
	return n
}

// randomSpec builds a random group without previous assignments.
func randomSpec(r *rand.Rand, maxMembers int) *GroupSpec {
	spec := &GroupSpec{NumStandbyReplicas: r.IntN(3), NumWarmupReplicas: r.IntN(3), AcceptableRecoveryLag: int64(r.IntN(100))}
	nm := 1 + r.IntN(maxMembers)
	np := 1 + r.IntN(nm)
	if r.IntN(3) == 0 {
		np = nm
	}
	for i := 0; i < nm; i++ {
		spec.Members = append(spec.Members, MemberSpec{
			MemberID:  fmt.Sprintf("m%03d", i),
			ProcessID: fmt.Sprintf("p%03d", r.IntN(np)),
		})
	}
	ns := 1 + r.IntN(6)
	for i := 0; i < ns; i++ {
		spec.Subtopologies = append(spec.Subtopologies, Subtopology{
			ID: fmt.Sprintf("%d", i), NumTasks: int32(r.IntN(24)), Stateful: r.IntN(2) == 0,
		})
	}
	return spec
}

// shuffled returns spec with members, subtopologies, task entries and lags
// in another order, in fresh copies.
func shuffled(r *rand.Rand, spec *GroupSpec) *GroupSpec {
	out := *spec
	out.Members = slices.Clone(spec.Members)
	r.Shuffle(len(out.Members), func(i, j int) { out.Members[i], out.Members[j] = out.Members[j], out.Members[i] })
	out.Subtopologies = slices.Clone(spec.Subtopologies)
	r.Shuffle(len(out.Subtopologies), func(i, j int) {
		out.Subtopologies[i], out.Subtopologies[j] = out.Subtopologies[j], out.Subtopologies[i]
	})
	for i := range out.Members {
		m := &out.Members[i]
		m.Active, m.Standby, m.Warmup = cloneTS(r, m.Active), cloneTS(r, m.Standby), cloneTS(r, m.Warmup)
		if m.TaskLags != nil {
			m.TaskLags = slices.Clone(m.TaskLags)
			r.Shuffle(len(m.TaskLags), func(i, j int) { m.TaskLags[i], m.TaskLags[j] = m.TaskLags[j], m.TaskLags[i] })
		}
	}
	return &out
}

// cloneTS returns a deep copy of ts with its entries in another order.
func cloneTS(r *rand.Rand, ts []SubtopologyTasks) []SubtopologyTasks {
	if ts == nil {
		return nil
	}
	out := make([]SubtopologyTasks, len(ts))
	for i, e := range ts {
		out[i] = SubtopologyTasks{e.Subtopology, slices.Clone(e.Partitions)}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// flat turns a TaskSet into the input's entry list, subtopologies ascending
// (nil for an empty set).
func flat(ts TaskSet) []SubtopologyTasks {
	if len(ts) == 0 {
		return nil
	}
	out := make([]SubtopologyTasks, 0, len(ts))
	for s, ps := range ts {
		out = append(out, SubtopologyTasks{s, ps})
	}
	slices.SortFunc(out, func(a, b SubtopologyTasks) int { return strings.Compare(a.Subtopology, b.Subtopology) })
	return out
}

func mustAssign(t testing.TB, spec *GroupSpec) AssignmentMap {
	t.Helper()
	a, err := Sticky().Assign(spec)
	if err != nil {
		t.Fatalf("Assign: %v", err)
	}
	return a.Map()
}

// lags turns sub -> partition -> lag into a TaskLags list sorted by task
// (nil stays nil).
func lags(m map[string]map[int32]int64) []TaskLag {
	if m == nil {
		return nil
	}
	out := []TaskLag{}
	for s, ps := range m {
		for p, l := range ps {
			out = append(out, TaskLag{s, p, l})
		}
	}
	slices.SortFunc(out, func(a, b TaskLag) int {
		if a.Subtopology != b.Subtopology {
			return strings.Compare(a.Subtopology, b.Subtopology)
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}
