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

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store/postgres"
	"github.com/muster-io/muster/internal/testutil"
)

// startNodes starts n in-process brokers of one cluster on url with topic "t" (4 partitions),
// which every node sees.
func startNodes(t *testing.T, url string, n int, extra ...string) []*testutil.Broker {
	t.Helper()
	var out []*testutil.Broker
	for i := 1; i <= n; i++ {
		b := testutil.Start(t, append([]string{"cluster.store.url=" + url, fmt.Sprintf("node.id=%d", i), "cluster.lease.ttl.ms=2000"}, extra...)...)
		out = append(out, b)
	}
	if _, err := out[0].Plane().CreateTopic("t", 4, nil); err != nil { // shared by every node
		t.Fatal(err)
	}
	for _, b := range out {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, ok := b.Plane().Topic("t"); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a node never learned topic t")
			}
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

	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bs)...))
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
	cl1, _ := kgo.NewClient(kgo.SeedBrokers(bs[0].Addr()))
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
	cl, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
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
		// FindCoordinator names the owner as soon as it holds the shard's lease; until the
		// shard has loaded, the owner answers COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			code := init(byID[owner])
			if code == 0 {
				break
			}
			if code != 14 || time.Now().After(deadline) {
				t.Fatalf("InitProducerID of %s at its coordinator %d: error %d", id, owner, code)
			}
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

// TestClusterStalePartitionBatchRefused: a partition's lease is taken over behind its leader's
// back (its epoch bumped in the lease table, as a takeover by another node does). The leader's
// next batch for the partition is refused by the database in the same statement that would
// write it: the produce answers NOT_LEADER_OR_FOLLOWER, the partition unloads and the fencing
// refusal is counted; the node then leads it again under a newer epoch and the log holds only
// the acknowledged records.
func TestClusterStalePartitionBatchRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 1)
	b := bs[0]
	n := &node{t: t, id: 1, addr: b.Addr()}
	info, _ := b.Plane().Topic("t")
	kind := postgres.PartitionLeaseKind(info.ID)
	produce := func(v string) (int16, int64) { return produceRaw(n, "t", 0, v) }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, _ := produce("first"); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("partition t/0 never led")
		}
	}
	db, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	acked := map[int64]string{0: "first"}
	for try := 0; ; try++ {
		before := metricSum(t, b.HTTPAddr(), "muster_cluster_fencing_refusals_total")
		if _, err := db.Exec(context.Background(), `UPDATE muster_leases SET epoch = epoch + 1, owner = 99, owner_inc = 1 WHERE kind = $1 AND shard = 0`, kind); err != nil {
			t.Fatal(err)
		}
		if code, off := produce(fmt.Sprintf("stale-%d", try)); code != 6 {
			t.Fatalf("produce at the stale leader: error %d at offset %d, want NOT_LEADER_OR_FOLLOWER (6)", code, off)
		}
		// The manager takes the partition back (node 99 is not a live node).
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			v := fmt.Sprintf("after-%d", try)
			if code, off := produce(v); code == 0 {
				acked[off] = v
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the partition was not taken back")
			}
		}
		if metricSum(t, b.HTTPAddr(), "muster_cluster_fencing_refusals_total") > before {
			break
		}
		if try == 10 {
			t.Fatal("no partition batch was refused by the database in 10 takeovers")
		}
	}
	cl, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"t": {0: kgo.NewOffset().AtStart()}}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := map[int64]string{}
	for len(got) < len(acked) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[r.Offset] = string(r.Value) })
	}
	if len(got) != len(acked) {
		t.Fatalf("log %v, acknowledged %v", got, acked)
	}
	for off, v := range acked {
		if got[off] != v {
			t.Fatalf("offset %d holds %q, %q was acknowledged", off, got[off], v)
		}
	}
}

