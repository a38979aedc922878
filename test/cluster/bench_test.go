package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
	"github.com/muster-io/muster/internal/testutil"
)

// The benchmarks of cluster mode measure, each once per run (they ignore b.N):
//
//	go test ./test/cluster -run '^$' -bench . -benchtime 1x
//
// BenchmarkClusterCommits: durable OffsetCommit throughput and latency at 64 connections, one
// group and one partition per commit, each connection on its group's coordinator: the embedded
// Pebble store (one node) against PostgreSQL with one and three nodes. MUSTER_BENCH_BIN runs
// another muster build (a before/after comparison).
//
// BenchmarkClusterFailover: time from SIGKILL of a group's coordinator node to the first
// acknowledged commit of that group on another node, at the default lease TTL (5 s).
//
// BenchmarkShardLoad1M: time to load one coordinator shard holding 1M committed offsets.

const benchConns = 64

// benchNodes starts n nodes (url "" = one node on the embedded store) with 50 coordinator
// shards and topic t of 64 partitions on every node.
func benchNodes(b *testing.B, url string, n int, extra ...string) []*node {
	var out []*node
	for id := int32(1); id <= int32(n); id++ {
		nd := newNode(b, url, id, append([]string{"offsets.topic.num.partitions=50"}, extra...)...)
		nd.start()
		nd.createTopic("t", 64)
		out = append(out, nd)
	}
	if url != "" {
		// Wait for the shards to spread: every node holds its share.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if balancedNodes(out) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("shards did not spread over the nodes")
			}
		}
	}
	return out
}

// balancedNodes: every node is ready and coordinates at least one of 200 probe groups.
func balancedNodes(ns []*node) bool {
	seen := map[int32]bool{}
	for i := 0; i < 200; i++ {
		c, code := ns[0].coordinatorOf(context.Background(), "probe-"+strconv.Itoa(i))
		if code != 0 {
			return false
		}
		seen[c] = true
	}
	return len(seen) == len(ns)
}

// routed is a raw connection to a group's coordinator, re-routed after an error.
type routed struct {
	nodes []*node
	group string
	c     *testutil.RawConn
	addr  string
}

func (r *routed) route() error {
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
	for _, n := range r.nodes {
		if n.cmd == nil || n.cmd.ProcessState != nil {
			continue
		}
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.Version = r.group, 3
		resp, err := n.raw(req)
		if err != nil {
			continue
		}
		fc := resp.(*kmsg.FindCoordinatorResponse)
		if fc.ErrorCode != 0 {
			continue
		}
		addr := net.JoinHostPort(fc.Host, strconv.Itoa(int(fc.Port)))
		c, err := testutil.DialRaw(addr)
		if err != nil {
			continue
		}
		r.c, r.addr = c, addr
		return nil
	}
	return fmt.Errorf("no coordinator for %s", r.group)
}

