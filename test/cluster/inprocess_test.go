package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/coordinator"
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

// TestClusterStaleBatchRefused: a shard's lease is taken over behind the node's back (its epoch
// bumped in the lease table, as a takeover by another node does). The node's next batch for that
// shard is refused by the store in the same transaction that would write it (ErrFenced): the
// commit answers NOT_COORDINATOR, the shard unloads and the fencing refusal is counted. Its
// lease manager then takes the shard back with a newer epoch.
func TestClusterStaleBatchRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 1)
	waitBalanced(t, bs)
	b := bs[0]
	commit := func(off int64) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 7, "stale", -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		c, err := testutil.DialRaw(b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(1); code != 0 {
		t.Fatalf("commit: %d", code)
	}
	shard := coordinatorShard(b, "stale")
	db, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	// The lease manager may see the takeover in its own renewal before the commit reaches the
	// store (then the shard unloads without a refused batch): try again until a batch was
	// refused by the store itself.
	for try := 0; ; try++ {
		before := metricSum(t, b.HTTPAddr(), "muster_cluster_fencing_refusals_total")
		if _, err := db.Exec(context.Background(), `UPDATE muster_leases SET epoch = epoch + 1, owner = 99, owner_inc = 1 WHERE kind = 'group' AND shard = $1`, shard); err != nil {
			t.Fatal(err)
		}
		if code := commit(2); code != 16 {
			t.Fatalf("commit by the stale owner: error %d, want NOT_COORDINATOR (16)", code)
		}
		// The manager takes the shard back (node 99 is not a live node).
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if code := commit(3); code == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the shard was not taken back")
			}
		}
		if metricSum(t, b.HTTPAddr(), "muster_cluster_fencing_refusals_total") > before {
			break
		}
		if try == 10 {
			t.Fatal("no batch was refused by the store in 10 takeovers")
		}
	}
	cl, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.MaxVersions(kversion.V3_9_0()))
	defer cl.Close()
	got, err := kadm.NewClient(cl).FetchOffsets(context.Background(), "stale")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := got.Lookup("t", 0); o.At != 3 {
		t.Fatalf("offset %d, want 3", o.At)
	}
}

// coordinatorShard is the coordinator shard of group on b.
func coordinatorShard(b *testutil.Broker, group string) int32 {
	return coordinator.ShardFor(group, b.Runtime().Shards())
}

// metricSum sums a metric family's samples on a broker's /metrics.
func metricSum(t *testing.T, httpAddr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// TestClusterTransactionCoordinator: the transaction coordinator's shards are leased too:
// FindCoordinator for transactional ids names both nodes, InitProducerID succeeds at the named
// node and answers NOT_COORDINATOR at the other.
func TestClusterTransactionCoordinator(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 2)
	waitBalanced(t, bs)
	byID := map[int32]*testutil.Broker{1: bs[0], 2: bs[1]}
	do := func(b *testutil.Broker, req kmsg.Request) kmsg.Response {
		t.Helper()
		c, err := testutil.DialRaw(b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	seen := map[int32]bool{}
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("tx-%d", i)
		var owner int32
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.Version, fc.CoordinatorType, fc.CoordinatorKey = 3, 1, id
			r := do(bs[0], fc).(*kmsg.FindCoordinatorResponse)
			if r.ErrorCode == 0 {
				owner = r.NodeID
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("find coordinator of %s: error %d", id, r.ErrorCode)
			}
		}
		seen[owner] = true
		init := func(b *testutil.Broker) int16 {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, &id, 60000
			req.ProducerID, req.ProducerEpoch = -1, -1
			return do(b, req).(*kmsg.InitProducerIDResponse).ErrorCode
		}
		if code := init(byID[owner]); code != 0 {
			t.Fatalf("InitProducerID of %s at its coordinator %d: error %d", id, owner, code)
		}
		if code := init(byID[3-owner]); code != 16 {
			t.Fatalf("InitProducerID of %s at node %d: error %d, want NOT_COORDINATOR", id, 3-owner, code)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("transaction coordinators: %v", seen)
	}
}

// TestClusterProducerIDs: idempotent producers get producer ids from blocks of a counter the
// nodes share, so two nodes never hand out the same id.
func TestClusterProducerIDs(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 2)
	seen := map[int64]int{}
	for i := 0; i < 20; i++ {
		for n, b := range bs {
			c, err := testutil.DialRaw(b.Addr())
			if err != nil {
				t.Fatal(err)
			}
			req := kmsg.NewPtrInitProducerIDRequest()
			req.Version, req.ProducerID, req.ProducerEpoch = 4, -1, -1
			resp, err := c.Do(req)
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			r := resp.(*kmsg.InitProducerIDResponse)
			if r.ErrorCode != 0 {
				t.Fatalf("InitProducerID at node %d: error %d", n+1, r.ErrorCode)
			}
			if prev, dup := seen[r.ProducerID]; dup {
				t.Fatalf("producer id %d handed out by node %d and node %d", r.ProducerID, prev, n+1)
			}
			seen[r.ProducerID] = n + 1
		}
	}
}
