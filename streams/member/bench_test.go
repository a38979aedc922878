package member_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
	"github.com/muster-io/muster/streams/member"
)

// BenchmarkTwoMembersConverge measures, per iteration, a fresh streams
// group on an in-process broker: two members join a 10-task topology,
// converge to a split, and both leave.
func BenchmarkTwoMembersConverge(b *testing.B) {
	br := testutil.Start(b, brokerOverrides...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(br.Addr()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	for name, n := range map[string]int32{"words": 6, "counts": 4} {
		if _, err := adm.CreateTopic(ctx, n, 1, nil, name); err != nil {
			b.Fatal(err)
		}
	}
	all := allTasks()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		group := fmt.Sprintf("bench-%d", i)
		var ms []*member.Member
		for j := 0; j < 2; j++ {
			m, err := member.Start(member.Config{Brokers: []string{br.Addr()}, GroupID: group, Topology: twoSubtopologies(),
				RetryBackoff: 10 * time.Millisecond, Logger: testLogger()})
			if err != nil {
				b.Fatal(err)
			}
			ms = append(ms, m)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !partition(all, ms...) {
			if time.Now().After(deadline) {
				b.Fatal("no convergence")
			}
			time.Sleep(time.Millisecond)
		}
		for _, m := range ms {
			if err := m.Close(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkTaskSetOps measures set algebra on 1000-task sets (the
// reconciliation step of every assignment change).
func BenchmarkTaskSetOps(b *testing.B) {
	var a, c []member.TaskID
	for s := 0; s < 10; s++ {
		for p := int32(0); p < 100; p++ {
			id := member.TaskID{Subtopology: fmt.Sprint(s), Partition: p}
			a = append(a, id)
			if p%2 == 0 {
				c = append(c, id)
			}
		}
	}
	x, y := member.NewTaskSet(a...), member.NewTaskSet(c...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = x.Minus(y)
		_ = y.Union(x)
	}
}
