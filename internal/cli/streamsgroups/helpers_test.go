package streamsgroups

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/testutil"
	"github.com/muster-io/muster/streams/member"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 10, 0, time.UTC)

type result = clikittest.Result

func runCmd(args ...string) result {
	return clikittest.Run(newCommand(env{Now: func() time.Time { return testNow }, Loc: time.UTC}), args...)
}

var lines = clikittest.Lines

// fixture is a real broker with topics "words" (3 partitions) and "counts"
// (2 partitions); words p0 has 10 records, p1 5, counts p0 4.
type fixture struct {
	t    *testing.T
	addr string
	adm  *kadm.Client
}

func newFixture(t *testing.T, overrides ...string) *fixture {
	t.Helper()
	b := testutil.Start(t, append([]string{
		"group.streams.initial.rebalance.delay.ms=0",
		"group.streams.min.heartbeat.interval.ms=50",
		"group.streams.heartbeat.interval.ms=50",
	}, overrides...)...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	f := &fixture{t: t, addr: b.Addr(), adm: kadm.NewClient(cl)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, n := range map[string]int32{"words": 3, "counts": 2} {
		if _, err := f.adm.CreateTopic(ctx, n, 1, nil, name); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	var recs []*kgo.Record
	for p, n := range map[int32]int{0: 10, 1: 5} {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: "words", Partition: p, Value: []byte("w"), Timestamp: testNow.Add(time.Duration(i-20) * time.Second)})
		}
	}
	for i := 0; i < 4; i++ {
		recs = append(recs, &kgo.Record{Topic: "counts", Partition: 0, Value: []byte("c")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) run(args ...string) result {
	f.t.Helper()
	return runCmd(append([]string{"--bootstrap-server", f.addr, "--timeout", "5000"}, args...)...)
}

// join starts a streams member of group reading words (subtopology 0) and
// counts (subtopology 1), waits until it owns all 5 tasks and commits
// words-0 at 4 and counts-0 at 1.
func (f *fixture) join(group string) *member.Member {
	f.t.Helper()
	m, err := member.Start(member.Config{
		Brokers: []string{f.addr},
		GroupID: group,
		Topology: member.Topology{Subtopologies: []member.Subtopology{
			{ID: "0", SourceTopics: []string{"words"}},
			{ID: "1", SourceTopics: []string{"counts"}},
		}},
		RetryBackoff: 20 * time.Millisecond,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = m.Close(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	for m.Assignment().Active.Len() != 5 {
		if time.Now().After(deadline) {
			f.t.Fatalf("member of %s never got its tasks", group)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.CommitTaskOffsets(ctx, []member.Offset{
		{Topic: "words", Partition: 0, Offset: 4, LeaderEpoch: -1},
		{Topic: "counts", Partition: 0, Offset: 1, LeaderEpoch: -1},
	}); err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) leave(m *member.Member) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) committed(group string) map[string]map[int32]int64 {
	f.t.Helper()
	return clikittest.Committed(f.t, f.adm, group)
}
