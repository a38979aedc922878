package assign

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

var rackNames = []string{"az1", "az2", "az3"}

// rackSpec: members spread over three racks; partition p of topic t has its
// replicas on rf racks starting at p%3 (the same for every topic, so that
// range can keep co-partitioning and rack alignment together).
func rackSpec(members, topics int, parts int32, rf int) (*GroupSpec, *meta) {
	cs := make([]int32, topics)
	for i := range cs {
		cs[i] = parts
	}
	md := topicsMeta(cs...)
	md.racks = func(id TopicID, p int32) []string {
		var rs []string
		for k := range rf {
			rs = append(rs, rackNames[(int(p)+k)%3])
		}
		return rs
	}
	spec := homogeneousSpec(members, topics)
	for i := range spec.Members {
		spec.Members[i].RackID = rackNames[i%3]
	}
	return spec, md
}

func rackMisses(spec *GroupSpec, md *meta, a AssignmentMap) int {
	miss := 0
	for _, ms := range spec.Members {
		for id, ps := range a[ms.MemberID] {
			for _, p := range ps {
				if !slices.Contains(md.racks(id, p), ms.RackID) {
					miss++
				}
			}
		}
	}
	return miss
}

func TestRackAwareUniformAndRange(t *testing.T) {
	for _, rf := range []int{1, 2} {
		for _, a := range assignors {
			t.Run(fmt.Sprintf("%s/rf=%d", a.Name(), rf), func(t *testing.T) {
				spec, md := rackSpec(6, 2, 12, rf)
				out, err := assignMap(a, spec, md)
				if err != nil {
					t.Fatal(err)
				}
				check(t, spec, md, out)
				if lo, hi := spread(out); hi-lo > 1 {
					t.Fatalf("unbalanced %d..%d", lo, hi)
				}
				if m := rackMisses(spec, md, out); m != 0 {
					t.Fatalf("%d partitions assigned off-rack: %v", m, out)
				}
				// Without member racks the same group is assigned rack-blind,
				// which here puts partitions off-rack.
				blind := &GroupSpec{Members: slices.Clone(spec.Members)}
				for i := range blind.Members {
					blind.Members[i].RackID = ""
				}
				out2, _ := assignMap(a, blind, md)
				if rf == 1 && rackMisses(spec, md, out2) == 0 {
					t.Fatal("test is not discriminating: rack-blind assignment is already on-rack")
				}
				// Stable when re-run from its own result.
				again, err := assignMap(a, withCurrent(spec, out), md)
				if err != nil {
					t.Fatal(err)
				}
				if n := moved(out, again); n != 0 {
					t.Fatalf("moved %d on re-assignment", n)
				}
			})
		}
	}
}

func TestRackAwareKeepsBalanceOverLocality(t *testing.T) {
	// All partitions live on az1 only, but members are on three racks:
	// balance wins, and as many partitions as possible go to az1 members.
	md := topicsMeta(9)
	md.racks = func(TopicID, int32) []string { return []string{"az1"} }
	spec := homogeneousSpec(3, 1)
	for i := range spec.Members {
		spec.Members[i].RackID = rackNames[i]
	}
	// Every partition on the same single rack: rack info cannot help
	// distinguish partitions, only one member can be local.
	for _, a := range assignors {
		out, err := assignMap(a, spec, md)
		if err != nil {
			t.Fatal(err)
		}
		check(t, spec, md, out)
		if c := counts(out); c["m000"] != 3 || c["m001"] != 3 || c["m002"] != 3 {
			t.Fatalf("%s: balance lost: %v", a.Name(), c)
		}
	}
}

func TestRackAwareHeterogeneousUniform(t *testing.T) {
	md := topicsMeta(12, 12, 6)
	md.racks = func(id TopicID, p int32) []string { return []string{rackNames[(int(p)+int(id[1]))%3]} }
	spec := &GroupSpec{}
	for i := range 6 {
		subs := []TopicID{tid(0), tid(1)}
		if i%2 == 1 {
			subs = append(subs, tid(2))
		}
		spec.Members = append(spec.Members, MemberSpec{MemberID: fmt.Sprintf("m%d", i), RackID: rackNames[i%3], Subscribed: subs})
	}
	out, err := assignMap(Uniform(), spec, md)
	if err != nil {
		t.Fatal(err)
	}
	check(t, spec, md, out)
	if lo, hi := spread(out); hi-lo > 1 {
		t.Fatalf("unbalanced %d..%d: %v", lo, hi, counts(out))
	}
	blind := &GroupSpec{Members: slices.Clone(spec.Members)}
	for i := range blind.Members {
		blind.Members[i].RackID = ""
	}
	out2, _ := assignMap(Uniform(), blind, md)
	if m, m2 := rackMisses(spec, md, out), rackMisses(spec, md, out2); m >= m2 {
		t.Fatalf("rack-aware misses %d, rack-blind %d", m, m2)
	}
}

func TestRangeCoPartitioningWinsOverRacks(t *testing.T) {
	// Partition p of topic t lives on rack (p+t)%3: no member can be local
	// for both topics' partition p, so range keeps plain co-partitioned ranges.
	md := topicsMeta(6, 6)
	md.racks = func(id TopicID, p int32) []string { return []string{rackNames[(int(p)+int(id[1]))%3]} }
	spec := homogeneousSpec(3, 2)
	for i := range spec.Members {
		spec.Members[i].RackID = rackNames[i]
	}
	out, err := assignMap(Range(), spec, md)
	if err != nil {
		t.Fatal(err)
	}
	check(t, spec, md, out)
	for _, ms := range spec.Members {
		if !slices.Equal(out[ms.MemberID][tid(0)], out[ms.MemberID][tid(1)]) {
			t.Fatalf("co-partitioning lost: %v", out)
		}
	}
}

// TestRackListsReusedByMetadata: resolved replica rack lists are cached by
// content; metadata that rewrites one buffer for every partition must give
// the same assignments as metadata returning fresh slices.
func TestRackListsReusedByMetadata(t *testing.T) {
	n := 0
	for _, g := range digestGroups() {
		if g.md.racks == nil {
			continue
		}
		for _, a := range assignors {
			want, err := assignMap(a, g.spec, g.md)
			if err != nil {
				t.Fatal(err)
			}
			fresh := g.md.racks
			var buf []string
			reused := &meta{n: g.md.n, racks: func(id TopicID, p int32) []string {
				buf = append(buf[:0], fresh(id, p)...)
				return buf
			}}
			got, err := assignMap(a, g.spec, reused)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s: reused rack buffer changed the assignment", a.Name(), g.name)
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d rack-aware cases", n)
	}
}
