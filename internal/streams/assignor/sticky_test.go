package assignor

import (
	"reflect"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	if got := Sticky().Name(); got != "sticky" {
		t.Fatalf("Name() = %q", got)
	}
}

func TestInvalidSpecs(t *testing.T) {
	base := func() *GroupSpec {
		return &GroupSpec{
			Members:       []MemberSpec{{MemberID: "a", ProcessID: "p"}},
			Subtopologies: []Subtopology{{ID: "s", NumTasks: 2}},
		}
	}
	cases := map[string]func(*GroupSpec){
		"negative NumTasks":     func(s *GroupSpec) { s.Subtopologies[0].NumTasks = -1 },
		"duplicate subtopology": func(s *GroupSpec) { s.Subtopologies = append(s.Subtopologies, Subtopology{ID: "s"}) },
		"empty subtopology id":  func(s *GroupSpec) { s.Subtopologies[0].ID = "" },
		"duplicate member":      func(s *GroupSpec) { s.Members = append(s.Members, MemberSpec{MemberID: "a"}) },
		"empty member id":       func(s *GroupSpec) { s.Members[0].MemberID = "" },
		"negative standby":      func(s *GroupSpec) { s.NumStandbyReplicas = -1 },
		"negative warmup":       func(s *GroupSpec) { s.NumWarmupReplicas = -1 },
		"negative recovery lag": func(s *GroupSpec) { s.AcceptableRecoveryLag = -1 },
		"too many tasks": func(s *GroupSpec) {
			s.Subtopologies = []Subtopology{{ID: "x", NumTasks: 1 << 30}, {ID: "y", NumTasks: 1 << 30}}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			spec := base()
			mutate(spec)
			if a, err := Sticky().Assign(spec); err == nil || a != nil {
				t.Fatalf("want error, got %v, %v", a, err)
			}
		})
	}
	if _, err := Sticky().Assign(nil); err == nil {
		t.Fatal("nil spec: want error")
	}
}

func TestEmpty(t *testing.T) {
	a := mustAssign(t, &GroupSpec{Subtopologies: []Subtopology{{ID: "s", NumTasks: 3}}})
	if len(a) != 0 {
		t.Fatalf("no members: got %v", a)
	}
	spec := &GroupSpec{
		Members:       []MemberSpec{{MemberID: "a", ProcessID: "p", Active: flat(TaskSet{"gone": {1}})}},
		Subtopologies: []Subtopology{{ID: "s", NumTasks: 0, Stateful: true}},
	}
	a = mustAssign(t, spec)
	if !reflect.DeepEqual(a, AssignmentMap{"a": {}}) {
		t.Fatalf("no tasks: got %v", a)
	}
}

