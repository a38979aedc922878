package cluster_test

import (
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
)

// TestClusterPostgresRestart: the PostgreSQL server is stopped immediately (in-flight
// transactions cut off, as in a crash of the database) and started again while two nodes serve
// committers. The nodes keep running: meanwhile requests fail with retriable errors
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS), and once the database is back the nodes
// reconnect, reload their shards and acknowledge commits again without a restart of their own;
// no acknowledged commit is lost.
func TestClusterPostgresRestart(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.Database(t)
	a := newNode(t, url, 1)
	b := newNode(t, url, 2)
	a.start()
	b.start()
	a.createTopic("t", 4)
	b.createTopic("t", 4)
	seeds := []string{a.addr, b.addr}
	c := startCommitters(t, seeds, 6)
	c.waitProgress(t, 50, 30*time.Second)

	g := groupOn(t, a, 1)
	if err := srv.StopNow(); err != nil {
		t.Fatal(err)
	}
	// Meanwhile the owner answers at once, with retriable errors.
	codes := map[int16]int{}
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		start := time.Now()
		code := commitRaw(a, g, 1_000_000)
		if time.Since(start) > 10*time.Second {
			t.Errorf("a commit during the outage took %v", time.Since(start))
		}
		codes[code]++
	}
	t.Logf("commits during the outage answered %v", codes)
	for code := range codes {
		if code != 14 && code != 15 && code != 16 { // COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
			t.Errorf("a commit during the outage answered error %d", code)
		}
	}
	if err := srv.StartAgain(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Log("PostgreSQL restarted")
	c.waitProgress(t, 100, 60*time.Second)
	t.Logf("commits acknowledged again %v after the database came back", time.Since(back).Round(time.Millisecond))
	for _, n := range []*node{a, b} {
		if n.cmd.ProcessState != nil {
			t.Fatalf("node %d exited: %v", n.id, n.cmd.ProcessState)
		}
		n.waitReady(30 * time.Second)
	}
	c.stop()
	c.verify(t, seeds)
}
