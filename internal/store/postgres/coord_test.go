package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
	"github.com/muster-io/muster/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDB opens (and migrates) the database at url, closed when the test ends.
func openDB(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// register enters a live node in the registry.
func register(t testing.TB, db *postgres.DB, id int32, inc int64, ttl time.Duration) postgres.Me {
	t.Helper()
	n := postgres.Node{ID: id, Incarnation: inc, Endpoints: []postgres.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9092 + id}}}
	if err := db.Register(context.Background(), n, 0, ttl); err != nil {
		t.Fatal(err)
	}
	return postgres.Me{ID: id, Incarnation: inc}
}

// TestPostgresContract runs the coordinator store contract against PostgreSQL: one node holds
// the leases; a reopen is a new connection pool on the same database.
func TestPostgresContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Impl {
		url := pgtest.NewDatabase(t)
		return storetest.Impl{Fencing: true, Open: func(shards int32) store.Store {
			db := openDB(t, url)
			me := register(t, db, 1, 1, time.Minute)
			c, err := db.OpenCoordinator(context.Background(), "group", shards, me, "offsets.topic.num.partitions")
			if err != nil {
				t.Fatal(err)
			}
			return c
		}}
	})
}