// TestClusterNotLeader: a node that does not lead a partition answers Produce, Fetch,
// ListOffsets and DeleteRecords for it with NOT_LEADER_OR_FOLLOWER, and its Metadata names the
// leader (with the leader's epoch) at the leader's endpoint; the leader serves them all.
func TestClusterNotLeader(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 2)
	n1 := &node{t: t, id: 1, addr: bs[0].Addr()}
	n2 := &node{t: t, id: 2, addr: bs[1].Addr()}
	part := int32(-1)
	var led partitionLeader
	for deadline := time.Now().Add(20 * time.Second); part < 0; time.Sleep(20 * time.Millisecond) {
		for i, p := range leadersOf(n2, "t") {
			if p.code == 0 && p.leader == 1 && bs[0].Plane().Leading(mustTopicID(t, bs[0], "t"), int32(i)) {
				part, led = int32(i), p
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("node 1 leads no partition of t")
		}
	}
	if code, _ := produceRaw(n1, "t", part, "v"); code != 0 {
		t.Fatalf("produce at the leader: %d", code)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	mresp, err := n2.raw(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range mresp.(*kmsg.MetadataResponse).Brokers {
		if b.NodeID == 1 && fmt.Sprintf("%s:%d", b.Host, b.Port) != n1.addr {
			t.Errorf("node 1 listed at %s:%d, want %s", b.Host, b.Port, n1.addr)
		}
	}
	if l := leadersOf(n1, "t")[part]; l != led {
		t.Errorf("the leader describes partition %d as %+v, the other node as %+v", part, l, led)
	}

	code := func(n *node, req kmsg.Request) int16 {
		resp, err := n.raw(req)
		if err != nil {
			t.Fatal(err)
		}
		switch r := resp.(type) {
		case *kmsg.FetchResponse:
			return r.Topics[0].Partitions[0].ErrorCode
		case *kmsg.ListOffsetsResponse:
			return r.Topics[0].Partitions[0].ErrorCode
		case *kmsg.DeleteRecordsResponse:
			return r.Topics[0].Partitions[0].ErrorCode
		}
		t.Fatalf("unexpected %T", resp)
		return 0
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxBytes = 11, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = part, 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version, lo.ReplicaID = 7, -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = part, -1, -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Version, dr.TimeoutMillis = 2, 5000
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "t"
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = part, 1
	dt.Partitions = append(dt.Partitions, dp)
	dr.Topics = append(dr.Topics, dt)

	if c, _ := produceRaw(n2, "t", part, "v"); c != 6 {
		t.Errorf("produce at the other node: error %d, want NOT_LEADER_OR_FOLLOWER (6)", c)
	}
	for _, req := range []kmsg.Request{fetch, lo, dr} {
		if c := code(n2, req); c != 6 {
			t.Errorf("%T at the other node: error %d, want NOT_LEADER_OR_FOLLOWER (6)", req, c)
		}
		if c := code(n1, req); c != 0 {
			t.Errorf("%T at the leader: error %d", req, c)
		}
	}
	// A client naming an older leader epoch is fenced; a newer one is unknown to the leader.
	lp.CurrentLeaderEpoch = led.epoch - 1
	lo.Topics[0].Partitions[0] = lp
	if c := code(n1, lo); c != 74 {
		t.Errorf("ListOffsets with an older leader epoch: error %d, want FENCED_LEADER_EPOCH (74)", c)
	}
	lp.CurrentLeaderEpoch = led.epoch + 1
	lo.Topics[0].Partitions[0] = lp
	if c := code(n1, lo); c != 75 {
		t.Errorf("ListOffsets with a newer leader epoch: error %d, want UNKNOWN_LEADER_EPOCH (75)", c)
	}
}

func mustTopicID(t *testing.T, b *testutil.Broker, topic string) [16]byte {
	info, ok := b.Plane().Topic(topic)
	if !ok {
		t.Fatalf("no topic %s", topic)
	}
	return info.ID
}

// TestClusterLogStartMoves: DeleteRecords at a partition's leader moves its log start in the
// shared store; after the leader drains, the new leader serves the same log start and end and
// continues at the next offset.
func TestClusterLogStartMoves(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 2)
	n1 := &node{t: t, id: 1, addr: bs[0].Addr()}
	n2 := &node{t: t, id: 2, addr: bs[1].Addr()}
	id := mustTopicID(t, bs[0], "t")
	part := int32(-1)
	for deadline := time.Now().Add(20 * time.Second); part < 0; time.Sleep(20 * time.Millisecond) {
		for i := int32(0); i < 4; i++ {
			if bs[0].Plane().Leading(id, i) {
				part = i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("node 1 leads no partition of t")
		}
	}
	for i := 0; i < 10; i++ {
		if code, off := produceRaw(n1, "t", part, fmt.Sprint(i)); code != 0 || off != int64(i) {
			t.Fatalf("produce %d: error %d at offset %d", i, code, off)
		}
	}
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Version, dr.TimeoutMillis = 2, 5000
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "t"
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = part, 5
	dt.Partitions = append(dt.Partitions, dp)
	dr.Topics = append(dr.Topics, dt)
	resp, err := n1.raw(dr)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LowWatermark != 5 {
		t.Fatalf("DeleteRecords: error %d, low watermark %d", p.ErrorCode, p.LowWatermark)
	}
	bs[0].Close() // drains: node 2 leads every partition
	offsets := func(ts int64) (int16, int64) {
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.Version, lo.ReplicaID = 7, -1
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = "t"
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = part, ts, -1
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		r, err := n2.raw(lo)
		if err != nil {
			t.Fatal(err)
		}
		p := r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		return p.ErrorCode, p.Offset
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, _ := offsets(-2); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node 2 never led the partition")
		}
	}
	if code, start := offsets(-2); code != 0 || start != 5 {
		t.Fatalf("log start at the new leader: %d (error %d), want 5", start, code)
	}
	if code, end := offsets(-1); code != 0 || end != 10 {
		t.Fatalf("log end at the new leader: %d (error %d), want 10", end, code)
	}
	if code, off := produceRaw(n2, "t", part, "next"); code != 0 || off != 10 {
		t.Fatalf("produce at the new leader: error %d at offset %d, want 10", code, off)
	}
}
