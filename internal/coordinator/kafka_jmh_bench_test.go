package coordinator

import (
	"fmt"
	"testing"
)

// Benchmarks named and gridded after Kafka's jmh-benchmarks (org.apache.kafka.jmh.assignor), so
// numbers can be lined up with Kafka's. See docs/benchmarks.md.

// BenchmarkTargetAssignmentBuilder mirrors Kafka's TargetAssignmentBuilderBenchmark: a
// homogeneous group of memberCount-1 members subscribed to topicCount topics with
// memberCount×partitionsToMemberRatio partitions, an existing target assignment, and one new
// member; each op computes the group's target assignment with the uniform assignor and writes
// the records of the members whose target changed (ConsumerGroup.computeTargetAssignment).
// Unlike Kafka's builder, whose inputs stay fixed between calls, the first op's records are
// replayed, so later ops write only the assignment metadata record.
func BenchmarkTargetAssignmentBuilder(b *testing.B) {
	for _, members := range []int{100, 500, 1000, 5000, 10000} {
		for _, ratio := range []int{5, 10, 50} {
			for _, topics := range []int{10, 100, 1000} {
				parts := members * ratio / topics
				if parts == 0 {
					continue
				}
				b.Run(fmt.Sprintf("memberCount=%d/partitionsToMemberRatio=%d/topicCount=%d", members, ratio, topics), func(b *testing.B) {
					h := newCGHarness(b, "group.consumer.assignment.interval.ms=15000")
					names := make([]string, topics)
					for t := range names {
						names[t] = fmt.Sprintf("topic-%d", t)
						h.topics.Add(names[t], int32(parts))
					}
					for i := 0; i < members-1; i++ {
						h.joinClient("benchmark-group", fmt.Sprintf("member%d", i), names...)
					}
					g := h.group("benchmark-group")
					h.st.DiscardEffects()
					if err := g.computeTargetAssignment(h.st, g.epoch); err != nil {
						b.Fatal(err)
					}
					h.joinClient("benchmark-group", "newMember", names...)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						h.st.DiscardEffects()
						if err := g.computeTargetAssignment(h.st, g.epoch); err != nil {
							b.Fatal(err)
						}
					}
					h.st.DiscardEffects()
				})
			}
		}
	}
}

// BenchmarkCurrentAssignmentBuilder mirrors Kafka's CurrentAssignmentBuilderBenchmark: one
// Stable member at epoch 10 owning every partition of topicCount topics × partitionsPerTopic,
// reconciled (ConsumerGroup.reconcile) against a target of the same partitions at the same epoch
// (stableToStableWithNoChange) and at the next epoch (stableToStableWithNewTargetAssignment).
func BenchmarkCurrentAssignmentBuilder(b *testing.B) {
	for _, perTopic := range []int{5, 50} {
		for _, topics := range []int{10, 100, 1000} {
			h := newCGHarness(b)
			g := newConsumerGroup("g")
			target := topicPartitions{}
			for t := 0; t < topics; t++ {
				id := h.topics.Add(fmt.Sprintf("topic-%d", t), int32(perTopic))
				ps := make([]int32, perTopic)
				for p := range ps {
					ps[p] = int32(p)
				}
				target[id] = ps
			}
			cur := &consumerCurrent{epoch: 10, prevEpoch: 10, state: MemberStable, assigned: target, epochs: assignmentEpochsAt(target, 10)}
			name := fmt.Sprintf("partitionsPerTopic=%d/topicCount=%d", perTopic, topics)
			b.Run(name+"/stableToStableWithNoChange", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					g.reconcile("member", cur, 10, target, nil)
				}
			})
			b.Run(name+"/stableToStableWithNewTargetAssignment", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					g.reconcile("member", cur, 11, target, nil)
				}
			})
		}
	}
}
