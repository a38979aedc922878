package postgres_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
	"github.com/muster-io/muster/internal/store/storetest"
	"github.com/muster-io/muster/internal/streams/topodesc"
	"github.com/muster-io/muster/internal/streams/topodesc/topodesctest"
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

// TestSecurityStore: ACLs and SCRAM credentials written through one node's pool are read by
// another's, and removals apply.
func TestSecurityStore(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := openDB(t, url).Security(), openDB(t, url).Security()
	id := [16]byte{1, 2, 3}
	bind := security.Binding{ResourceType: security.Topic, ResourceName: "t", PatternType: security.Literal,
		Principal: "User:alice", Host: "*", Operation: security.OpRead, Permission: security.Allow}
	if err := a.ChangeACLs([]security.StoredBinding{{ID: id, Binding: bind}}, nil); err != nil {
		t.Fatal(err)
	}
	cred := security.ScramCredential{User: "alice", Mechanism: security.ScramSHA256, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096}
	if err := a.ChangeScramCredentials([]security.ScramCredential{cred}, nil); err != nil {
		t.Fatal(err)
	}
	acls, err := b.LoadACLs()
	if err != nil || len(acls) != 1 || acls[0].ID != id || acls[0].Binding != bind {
		t.Fatalf("acls %+v, %v", acls, err)
	}
	creds, err := b.LoadScramCredentials()
	if err != nil || len(creds) != 1 || creds[0].User != "alice" || string(creds[0].StoredKey) != "k" || creds[0].Iterations != 4096 {
		t.Fatalf("creds %+v, %v", creds, err)
	}
	if err := b.ChangeACLs(nil, [][16]byte{id}); err != nil {
		t.Fatal(err)
	}
	if err := b.ChangeScramCredentials(nil, []security.ScramKey{{User: "alice", Mechanism: security.ScramSHA256}}); err != nil {
		t.Fatal(err)
	}
	if acls, _ := a.LoadACLs(); len(acls) != 0 {
		t.Fatalf("acls after removal %+v", acls)
	}
	if creds, _ := a.LoadScramCredentials(); len(creds) != 0 {
		t.Fatalf("creds after removal %+v", creds)
	}
}

// TestTopologyPluginContract runs the KIP-1331 plugin contract against the postgres plugin of
// cluster mode (the shared topology descriptions table).
func TestTopologyPluginContract(t *testing.T) {
	topodesctest.RunContractTests(t, func(t *testing.T) topodesc.Plugin {
		db := openDB(t, pgtest.NewDatabase(t))
		p, err := topodesc.New(topodesc.Config{Class: "postgres", Shared: db.Topologies()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	})
}

// TestProducerIDBlocks: blocks taken concurrently through two pools never overlap and start at 0.
func TestProducerIDBlocks(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := openDB(t, url), openDB(t, url)
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for _, db := range []*postgres.DB{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				first, err := db.AllocateProducerIDs(context.Background(), postgres.ProducerIDBlockSize)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[first] || first%postgres.ProducerIDBlockSize != 0 {
					t.Errorf("block %d handed out twice or misaligned", first)
				}
				seen[first] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if !seen[0] || len(seen) != 100 || !seen[99*postgres.ProducerIDBlockSize] {
		t.Fatalf("%d blocks, first %v, last %v", len(seen), seen[0], seen[99*postgres.ProducerIDBlockSize])
	}
}
