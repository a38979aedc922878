package assign

import (
	"fmt"
	"testing"
)

// benchGroup mirrors Kafka's jmh ServerSideAssignorBenchmark setup: topics
// with members*ratio/topics partitions each; homogeneous members subscribe to
// all topics, heterogeneous members are split into 5 buckets each subscribing
// to its fifth of the topics; with racks, member i is on rack i%3. Partition p
// has replicas on racks p%3 and (p+1)%3 (Kafka's benchmark puts every
// partition on all three racks, which makes rack awareness a no-op; two of
// three makes it do real work).
func benchGroup(members, topics, ratio int, hetero, racks bool) (*GroupSpec, *meta) {
	parts := int32(members * ratio / topics)
	cs := make([]int32, topics)
	for i := range cs {
		cs[i] = parts
	}
	md := topicsMeta(cs...)
	if racks {
		names := []string{"rack0", "rack1", "rack2"}
		pr := make([][]string, 3)
		for i := range pr {
			pr[i] = []string{names[i], names[(i+1)%3]}
		}
		md.racks = func(_ TopicID, p int32) []string { return pr[p%3] }
	}
	all := make([]TopicID, topics)
	for i := range all {
		all[i] = tid(i)
	}
	const buckets = 5
	bucketTopics := (topics + buckets - 1) / buckets
	bucketMembers := (members + buckets - 1) / buckets
	spec := &GroupSpec{Members: make([]MemberSpec, members)}
	for i := range spec.Members {
		ms := MemberSpec{MemberID: fmt.Sprintf("member%d", i), Subscribed: all}
		if hetero {
			bk := i / bucketMembers
			ms.Subscribed = all[bk*bucketTopics : min((bk+1)*bucketTopics, topics)]
		}
		if racks {
			ms.RackID = fmt.Sprintf("rack%d", i%3)
		}
		spec.Members[i] = ms
	}
	return spec, md
}

func runAssign(b *testing.B, a Assignor, spec *GroupSpec, md *meta) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Assign(spec, md); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerSideAssignor is the full-assignment grid (no current
// assignment), partitionsToMemberRatio 50 (Kafka's largest).
func BenchmarkServerSideAssignor(b *testing.B) {
	for _, a := range assignors {
		for _, sub := range []string{"homogeneous", "heterogeneous"} {
			for _, members := range []int{100, 1000, 10000} {
				for _, topics := range []int{10, 100, 1000} {
					for _, racks := range []bool{false, true} {
						name := fmt.Sprintf("%s/%s/members=%d/topics=%d/partitions=%d/rack=%v",
							a.Name(), sub, members, topics, members*50, racks)
						b.Run(name, func(b *testing.B) {
							spec, md := benchGroup(members, topics, 50, sub == "heterogeneous", racks)
							runAssign(b, a, spec, md)
						})
					}
				}
			}
		}
	}
}

// BenchmarkServerSideAssignorIncremental mirrors Kafka's INCREMENTAL mode: a
// stable group of members-1 members, then one member joins.
func BenchmarkServerSideAssignorIncremental(b *testing.B) {
	for _, a := range assignors {
		for _, sub := range []string{"homogeneous", "heterogeneous"} {
			for _, members := range []int{1000, 10000} {
				for _, racks := range []bool{false, true} {
					topics := 10
					if sub == "heterogeneous" {
						topics = 1000
					}
					name := fmt.Sprintf("%s/%s/members=%d/topics=%d/partitions=%d/rack=%v",
						a.Name(), sub, members, topics, members*50, racks)
					b.Run(name, func(b *testing.B) {
						spec, md := benchGroup(members, topics, 50, sub == "heterogeneous", racks)
						joiner := spec.Members[members-1]
						spec.Members = spec.Members[:members-1]
						first, err := assignMap(a, spec, md)
						if err != nil {
							b.Fatal(err)
						}
						spec = withCurrent(spec, first)
						joiner.MemberID = "newMember"
						spec.Members = append(spec.Members, joiner)
						runAssign(b, a, spec, md)
					})
				}
			}
		}
	}
}

// BenchmarkAssignLinear shows how the cost grows with group size: members
// double, partitions double (50 per member, 10 topics).
func BenchmarkAssignLinear(b *testing.B) {
	for _, a := range assignors {
		for _, members := range []int{1000, 2000, 4000, 8000, 16000} {
			b.Run(fmt.Sprintf("%s/members=%d/partitions=%d", a.Name(), members, members*50), func(b *testing.B) {
				spec, md := benchGroup(members, 10, 50, false, false)
				runAssign(b, a, spec, md)
			})
		}
	}
}

// BenchmarkAssignGoal runs the two goal points of docs/bench-assign.md
// (uniform, no racks): "flat" is Assign alone (the flat Assignment), "maps"
// adds Map(), which is the nested-map output Assign returned before session 2.
func BenchmarkAssignGoal(b *testing.B) {
	for _, g := range []struct {
		name            string
		members, topics int
		heterogeneous   bool
	}{
		{"homogeneous/members=10000/topics=10/partitions=500000", 10000, 10, false},
		{"heterogeneous/members=1000/topics=1000/partitions=50000", 1000, 1000, true},
	} {
		spec, md := benchGroup(g.members, g.topics, 50, g.heterogeneous, false)
		b.Run(g.name+"/flat", func(b *testing.B) { runAssign(b, Uniform(), spec, md) })
		b.Run(g.name+"/maps", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := Uniform().Assign(spec, md)
				if err != nil {
					b.Fatal(err)
				}
				_ = out.Map()
			}
		})
	}
}