func TestFreshRoundRobin(t *testing.T) {
	spec := &GroupSpec{
		Members:       []MemberSpec{{MemberID: "b", ProcessID: "p2"}, {MemberID: "a", ProcessID: "p1"}},
		Subtopologies: []Subtopology{{ID: "s", NumTasks: 4}},
	}
	want := AssignmentMap{
		"a": {Active: TaskSet{"s": {0, 2}}},
		"b": {Active: TaskSet{"s": {1, 3}}},
	}
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestPreviousOwnerKeepsTasks(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "p1", Active: flat(TaskSet{"s": {1, 3}})},
			{MemberID: "b", ProcessID: "p2", Active: flat(TaskSet{"s": {0, 2}})},
		},
		Subtopologies: []Subtopology{{ID: "s", NumTasks: 4}},
	}
	want := AssignmentMap{
		"a": {Active: TaskSet{"s": {1, 3}}},
		"b": {Active: TaskSet{"s": {0, 2}}},
	}
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A task its previous owner cannot keep goes to another member of the same
// process before anyone else.
func TestSameProcessPreferred(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "P", Active: flat(TaskSet{"s": {0, 1, 2, 3}})},
			{MemberID: "b", ProcessID: "P"},
			{MemberID: "c", ProcessID: "Q"},
		},
		Subtopologies: []Subtopology{{ID: "s", NumTasks: 4, Stateful: true}},
	}
	want := AssignmentMap{
		"a": {Active: TaskSet{"s": {0, 1}}},
		"b": {Active: TaskSet{"s": {2}}},
		"c": {Active: TaskSet{"s": {3}}},
	}
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A task its previous owner cannot keep goes to its previous standby holder.
func TestPreviousStandbyPreferred(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "p1", Active: flat(TaskSet{"s": {0, 1, 2}})},
			{MemberID: "b", ProcessID: "p2"},
			{MemberID: "c", ProcessID: "p3", Standby: flat(TaskSet{"s": {1}})},
		},
		Subtopologies: []Subtopology{{ID: "s", NumTasks: 3, Stateful: true}},
	}
	want := AssignmentMap{
		"a": {Active: TaskSet{"s": {0}}},
		"b": {Active: TaskSet{"s": {2}}},
		"c": {Active: TaskSet{"s": {1}}},
	}
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Members restarted under new ids find their state again through lags.
func TestDormantStateByLag(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "x", ProcessID: "p1", TaskLags: lags(map[string]map[int32]int64{"s": {1: 0}})},
			{MemberID: "y", ProcessID: "p2", TaskLags: lags(map[string]map[int32]int64{"s": {0: 5}})},
		},
		Subtopologies:     []Subtopology{{ID: "s", NumTasks: 2, Stateful: true}},
		NumWarmupReplicas: 2,
	}
	want := AssignmentMap{
		"x": {Active: TaskSet{"s": {1}}},
		"y": {Active: TaskSet{"s": {0}}},
	}
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Stateful and stateless tasks are balanced each on their own.
func TestStatefulAndStatelessBalancedSeparately(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "p1", Active: flat(TaskSet{"sf": {0, 1}})},
			{MemberID: "b", ProcessID: "p2", Active: flat(TaskSet{"sl": {0, 1}})},
		},
		Subtopologies: []Subtopology{{ID: "sf", NumTasks: 2, Stateful: true}, {ID: "sl", NumTasks: 2}},
	}
	got := mustAssign(t, spec)
	check(t, spec, got)
	for id, ma := range got {
		if len(ma.Active["sf"]) != 1 || len(ma.Active["sl"]) != 1 {
			t.Fatalf("member %s got %v", id, ma.Active)
		}
	}
}

func TestStandbysOnOtherProcess(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a1", ProcessID: "A"}, {MemberID: "a2", ProcessID: "A"},
			{MemberID: "b1", ProcessID: "B"},
		},
		Subtopologies:      []Subtopology{{ID: "s", NumTasks: 3, Stateful: true}, {ID: "x", NumTasks: 3}},
		NumStandbyReplicas: 2, // only one other process: one standby each
	}
	got := mustAssign(t, spec)
	check(t, spec, got)
	standbys := 0
	for _, ma := range got {
		standbys += countTasks(ma.Standby)
		if ma.Standby["x"] != nil {
			t.Fatalf("standby of a stateless task: %v", ma.Standby)
		}
	}
	if standbys != 3 {
		t.Fatalf("%d standbys, want 3", standbys)
	}
}

// The previous standby holder and the previous active owner keep standbys.
func TestStandbySticky(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "p1", Active: flat(TaskSet{"s": {0}}), Standby: flat(TaskSet{"s": {1}})},
			{MemberID: "b", ProcessID: "p2", Active: flat(TaskSet{"s": {1}})},
			{MemberID: "c", ProcessID: "p3", Standby: flat(TaskSet{"s": {0}})},
		},
		Subtopologies:      []Subtopology{{ID: "s", NumTasks: 2, Stateful: true}},
		NumStandbyReplicas: 1,
	}
	got := mustAssign(t, spec)
	check(t, spec, got)
	if !reflect.DeepEqual(got["a"].Standby, TaskSet{"s": {1}}) || !reflect.DeepEqual(got["c"].Standby, TaskSet{"s": {0}}) {
		t.Fatalf("standbys moved: %v", got)
	}
}

