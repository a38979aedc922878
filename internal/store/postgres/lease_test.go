package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
)

// TestLeaseTakeoverAfterExpiry: a lease held by a live node cannot be taken; once the holder's
// registration expires (the database's clock) another node takes it with a higher epoch, and
// the old holder's Append is refused (ErrFenced) while the new one's succeeds.
func TestLeaseTakeoverAfterExpiry(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	dbA, dbB := openDB(t, url), openDB(t, url)
	a := register(t, dbA, 1, 100, 1500*time.Millisecond)
	b := register(t, dbB, 2, 200, time.Minute)
	ca, err := dbA.OpenCoordinator(ctx, "group", 2, a, "x")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := dbB.OpenCoordinator(ctx, "group", 2, b, "x")
	if err != nil {
		t.Fatal(err)
	}
	la, err := ca.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Append(ctx, []store.Record{{Key: []byte("k"), Value: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Acquire(ctx, 0); !errors.Is(err, postgres.ErrLeaseHeld) {
		t.Fatalf("acquire of a live node's lease: %v, want ErrLeaseHeld", err)
	}
	time.Sleep(1600 * time.Millisecond) // a's registration expires
	lb, err := cb.Acquire(ctx, 0)
	if err != nil {
		t.Fatalf("takeover after expiry: %v", err)
	}
	if lb.Epoch() <= la.Epoch() {
		t.Fatalf("takeover epoch %d not above %d", lb.Epoch(), la.Epoch())
	}
	if err := la.Append(ctx, []store.Record{{Key: []byte("k"), Value: []byte("stale")}}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale append: %v, want ErrFenced", err)
	}
	if err := lb.Append(ctx, []store.Record{{Key: []byte("k2"), Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	lb.Load(ctx, func(r store.Record) error { got = append(got, string(r.Key)+"="+string(r.Value)); return nil })
	if len(got) != 2 || got[0] != "k=a" || got[1] != "k2=b" {
		t.Fatalf("loaded %v", got)
	}
	// An expired node cannot acquire anything, even a free lease.
	if _, err := ca.Acquire(ctx, 1); !errors.Is(err, postgres.ErrLeaseHeld) {
		t.Fatalf("acquire by an expired node: %v", err)
	}
	// Renewal of an expired but not replaced registration succeeds; the view shows b as owner.
	v, err := dbA.Renew(ctx, a, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range v.Leases {
		if l.Kind == "group" && l.Shard == 0 && (l.Owner != 2 || !v.Held(l)) {
			t.Fatalf("lease view %+v", l)
		}
	}
}

// TestRegisterNodeIDInUse: a second live registration of a node id with another incarnation is
// refused; the previous incarnation of this node (its data dir was free) is replaced at once.
func TestRegisterNodeIDInUse(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, pgtest.NewDatabase(t))
	register(t, db, 1, 10, time.Minute)
	n := postgres.Node{ID: 1, Incarnation: 11}
	if err := db.Register(ctx, n, 0, time.Minute); !errors.Is(err, postgres.ErrNodeIDInUse) {
		t.Fatalf("second registration: %v", err)
	}
	if err := db.Register(ctx, n, 10, time.Minute); err != nil {
		t.Fatalf("restart of incarnation 10: %v", err)
	}
	if _, err := db.Renew(ctx, postgres.Me{ID: 1, Incarnation: 10}, time.Minute); !errors.Is(err, postgres.ErrNotRegistered) {
		t.Fatalf("renewal by the replaced incarnation: %v", err)
	}
}

// TestRestartedNodeTakesItsLeases: leases held under a node's previous incarnation are free for
// any node at once (the previous run is known dead), without waiting for the TTL.
func TestRestartedNodeTakesItsLeases(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, pgtest.NewDatabase(t))
	old := register(t, db, 1, 10, time.Minute)
	c, _ := db.OpenCoordinator(ctx, "group", 1, old, "x")
	l, err := c.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Register(ctx, postgres.Node{ID: 1, Incarnation: 11}, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	c2, _ := db.OpenCoordinator(ctx, "group", 1, postgres.Me{ID: 1, Incarnation: 11}, "x")
	l2, err := c2.Acquire(ctx, 0)
	if err != nil || l2.Epoch() != l.Epoch()+1 {
		t.Fatalf("acquire by the new incarnation: %v", err)
	}
}

// TestSchemaAndShardChecks: a database migrated by a newer muster refuses to open, and a
// coordinator opened with another shard count than the cluster's refuses too.
func TestSchemaAndShardChecks(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db := openDB(t, url)
	me := register(t, db, 1, 1, time.Minute)
	if _, err := db.OpenCoordinator(ctx, "group", 8, me, "offsets.topic.num.partitions"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenCoordinator(ctx, "group", 9, me, "offsets.topic.num.partitions"); !errors.Is(err, postgres.ErrShardCountChanged) {
		t.Fatalf("other shard count: %v", err)
	}
	// Reopening migrates nothing and succeeds.
	openDB(t, url)
	if _, err := db.Pool().Exec(ctx, `UPDATE muster_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(ctx, url, postgres.Options{}); !errors.Is(err, postgres.ErrSchemaTooNew) {
		t.Fatalf("open of a newer schema: %v", err)
	}
}
