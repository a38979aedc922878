package assign

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// assignMap runs a and returns its result as nested maps (nil on error).
func assignMap(a Assignor, spec *GroupSpec, md TopicMetadata) (AssignmentMap, error) {
	out, err := a.Assign(spec, md)
	if err != nil {
		if out != nil {
			return nil, fmt.Errorf("%w (and a non-nil result)", err)
		}
		return nil, err
	}
	return out.Map(), nil
}

// meta is an in-memory TopicMetadata.
type meta struct {
	n     map[TopicID]int32
	racks func(id TopicID, p int32) []string
}

func (m *meta) Partitions(id TopicID) int32 {
	if n, ok := m.n[id]; ok {
		return n
	}
	return -1
}

func (m *meta) PartitionRacks(id TopicID, p int32) []string {
	if m.racks == nil {
		return nil
	}
	return m.racks(id, p)
}

func tid(i int) TopicID {
	var id TopicID
	id[0] = byte(i >> 8)
	id[1] = byte(i)
	id[15] = 0xaa
	return id
}

func topicsMeta(counts ...int32) *meta {
	m := &meta{n: map[TopicID]int32{}}
	for i, c := range counts {
		m.n[tid(i)] = c
	}
	return m
}

// check verifies the invariants every assignment must satisfy and returns
// the owner of every partition.
func check(t *testing.T, spec *GroupSpec, md *meta, a AssignmentMap) map[TopicID][]string {
	t.Helper()
	owners := map[TopicID][]string{}
	subscribed := map[TopicID]bool{}
	for _, ms := range spec.Members {
		subs := map[TopicID]bool{}
		for _, id := range ms.Subscribed {
			subs[id] = true
			if md.Partitions(id) >= 0 {
				subscribed[id] = true
			}
		}
		got, ok := a[ms.MemberID]
		if !ok {
			t.Fatalf("member %s missing from assignment", ms.MemberID)
		}
		for id, ps := range got {
			if !subs[id] {
				t.Fatalf("member %s got unsubscribed topic %x", ms.MemberID, id)
			}
			if len(ps) == 0 {
				t.Fatalf("member %s has an empty partition list", ms.MemberID)
			}
			if !slices.IsSorted(ps) {
				t.Fatalf("member %s partitions not sorted: %v", ms.MemberID, ps)
			}
			if owners[id] == nil {
				owners[id] = make([]string, md.Partitions(id))
			}
			for _, p := range ps {
				if p < 0 || p >= md.Partitions(id) {
					t.Fatalf("member %s got invalid partition %d", ms.MemberID, p)
				}
				if owners[id][p] != "" {
					t.Fatalf("partition %x-%d assigned twice (%s, %s)", id, p, owners[id][p], ms.MemberID)
				}
				owners[id][p] = ms.MemberID
			}
		}
	}
	if len(a) != len(spec.Members) {
		t.Fatalf("assignment has %d members, spec %d", len(a), len(spec.Members))
	}
	for id := range subscribed {
		n := md.Partitions(id)
		if n > 0 && len(owners[id]) == 0 {
			t.Fatalf("topic %x not assigned", id)
		}
		for p, o := range owners[id] {
			if o == "" {
				t.Fatalf("partition %x-%d not assigned", id, p)
			}
		}
	}
	return owners
}

func counts(a AssignmentMap) map[string]int {
	c := map[string]int{}
	for m, tps := range a {
		c[m] = 0
		for _, ps := range tps {
			c[m] += len(ps)
		}
	}
	return c
}

func spread(a AssignmentMap) (lo, hi int) {
	first := true
	for _, c := range counts(a) {
		if first {
			lo, hi, first = c, c, false
		}
		lo, hi = min(lo, c), max(hi, c)
	}
	return
}

// withCurrent returns a copy of spec whose members' Current is a.
func withCurrent(spec *GroupSpec, a AssignmentMap) *GroupSpec {
	out := &GroupSpec{Members: slices.Clone(spec.Members)}
	for i := range out.Members {
		out.Members[i].Current = a[out.Members[i].MemberID]
	}
	return out
}

// moved counts partitions whose owner changed between two assignments,
// counting only partitions owned in both.
func moved(before, after AssignmentMap) int {
	own := map[TopicID]map[int32]string{}
	for m, tps := range before {
		for id, ps := range tps {
			if own[id] == nil {
				own[id] = map[int32]string{}
			}
			for _, p := range ps {
				own[id][p] = m
			}
		}
	}
	n := 0
	for m, tps := range after {
		for id, ps := range tps {
			for _, p := range ps {
				if o, ok := own[id][p]; ok && o != m {
					n++
				}
			}
		}
	}
	return n
}

func homogeneousSpec(members, topics int) *GroupSpec {
	spec := &GroupSpec{}
	subs := make([]TopicID, topics)
	for i := range subs {
		subs[i] = tid(i)
	}
	for i := range members {
		spec.Members = append(spec.Members, MemberSpec{MemberID: fmt.Sprintf("m%03d", i), Subscribed: subs})
	}
	return spec
}

func randomSpec(r *rand.Rand, hetero bool) (*GroupSpec, *meta) {
	nt := 1 + r.IntN(6)
	cs := make([]int32, nt)
	for i := range cs {
		cs[i] = int32(r.IntN(25))
	}
	md := topicsMeta(cs...)
	nm := 1 + r.IntN(12)
	spec := &GroupSpec{}
	for i := range nm {
		var subs []TopicID
		for t := range nt {
			if !hetero || r.IntN(2) == 0 {
				subs = append(subs, tid(t))
			}
		}
		if hetero && r.IntN(5) == 0 {
			subs = append(subs, tid(99)) // unknown topic
		}
		ms := MemberSpec{MemberID: fmt.Sprintf("member-%02d", i), Subscribed: subs}
		if r.IntN(3) == 0 {
			ms.InstanceID = fmt.Sprintf("inst-%02d", nm-i)
		}
		spec.Members = append(spec.Members, ms)
	}
	return spec, md
}
