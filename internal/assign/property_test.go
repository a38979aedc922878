package assign

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

var assignors = []Assignor{Uniform(), Range()}

// TestPropertiesRandomGroups checks, over random groups, exact-once coverage
// of every subscribed partition, no unsubscribed topics, determinism under
// shuffled member order, and stability (re-assigning from the result moves
// nothing).
func TestPropertiesRandomGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 600 {
		for _, a := range assignors {
			spec, md := randomSpec(r, i%2 == 1)
			if i%3 == 0 {
				md.racks = func(id TopicID, p int32) []string {
					return []string{[]string{"a", "b", "c"}[(int(p)+int(id[1]))%3]}
				}
				for j := range spec.Members {
					if j%4 != 3 {
						spec.Members[j].RackID = []string{"a", "b", "c"}[j%3]
					}
				}
			}
			out, err := assignMap(a, spec, md)
			if err != nil {
				t.Fatal(err)
			}
			check(t, spec, md, out)

			shuffled := &GroupSpec{Members: slices.Clone(spec.Members)}
			r.Shuffle(len(shuffled.Members), func(x, y int) {
				shuffled.Members[x], shuffled.Members[y] = shuffled.Members[y], shuffled.Members[x]
			})
			out2, err := assignMap(a, shuffled, md)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out, out2) {
				t.Fatalf("%s: member order changed the result:\n%v\n%v", a.Name(), out, out2)
			}

			again, err := assignMap(a, withCurrent(spec, out), md)
			if err != nil {
				t.Fatal(err)
			}
			check(t, spec, md, again)
			if n := moved(out, again); n != 0 {
				t.Fatalf("%s: re-assigning a stable group moved %d partitions", a.Name(), n)
			}
		}
	}
}

func TestUniformHomogeneousBalancedAndSticky(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 300 {
		nt := 1 + r.IntN(5)
		cs := make([]int32, nt)
		for i := range cs {
			cs[i] = int32(r.IntN(40))
		}
		md := topicsMeta(cs...)
		spec := homogeneousSpec(1+r.IntN(15), nt)
		out, err := assignMap(Uniform(), spec, md)
		if err != nil {
			t.Fatal(err)
		}
		check(t, spec, md, out)
		if lo, hi := spread(out); hi-lo > 1 {
			t.Fatalf("unbalanced: %d..%d", lo, hi)
		}

		// Add one member: only the partitions the new member gets move.
		grown := withCurrent(spec, out)
		grown.Members = append(grown.Members, MemberSpec{MemberID: "new", Subscribed: spec.Members[0].Subscribed})
		out2, err := assignMap(Uniform(), grown, md)
		if err != nil {
			t.Fatal(err)
		}
		check(t, grown, md, out2)
		if lo, hi := spread(out2); hi-lo > 1 {
			t.Fatalf("unbalanced after join: %d..%d", lo, hi)
		}
		if got, want := moved(out, out2), counts(out2)["new"]; got != want {
			t.Fatalf("join moved %d partitions, minimum is %d", got, want)
		}

		// Remove one member: only its partitions move.
		if len(spec.Members) < 2 {
			continue
		}
		gone := spec.Members[r.IntN(len(spec.Members))].MemberID
		shrunk := &GroupSpec{}
		for _, ms := range withCurrent(spec, out).Members {
			if ms.MemberID != gone {
				shrunk.Members = append(shrunk.Members, ms)
			}
		}
		out3, err := assignMap(Uniform(), shrunk, md)
		if err != nil {
			t.Fatal(err)
		}
		check(t, shrunk, md, out3)
		if lo, hi := spread(out3); hi-lo > 1 {
			t.Fatalf("unbalanced after leave: %d..%d", lo, hi)
		}
		// Only the departed member's partitions change owner.
		if got, want := moved(out, out3), counts(out)[gone]; got != want {
			t.Fatalf("leave moved %d partitions, want %d (those of the departed member)", got, want)
		}
	}
}

// TestUniformHeterogeneousBalanced checks the stopping condition of the
// balancing phase: for every topic, no subscriber holding one of its
// partitions has two or more partitions more than another subscriber.
func TestUniformHeterogeneousBalanced(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	for range 400 {
		spec, md := randomSpec(r, true)
		out, err := assignMap(Uniform(), spec, md)
		if err != nil {
			t.Fatal(err)
		}
		owners := check(t, spec, md, out)
		load := counts(out)
		subscribers := map[TopicID][]string{}
		for _, ms := range spec.Members {
			for _, id := range slices.Compact(slices.SortedFunc(slices.Values(ms.Subscribed), compareTopicID)) {
				subscribers[id] = append(subscribers[id], ms.MemberID)
			}
		}
		for id, os := range owners {
			holds := map[string]bool{}
			for _, o := range os {
				holds[o] = true
			}
			for d := range holds {
				for _, rc := range subscribers[id] {
					if load[d]-load[rc] > 1 {
						t.Fatalf("topic %x: %s (%d) could give to %s (%d)", id, d, load[d], rc, load[rc])
					}
				}
			}
		}
	}
}