// commit sends one OffsetCommit of partition p at offset off; 0 or the error code (-1: I/O).
func (r *routed) commit(p int32, off int64) int16 {
	if r.c == nil {
		if err := r.route(); err != nil {
			return -1
		}
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 7, r.group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = p, off
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := r.c.Do(req)
	if err != nil {
		r.c.Close()
		r.c = nil
		return -1
	}
	code := resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	if code != 0 {
		r.c.Close()
		r.c = nil
	}
	return code
}

// commitLoad runs conns closed-loop committers for d and returns commits/s and latency
// percentiles of the acknowledged commits.
func commitLoad(b *testing.B, ns []*node, conns int, d time.Duration) (rate float64, p50, p99 time.Duration, errs int) {
	var mu sync.Mutex
	var lats []time.Duration
	var wg sync.WaitGroup
	start := make(chan struct{})
	stop := time.Now().Add(d + 500*time.Millisecond)
	for i := 0; i < conns; i++ {
		r := &routed{nodes: ns, group: fmt.Sprintf("bench-%d", i)}
		for r.commit(int32(i%64), 0) != 0 { // warm: routed, shard loaded
			time.Sleep(10 * time.Millisecond)
			if time.Now().After(stop) {
				b.Fatalf("group %s: no commit acknowledged during warm-up", r.group)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			e := 0
			<-start
			end := time.Now().Add(d)
			for off := int64(1); time.Now().Before(end); off++ {
				t0 := time.Now()
				if code := r.commit(int32(i%64), off); code != 0 {
					e++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			errs += e
			mu.Unlock()
			if r.c != nil {
				r.c.Close()
			}
		}()
	}
	close(start)
	wg.Wait()
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	if len(lats) == 0 {
		return 0, 0, 0, errs
	}
	return float64(len(lats)) / d.Seconds(), lats[len(lats)/2], lats[len(lats)*99/100], errs
}

// BenchmarkClusterCommits measures durable commits at 64 connections: Pebble (one node) and
// PostgreSQL with one and three nodes, side by side in one run.
func BenchmarkClusterCommits(b *testing.B) {
	modes := []struct {
		name  string
		nodes int
		pg    bool
	}{{"pebble-1", 1, false}, {"postgres-1", 1, true}, {"postgres-3", 3, true}}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			url := ""
			if m.pg {
				url = pgtest.NewDatabase(b)
			}
			ns := benchNodes(b, url, m.nodes)
			rate, p50, p99, errs := commitLoad(b, ns, benchConns, 5*time.Second)
			b.ReportMetric(rate, "commits/s")
			b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			b.Logf("%s: %.0f commits/s, p50 %v, p99 %v, %d errors (64 connections, 1 partition per commit)", m.name, rate, p50, p99, errs)
		})
	}
}

// BenchmarkClusterFailover measures, at the default lease TTL (5 s), the time from SIGKILL of a
// group's coordinator to the first acknowledged commit of that group on a survivor, three
// times (the killed node restarts between rounds).
func BenchmarkClusterFailover(b *testing.B) {
	url := pgtest.NewDatabase(b)
	ns := benchNodes(b, url, 3)
	var times []time.Duration
	for round := 0; round < 3; round++ {
		r := &routed{nodes: ns, group: fmt.Sprintf("failover-%d", round)}
		for r.commit(0, 1) != 0 {
			time.Sleep(10 * time.Millisecond)
		}
		owner, _ := ns[0].coordinatorOf(context.Background(), r.group)
		victim := ns[owner-1]
		// Commit continuously until the kill, as a live consumer would.
		for i := 0; i < 20; i++ {
			r.commit(0, int64(i+2))
		}
		victim.signal(syscall.SIGKILL)
		killed := time.Now()
		victim.cmd.Wait()
		for off := int64(100); ; off++ {
			if r.commit(0, off) == 0 {
				break
			}
			if time.Since(killed) > time.Minute {
				b.Fatal("no commit within a minute of the kill")
			}
			time.Sleep(20 * time.Millisecond)
		}
		d := time.Since(killed)
		times = append(times, d)
		b.Logf("round %d: group %s moved from node %d to %s; first commit %v after SIGKILL", round, r.group, owner, r.addr, d.Round(time.Millisecond))
		if r.c != nil {
			r.c.Close()
		}
		victim.start()
		for deadline := time.Now().Add(30 * time.Second); !balancedNodes(ns); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatal("shards did not spread again")
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(times[len(times)/2].Seconds(), "failover-s")
	b.ReportMetric(times[len(times)-1].Seconds(), "max-failover-s")
}

// offsetRecords builds n committed-offset records of one shard (1000 partitions per group).
func offsetRecords(n int) []store.Record {
	cfg := coordinator.ConfigFrom(config.Defaults())
	st := coordinator.NewState(0, cfg, slog.New(slog.DiscardHandler), engine.RandomIDs{})
	now := time.Unix(1_700_000_000, 0)
	for i := 0; i < n; i++ {
		st.WriteOffset("load-group-"+strconv.Itoa(i/1000), "bench-load-topic", int32(i%1000),
			&coordinator.OffsetValue{Offset: int64(i) * 7, LeaderEpoch: -1, CommitMs: now.UnixMilli()})
	}
	e := st.TakeEffects()
	out := make([]store.Record, len(e.Records))
	for i, r := range e.Records {
		out[i] = store.Record(r)
	}
	return out
}

// loadTime serves shard 0 of st in a managed runtime with lease l and times it to active.
func loadTime(b *testing.B, st store.Store, l store.Shard) time.Duration {
	cfg := coordinator.ConfigFrom(config.Defaults())
	rt := engine.New(engine.Options[*coordinator.State]{Shards: st.Config().Shards, Store: st, Managed: true,
		New: func(shard int32) *coordinator.State {
			return coordinator.NewState(shard, cfg, slog.New(slog.DiscardHandler), engine.RandomIDs{})
		}})
	rt.Start()
	defer rt.Close()
	start := time.Now()
	rt.Serve(l)
	for !rt.Active(0) {
		if time.Since(start) > 5*time.Minute {
			b.Fatal("shard did not load")
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// BenchmarkShardLoad1M times the load of one shard of 1M committed offsets (replayed into the
// group coordinator's state) from PostgreSQL and, for comparison, from Pebble; and the bare
// PostgreSQL row stream.
func BenchmarkShardLoad1M(b *testing.B) {
	const n = 1_000_000
	recs := offsetRecords(n)
	ctx := context.Background()
	b.Run("postgres", func(b *testing.B) {
		db, err := postgres.Open(ctx, pgtest.NewDatabase(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		me := postgres.Me{ID: 1, Incarnation: 1}
		if err := db.Register(ctx, postgres.Node{ID: 1, Incarnation: 1}, 0, time.Hour); err != nil {
			b.Fatal(err)
		}
		c, err := db.OpenCoordinator(ctx, "group", 1, me, "x")
		if err != nil {
			b.Fatal(err)
		}
		l, err := c.Acquire(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		seed := time.Now()
		for i := 0; i < len(recs); i += 10_000 {
			if err := l.Append(ctx, recs[i:min(i+10_000, len(recs))]); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("seeded %d records in %v", n, time.Since(seed).Round(time.Millisecond))
		db.Pool().Exec(ctx, "VACUUM ANALYZE muster_records")
		start := time.Now()
		rows := 0
		if err := l.(store.BorrowingLoader).LoadBorrowed(ctx, func(store.Record) error { rows++; return nil }); err != nil {
			b.Fatal(err)
		}
		stream := time.Since(start)
		l2, err := c.Acquire(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		d := loadTime(b, c, l2)
		b.ReportMetric(d.Seconds(), "load-s")
		b.ReportMetric(stream.Seconds(), "stream-s")
		b.Logf("postgres: %d rows streamed in %v; shard loaded (replayed) in %v", rows, stream.Round(time.Millisecond), d.Round(time.Millisecond))
	})
	b.Run("pebble", func(b *testing.B) {
		db, err := pebble.Open(filepath.Join(b.TempDir(), "pebble"), &pebble.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		p, err := store.OpenPebble(db, 1)
		if err != nil {
			b.Fatal(err)
		}
		l, _ := p.Acquire(ctx, 0)
		for i := 0; i < len(recs); i += 10_000 {
			if err := l.Append(ctx, recs[i:min(i+10_000, len(recs))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			b.Fatal(err)
		}
		l2, _ := p.Acquire(ctx, 0)
		d := loadTime(b, p, l2)
		b.ReportMetric(d.Seconds(), "load-s")
		b.Logf("pebble: shard loaded (replayed) in %v", d.Round(time.Millisecond))
	})
}
