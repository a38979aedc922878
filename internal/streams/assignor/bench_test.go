package assignor

import (
	"fmt"
	"slices"
	"sort"
	"syscall"
	"testing"
)

// The grid mirrors Kafka's jmh StreamsStickyAssignorBenchmark: member
// count, partitions per topic, subtopology count (every second one
// stateful, one topic each), standby replicas, members per process,
// FULL (fresh group) or INCREMENTAL (one member joins a stable group of
// members-1), and NONE or OWNED_AND_DORMANT reported state (here: lags;
// the owner and one dormant replica report each stateful task).

type benchParams struct {
	members, partitions, subtopologies, standby, perProcess int
	incremental, offsets                                    bool
}

func (p benchParams) name() string {
	typ, off := "FULL", "NONE"
	if p.incremental {
		typ = "INCREMENTAL"
	}
	if p.offsets {
		off = "OWNED_AND_DORMANT"
	}
	return fmt.Sprintf("members=%d/partitions=%d/subtopologies=%d/standby=%d/membersPerProcess=%d/type=%s/offsets=%s",
		p.members, p.partitions, p.subtopologies, p.standby, p.perProcess, typ, off)
}

func benchSpec(tb testing.TB, p benchParams) *GroupSpec {
	spec := &GroupSpec{NumStandbyReplicas: p.standby, NumWarmupReplicas: 2, AcceptableRecoveryLag: 10000}
	for i := 0; i < p.subtopologies; i++ {
		spec.Subtopologies = append(spec.Subtopologies, Subtopology{
			ID: fmt.Sprintf("topic-%d_subtopology", i), NumTasks: int32(p.partitions), Stateful: i%2 == 0,
		})
	}
	n := p.members
	if p.incremental {
		n--
	}
	for i := 0; i < n; i++ {
		spec.Members = append(spec.Members, MemberSpec{
			MemberID:  fmt.Sprintf("member-%d", i),
			ProcessID: fmt.Sprintf("process-%d", i/p.perProcess),
		})
	}
	if p.incremental {
		spec = withPrevious(spec, mustAssign(tb, spec))
		for i := range spec.Members {
			spec.Members[i].Warmup = nil
		}
		nm := MemberSpec{MemberID: "newMember", ProcessID: "process-newMember"}
		if p.offsets {
			nm.TaskLags = []TaskLag{}
		}
		spec.Members = append(spec.Members, nm)
	}
	if p.offsets {
		ids := make([]int, 0, len(spec.Members))
		for i, m := range spec.Members {
			if m.MemberID != "newMember" {
				ids = append(ids, i)
			}
		}
		sort.Slice(ids, func(a, b int) bool { return spec.Members[ids[a]].MemberID < spec.Members[ids[b]].MemberID })
		k := 0
		report := func(m *MemberSpec, sub string, part int32, lag int64) {
			m.TaskLags = append(m.TaskLags, TaskLag{sub, part, lag})
		}
		for _, s := range spec.Subtopologies {
			if !s.Stateful {
				continue
			}
			for part := int32(0); part < s.NumTasks; part++ {
				owner := &spec.Members[ids[k%len(ids)]]
				dormant := &spec.Members[ids[(k+len(ids)/2+1)%len(ids)]]
				if p.incremental {
					// The owner is the previous active one.
					for i := range spec.Members {
						if holds(spec.Members[i].Active, s.ID, part) {
							owner = &spec.Members[i]
							break
						}
					}
				}
				report(owner, s.ID, part, 0)
				if dormant != owner {
					report(dormant, s.ID, part, 50000)
				}
				k++
			}
		}
	}
	return spec
}

// holds reports whether ts lists partition part of subtopology sub.
func holds(ts []SubtopologyTasks, sub string, part int32) bool {
	for _, e := range ts {
		if e.Subtopology == sub && slices.Contains(e.Partitions, part) {
			return true
		}
	}
	return false
}

// runAssignBench also reports cpu-ns/op (process user+system CPU time per
// assignment, GC included): on a shared machine it is steadier than ns/op.
func runAssignBench(b *testing.B, spec *GroupSpec) {
	a := Sticky()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		if _, err := a.Assign(spec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkStreamsStickyAssignor(b *testing.B) {
	for _, members := range []int{100, 1000} {
		for _, partitions := range []int{10, 100} {
			for _, subtopologies := range []int{10, 100} {
				for _, standby := range []int{0, 1} {
					for _, perProcess := range []int{1, 50} {
						for _, incremental := range []bool{false, true} {
							for _, offsets := range []bool{false, true} {
								p := benchParams{members, partitions, subtopologies, standby, perProcess, incremental, offsets}
								b.Run(p.name(), func(b *testing.B) {
									runAssignBench(b, benchSpec(b, p))
								})
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkStreamsStickyAssignorGrowth scales members and tasks together
// (10 tasks per member, 100 subtopologies, one standby, one member per
// process, one member joining) to show the cost grows linearly.
func BenchmarkStreamsStickyAssignorGrowth(b *testing.B) {
	for _, members := range []int{250, 500, 1000, 2000} {
		p := benchParams{members: members, partitions: members / 10, subtopologies: 100, standby: 1, perProcess: 1, incremental: true}
		b.Run(fmt.Sprintf("members=%d/tasks=%d", members, members*10), func(b *testing.B) {
			runAssignBench(b, benchSpec(b, p))
		})
	}
}

// BenchmarkStreamsSpecIteration is a calibration floor: it only walks every
// entry of the GroupSpec the largest INCREMENTAL grid points hand to the
// assignor, which any assignor taking this input must do at least once.
func BenchmarkStreamsSpecIteration(b *testing.B) {
	for _, offsets := range []bool{false, true} {
		p := benchParams{1000, 100, 100, 1, 1, true, offsets}
		spec := benchSpec(b, p)
		b.Run(p.name(), func(b *testing.B) {
			n := 0
			start := cpuTime()
			for b.Loop() {
				for i := range spec.Members {
					m := &spec.Members[i]
					for _, ts := range [3][]SubtopologyTasks{m.Active, m.Standby, m.Warmup} {
						for _, e := range ts {
							n += len(e.Subtopology) + len(e.Partitions)
						}
					}
					for _, l := range m.TaskLags {
						n += len(l.Subtopology)
					}
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
			if n < 0 {
				b.Fatal(n)
			}
		})
	}
}