func TestRangeBalancedPerTopic(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 23))
	for range 300 {
		spec, md := randomSpec(r, r.IntN(2) == 0)
		out, err := assignMap(Range(), spec, md)
		if err != nil {
			t.Fatal(err)
		}
		check(t, spec, md, out)
		perTopic := map[TopicID]map[string]int{}
		for _, ms := range spec.Members {
			for _, id := range ms.Subscribed {
				if md.Partitions(id) < 0 {
					continue
				}
				if perTopic[id] == nil {
					perTopic[id] = map[string]int{}
				}
				perTopic[id][ms.MemberID] = len(out[ms.MemberID][id])
			}
		}
		for id, c := range perTopic {
			lo, hi := 1<<30, -1
			for _, n := range c {
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > 1 {
				t.Fatalf("range topic %x unbalanced: %v", id, c)
			}
		}
	}
}

func TestHeterogeneousJoinMovesLittle(t *testing.T) {
	// Two buckets of members on disjoint topics; a member joins bucket 0.
	md := topicsMeta(30, 30, 30, 30)
	spec := &GroupSpec{}
	for i := range 6 {
		subs := []TopicID{tid(0), tid(1)}
		if i >= 3 {
			subs = []TopicID{tid(2), tid(3)}
		}
		spec.Members = append(spec.Members, MemberSpec{MemberID: string(rune('a' + i)), Subscribed: subs})
	}
	out, err := assignMap(Uniform(), spec, md)
	if err != nil {
		t.Fatal(err)
	}
	grown := withCurrent(spec, out)
	grown.Members = append(grown.Members, MemberSpec{MemberID: "z", Subscribed: []TopicID{tid(0), tid(1)}})
	out2, err := assignMap(Uniform(), grown, md)
	if err != nil {
		t.Fatal(err)
	}
	check(t, grown, md, out2)
	if c := counts(out2); c["z"] != 15 {
		t.Fatalf("new member got %d, want 15", c["z"])
	}
	if got := moved(out, out2); got != 15 {
		t.Fatalf("moved %d, want 15 (only to the new member)", got)
	}
}

func TestErrorsAndEdgeCases(t *testing.T) {
	md := topicsMeta(4)
	for _, a := range assignors {
		if _, err := assignMap(a, nil, md); err == nil {
			t.Error("nil spec accepted")
		}
		if _, err := assignMap(a, &GroupSpec{}, nil); err == nil {
			t.Error("nil metadata accepted")
		}
		dup := &GroupSpec{Members: []MemberSpec{{MemberID: "a"}, {MemberID: "a"}}}
		if _, err := assignMap(a, dup, md); err == nil {
			t.Error("duplicate member id accepted")
		}
		if _, err := assignMap(a, &GroupSpec{Members: []MemberSpec{{}}}, md); err == nil {
			t.Error("empty member id accepted")
		}
		bad := &meta{n: map[TopicID]int32{tid(0): -5}}
		if _, err := assignMap(a, &GroupSpec{Members: []MemberSpec{{MemberID: "a", Subscribed: []TopicID{tid(0)}}}}, bad); err == nil {
			t.Error("negative partition count accepted")
		}
		out, err := assignMap(a, &GroupSpec{}, md)
		if err != nil || len(out) != 0 {
			t.Errorf("empty group: %v %v", out, err)
		}
		// Unknown topic skipped; member with no known topic gets an empty map;
		// stale current partitions (out of range, unknown topic) ignored.
		spec := &GroupSpec{Members: []MemberSpec{
			{MemberID: "a", Subscribed: []TopicID{tid(0), tid(9)}, Current: map[TopicID][]int32{tid(0): {7, 1, 1}, tid(9): {0}}},
			{MemberID: "b", Subscribed: []TopicID{tid(9)}},
		}}
		out, err = assignMap(a, spec, md)
		if err != nil {
			t.Fatal(err)
		}
		check(t, spec, md, out)
		if !reflect.DeepEqual(out["a"], map[TopicID][]int32{tid(0): {0, 1, 2, 3}}) || len(out["b"]) != 0 {
			t.Errorf("%s: got %v", a.Name(), out)
		}
	}
	if a, ok := ByName("uniform"); !ok || a.Name() != "uniform" {
		t.Error("ByName uniform")
	}
	if a, ok := ByName("range"); !ok || a.Name() != "range" {
		t.Error("ByName range")
	}
	if _, ok := ByName("sticky"); ok {
		t.Error("ByName accepted an unknown assignor")
	}
}
