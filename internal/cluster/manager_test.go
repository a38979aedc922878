package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/cluster"
	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// host is a runtime stand-in that records which shards it serves; a shard's lease is dropped
// when Lost closes.
type host struct {
	mu     sync.Mutex
	served map[int32]store.Shard
}

func newHost() *host { return &host{served: map[int32]store.Shard{}} }

func (h *host) Serve(l store.Shard) {
	h.mu.Lock()
	h.served[l.ID()] = l
	h.mu.Unlock()
	go func() {
		<-l.Lost()
		h.mu.Lock()
		if h.served[l.ID()] == l {
			delete(h.served, l.ID())
		}
		h.mu.Unlock()
	}()
}

func (h *host) Unserve(_ context.Context, shard int32) error {
	h.mu.Lock()
	delete(h.served, shard)
	h.mu.Unlock()
	return nil
}

func (h *host) Active(shard int32) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.served[shard] != nil
}

func (h *host) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.served)
}

type node struct {
	id        int32
	db        *postgres.DB
	m         *cluster.Manager
	h         *host
	takeovers chan time.Duration
}

const shards = 12

func startNode(t *testing.T, url string, id int32, ttl time.Duration) *node {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	n := &node{id: id, db: db, h: newHost(), takeovers: make(chan time.Duration, 64)}
	inc := time.Now().UnixNano()
	me := postgres.Me{ID: id, Incarnation: inc}
	c, err := db.OpenCoordinator(ctx, "group", shards, me, "offsets.topic.num.partitions")
	if err != nil {
		t.Fatal(err)
	}
	n.m, err = cluster.Start(ctx, db, cluster.Config{
		Node: postgres.Node{ID: id, Incarnation: inc, Endpoints: []postgres.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9000 + id}}},
		TTL:  ttl, Log: slog.New(slog.DiscardHandler),
		Hooks: cluster.Hooks{Acquired: func(kind string, d time.Duration) {
			if d > 0 {
				n.takeovers <- d
			}
		}},
	}, cluster.Kind{Store: c, Host: n.h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.m.Close) // before the pool closes
	return n
}

// waitShares waits until the nodes serve want[i] shards each and every shard is served once.
func waitShares(t *testing.T, nodes []*node, want ...int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := make([]int, len(nodes))
		seen := map[int32]int{}
		for i, n := range nodes {
			got[i] = n.h.count()
			n.h.mu.Lock()
			for sh := range n.h.served {
				seen[sh]++
			}
			n.h.mu.Unlock()
		}
		ok := fmt.Sprint(got) == fmt.Sprint(want) && len(seen) == shards
		for _, c := range seen {
			ok = ok && c == 1
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("shares %v, want %v (shards served: %v)", got, want, seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLeaseBalancing: three nodes split the shards evenly; a draining node hands its shards
// to the others at once; a node that stops renewing (a crash) loses its shards to the
// survivors after the TTL; a node that joins gets its share back.
func TestLeaseBalancing(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ttl := 1500 * time.Millisecond
	a := startNode(t, url, 1, ttl)
	waitShares(t, []*node{a}, 12)
	b := startNode(t, url, 2, ttl)
	c := startNode(t, url, 3, ttl)
	waitShares(t, []*node{a, b, c}, 4, 4, 4)
	for _, n := range []*node{a, b, c} {
		for sh := int32(0); sh < shards; sh++ {
			for deadline := time.Now().Add(5 * time.Second); ; {
				owner, ok := n.m.Owner("group", sh)
				if ok && []*node{a, b, c}[owner.ID-1].h.Active(sh) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node %d's directory: shard %d → %v, %v", n.id, sh, owner.ID, ok)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}

	start := time.Now()
	c.m.Drain(context.Background())
	waitShares(t, []*node{a, b}, 6, 6)
	t.Logf("drain handover: %v", time.Since(start))
	if time.Since(start) > ttl {
		t.Errorf("a drained node's shards moved after %v, more than the TTL", time.Since(start))
	}

	start = time.Now()
	b.m.Close() // stops renewing, releases nothing: a crash as the others see it
	waitShares(t, []*node{a}, 12)
	t.Logf("takeover after a crash: %v (ttl %v)", time.Since(start), ttl)
	select {
	case d := <-a.takeovers:
		t.Logf("takeover time after expiry: %v", d)
	default:
		t.Error("no takeover recorded")
	}
	d := startNode(t, url, 4, ttl)
	waitShares(t, []*node{a, d}, 6, 6)
	a.m.Drain(context.Background())
	d.m.Drain(context.Background())
}
