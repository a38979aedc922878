package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clProduceN creates topic with the given partitions and produces n records "<prefix>-<i>" with
// franz-go, returning their values.
func clProduceN(t *testing.T, ctx context.Context, addr, topic string, partitions int32, n int, prefix string) map[string]bool {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	if partitions > 0 {
		if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	prod := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	want := map[string]bool{}
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("%s-%d", prefix, i)
		want[v] = true
		recs = append(recs, kgo.StringRecord(v))
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return want
}

// clCommittedSum is the sum of the group's committed offsets on topic (= records consumed when
// every partition starts at 0), or -1 on error.
func clCommittedSum(ctx context.Context, adm *kadm.Client, group, topic string) int64 {
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil || offs.Error() != nil {
		return -1
	}
	var total int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.At > 0 {
			total += o.At
		}
	})
	return total
}

// clWaitCommitted waits until the group's committed offsets on topic sum to want.
func clWaitCommitted(t *testing.T, ctx context.Context, addr, group, topic string, want int64) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	var got int64
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = clCommittedSum(ctx, adm, group, topic); got == want {
			return
		}
	}
	offs, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	t.Fatalf("group %s: committed offsets on %s sum to %d, want %d (last fetch error: %v)", group, topic, got, want, err)
}

// clCheckSeen fails unless seen holds every wanted value exactly once.
func clCheckSeen(t *testing.T, want map[string]bool, seen map[string]int) {
	t.Helper()
	if len(seen) != len(want) {
		t.Errorf("consumed %d distinct records, want %d", len(seen), len(want))
	}
	for v, c := range seen {
		if !want[v] {
			t.Errorf("unexpected record %q", v)
		}
		if c != 1 {
			t.Errorf("record %q consumed %d times", v, c)
		}
	}
}

// clWaitGroupEmpty waits until the group is Empty (its members left or expired).
func clWaitGroupEmpty(t *testing.T, ctx context.Context, addr, group string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	state := ""
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		gs, err := adm.DescribeGroups(ctx, group)
		if err == nil && gs.Error() == nil {
			if state = gs[group].State; state == "Empty" {
				return
			}
		}
	}
	t.Fatalf("group %s state %q, want Empty after the consumer closed", group, state)
}