func warmupSpec(newLags map[string]map[int32]int64, warmups int) *GroupSpec {
	return &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "p1", Active: flat(TaskSet{"s": {0, 1}}), TaskLags: lags(map[string]map[int32]int64{"s": {0: 0, 1: 0}})},
			{MemberID: "b", ProcessID: "p2", TaskLags: lags(newLags)},
		},
		Subtopologies:         []Subtopology{{ID: "s", NumTasks: 2, Stateful: true}},
		NumWarmupReplicas:     warmups,
		AcceptableRecoveryLag: 100,
	}
}

func TestWarmup(t *testing.T) {
	moved := AssignmentMap{
		"a": {Active: TaskSet{"s": {0}}},
		"b": {Active: TaskSet{"s": {1}}},
	}
	warming := AssignmentMap{
		"a": {Active: TaskSet{"s": {0, 1}}},
		"b": {Warmup: TaskSet{"s": {1}}},
	}
	cases := []struct {
		name    string
		lags    map[string]map[int32]int64
		warmups int
		want    AssignmentMap
	}{
		{"no state on new owner", map[string]map[int32]int64{}, 2, warming},
		{"lagging new owner", map[string]map[int32]int64{"s": {1: 101}}, 2, warming},
		{"caught-up new owner", map[string]map[int32]int64{"s": {1: 100}}, 2, moved},
		{"no lags reported", nil, 2, moved},
		{"warm-ups disabled", map[string]map[int32]int64{}, 0, moved},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := warmupSpec(c.lags, c.warmups)
			got := mustAssign(t, spec)
			check(t, spec, got)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}

	// Next round: the warm-up caught up, so the task moves.
	spec := warmupSpec(map[string]map[int32]int64{"s": {1: 3}}, 2)
	spec.Members[1].Warmup = flat(TaskSet{"s": {1}})
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, moved) {
		t.Fatalf("caught-up warm-up: got %v, want %v", got, moved)
	}
	// Still lagging: the warm-up continues.
	spec.Members[1].TaskLags = lags(map[string]map[int32]int64{"s": {1: 5000}})
	if got := mustAssign(t, spec); !reflect.DeepEqual(got, warming) {
		t.Fatalf("lagging warm-up: got %v, want %v", got, warming)
	}
	// A task listed twice counts with its smallest lag, in either order.
	for _, dup := range [][]TaskLag{{{"s", 1, 5000}, {"s", 1, 3}}, {{"s", 1, 3}, {"s", 1, 5000}}} {
		spec.Members[1].TaskLags = dup
		if got := mustAssign(t, spec); !reflect.DeepEqual(got, moved) {
			t.Fatalf("lags %v: got %v, want %v", dup, got, moved)
		}
	}
}

// At most NumWarmupReplicas warm-ups, the continuing ones first.
func TestWarmupLimit(t *testing.T) {
	spec := &GroupSpec{
		Members: []MemberSpec{
			{MemberID: "a", ProcessID: "p1", Active: flat(TaskSet{"s": {0, 1, 2, 3, 4, 5}})},
			{MemberID: "b", ProcessID: "p2", TaskLags: []TaskLag{}, Warmup: flat(TaskSet{"s": {5}})},
		},
		Subtopologies:      []Subtopology{{ID: "s", NumTasks: 6, Stateful: true}},
		NumWarmupReplicas:  2,
		NumStandbyReplicas: 1,
	}
	got := mustAssign(t, spec)
	if w := check(t, spec, got); w != 2 {
		t.Fatalf("%d warm-ups, want 2: %v", w, got)
	}
	if ws := got["b"].Warmup["s"]; len(ws) != 2 || ws[1] != 5 {
		t.Fatalf("continuing warm-up not kept: %v", got)
	}
	// No standby on the warm-up's process (the only other process).
	for _, p := range got["b"].Standby["s"] {
		for _, w := range got["b"].Warmup["s"] {
			if p == w {
				t.Fatalf("standby and warm-up of %d on b", p)
			}
		}
	}
}

func TestErrorMentionsSubtopology(t *testing.T) {
	_, err := Sticky().Assign(&GroupSpec{Subtopologies: []Subtopology{{ID: "bad", NumTasks: -3}}})
	if err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("err = %v", err)
	}
}
