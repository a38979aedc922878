package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/testutil"
)

// startNodes starts n in-process brokers of one cluster on url with topic "t" (4 partitions)
// on each node's data plane.
func startNodes(t *testing.T, url string, n int, extra ...string) []*testutil.Broker {
	t.Helper()
	var out []*testutil.Broker
	for i := 1; i <= n; i++ {
		b := testutil.Start(t, append([]string{"cluster.store.url=" + url, fmt.Sprintf("node.id=%d", i), "cluster.lease.ttl.ms=2000"}, extra...)...)
		out = append(out, b)
	}
	for _, b := range out {
		if _, err := b.Plane().CreateTopic("t", 4, nil); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func seeds(bs []*testutil.Broker) []string {
	var s []string
	for _, b := range bs {
		s = append(s, b.Addr())
	}
	return s
}

// waitBalanced waits until every node serves shards/len(bs) shards (rounded) and all are served.
func waitBalanced(t *testing.T, bs []*testutil.Broker) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		total, min, max := 0, 1<<30, 0
		for _, b := range bs {
			n := 0
			for _, s := range b.Runtime().ShardStatus() {
				if s == "active" {
					n++
				}
			}
			total += n
			if n < min {
				min = n
			}
			if n > max {
				max = n
			}
		}
		if total == int(bs[0].Runtime().Shards()) && max-min <= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not balanced: total %d, min %d, max %d", total, min, max)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterCoordinatorInProcess: two nodes split the group coordinator's shards; clients
// find each group's coordinator on either node, Metadata lists both nodes, commits made
// through one node are read through the other after the first drains (SIGTERM's path) and an
// ACL created on one node applies on the other.
func TestClusterCoordinatorInProcess(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 2)
	waitBalanced(t, bs)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Topic IDs are per node until the data plane moves to the shared store: no OffsetCommit
	// v10 (topic IDs) here.
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bs)...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) != 2 {
		t.Fatalf("metadata brokers %+v, %v", md.Brokers, err)
	}
	coordinators := map[int32]int{}
	const groups = 24
	for g := 0; g < groups; g++ {
		group := fmt.Sprintf("g%d", g)
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = group
		resp, err := fc.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("find coordinator %s: %v %v", group, err, resp)
		}
		coordinators[resp.NodeID]++
		// A node that does not serve the group's shard refuses its requests.
		other := bs[0]
		if resp.NodeID == 1 {
			other = bs[1]
		}
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Group, oc.Generation, oc.Version = group, -1, 7
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic = "t"
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Offset = 1
		ot.Partitions = append(ot.Partitions, op)
		oc.Topics = append(oc.Topics, ot)
		direct, err := testutil.DialRaw(other.Addr())
		if err != nil {
			t.Fatal(err)
		}
		r, err := direct.Do(oc)
		direct.Close()
		if err != nil {
			t.Fatal(err)
		}
		if code := r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode; code != 16 { // NOT_COORDINATOR
			t.Fatalf("commit of %s on the node that does not own it: error %d", group, code)
		}
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "t", Partition: int32(g % 4), At: int64(100 + g)})
		if err := adm.CommitAllOffsets(ctx, group, offs); err != nil {
			t.Fatalf("commit %s: %v", group, err)
		}
	}
	if len(coordinators) != 2 {
		t.Fatalf("coordinators: %v (want both nodes)", coordinators)
	}

	// Node 2 stops gracefully: node 1 takes its shards, every commit is there.
	start := time.Now()
	bs[1].Close()
	waitBalanced(t, bs[:1])
	t.Logf("drain hand-over: %v", time.Since(start))
	cl1, _ := kgo.NewClient(kgo.SeedBrokers(bs[0].Addr()), kgo.MaxVersions(kversion.V3_9_0()))
	defer cl1.Close()
	adm1 := kadm.NewClient(cl1)
	for g := 0; g < groups; g++ {
		group := fmt.Sprintf("g%d", g)
		got, err := adm1.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatalf("fetch %s: %v", group, err)
		}
		if o, ok := got.Lookup("t", int32(g%4)); !ok || o.At != int64(100+g) {
			t.Fatalf("group %s: offset %+v after the hand-over", group, o)
		}
	}
}
