package consumergroups

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/testutil"
)

// fixed clock and zone for --by-duration / --to-datetime.
var testNow = time.Date(2025, 6, 1, 12, 0, 10, 0, time.UTC)

// baseTS is the timestamp of the first produced record; record i of a
// partition has timestamp baseTS + i seconds.
var baseTS = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t    testing.TB
	c    *kfake.Cluster
	mb   *testutil.Broker // set instead of c by newMusterFixture
	addr string
}

// newFixture starts a one-broker kfake cluster with topics test (3
// partitions) and foo (2 partitions) and produces test p0:10 p1:5 p2:0,
// foo p0:3 p1:3 records.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	if onMuster {
		return newMusterFixture(t)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "test"), kfake.SeedTopics(2, "foo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fixture{t: t, c: c, addr: c.ListenAddrs()[0]}
	f.produce("test", map[int32]int{0: 10, 1: 5})
	f.produce("foo", map[int32]int{0: 3, 1: 3})
	return f
}

func (f *fixture) client(opts ...kgo.Opt) *kgo.Client {
	f.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(f.addr)}, opts...)...)
	if err != nil {
		f.t.Fatal(err)
	}
	return cl
}

func (f *fixture) produce(topic string, counts map[int32]int) {
	f.t.Helper()
	// kgo's default compression: muster finds offsets for timestamps inside
	// compressed batches, as Kafka does.
	cl := f.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for p, n := range counts {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v"), Timestamp: baseTS.Add(time.Duration(i) * time.Second)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
}

// join starts a classic (or KIP-848 with serverSide) group member consuming
// topics and waits until it has an assignment. Auto-commit is off.
func (f *fixture) join(group string, serverSide bool, topics ...string) *kgo.Client {
	f.t.Helper()
	assigned := make(chan struct{}, 1)
	opts := []kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.DisableAutoCommit(),
		kgo.ClientID("client-" + group),
		// A short long-poll: muster's listener waits for in-flight fetches
		// when it shuts down.
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}),
	}
	if serverSide {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	cl := f.client(opts...)
	go func() {
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
		}
	}()
	select {
	case <-assigned:
	case <-time.After(15 * time.Second):
		cl.Close()
		f.t.Fatalf("group %s: no assignment", group)
	}
	return cl
}

// commitGroup creates a classic group with a kgo consumer, commits offsets
// through it and closes it so the group is Empty.
func (f *fixture) commitGroup(group string, offsets map[string]map[int32]int64) {
	f.t.Helper()
	var topics []string
	for t := range offsets {
		topics = append(topics, t)
	}
	cl := f.join(group, false, topics...)
	defer cl.Close()
	eo := map[string]map[int32]kgo.EpochOffset{}
	for t, ps := range offsets {
		eo[t] = map[int32]kgo.EpochOffset{}
		for p, o := range ps {
			eo[t][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var cerr error
	cl.CommitOffsetsSync(ctx, eo, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					cerr = errors.New("commit failed")
				}
			}
		}
	})
	if cerr != nil {
		f.t.Fatalf("commit %s: %v", group, cerr)
	}
	cl.Close()
	f.waitState(group, "Empty")
}

func (f *fixture) waitState(group, state string) {
	f.t.Helper()
	adm := kadm.NewClient(f.client())
	defer adm.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l, err := adm.ListGroups(context.Background())
		if err == nil && l[group].State == state {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatalf("group %s never reached %s", group, state)
}

// committed reads a group's committed offsets.
func (f *fixture) committed(group string) map[string]map[int32]int64 {
	f.t.Helper()
	adm := kadm.NewClient(f.client())
	defer adm.Close()
	return clikittest.Committed(f.t, adm, group)
}

type result = clikittest.Result

// run executes the command in-process; the bootstrap server is prepended
// unless noBootstrap.
func (f *fixture) run(args ...string) result {
	f.t.Helper()
	return runCmd(append([]string{"--bootstrap-server", f.addr}, args...)...)
}

func runCmd(args ...string) result {
	return clikittest.Run(newCommand(env{Now: func() time.Time { return testNow }, Loc: time.UTC}), args...)
}

var lines = clikittest.Lines
