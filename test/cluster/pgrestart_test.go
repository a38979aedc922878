package cluster_test

import (
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
)

// TestClusterPostgresRestart: the PostgreSQL server is stopped immediately (in-flight
// transactions cut off, as in a crash of the database) and started again while two nodes serve
// committers, an idempotent producer and a consumer group. The nodes keep running: meanwhile
// requests fail with retriable errors (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// NOT_LEADER_OR_FOLLOWER), and once the database is back the nodes reconnect, reload their
// shards and partitions and acknowledge commits and records again without a restart of their
// own; no acknowledged commit or record is lost, no offset holds two records.
func TestClusterPostgresRestart(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.Database(t)
	a := newNode(t, url, 1)
	b := newNode(t, url, 2)
	a.start()
	b.start()
	a.createTopic("t", 4)
	b.createTopic("t", 4)
	a.createTopic("d", 4)
	seeds := []string{a.addr, b.addr}
	c := startCommitters(t, seeds, 6)
	p := startProducer(t, seeds, "d", 2*time.Millisecond)
	cons := startGroup(t, seeds, "d", "pg-restart", 1, false)
	defer cons.close()
	c.waitProgress(t, 50, 30*time.Second)
	p.waitProgress(t, 200, 30*time.Second)

	g := groupOn(t, a, 1)
	part := int32(-1)
	for i, l := range leadersOf(a, "d") {
		if l.leader == a.id {
			part = int32(i)
		}
	}
	if part < 0 {
		t.Fatalf("node 1 leads no partition of d: %+v", leadersOf(a, "d"))
	}
	if err := srv.StopNow(); err != nil {
		t.Fatal(err)
	}
	// Meanwhile the owner answers at once, with retriable errors.
	codes, produced := map[int16]int{}, map[int16]int{}
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		start := time.Now()
		code := commitRaw(a, g, 1_000_000)
		if time.Since(start) > 10*time.Second {
			t.Errorf("a commit during the outage took %v", time.Since(start))
		}
		codes[code]++
		start = time.Now()
		code, _ = produceRaw(a, "d", part, "during-the-outage")
		if time.Since(start) > 10*time.Second {
			t.Errorf("a produce during the outage took %v", time.Since(start))
		}
		produced[code]++
	}
	t.Logf("during the outage commits answered %v, produces %v", codes, produced)
	for code := range codes {
		if code != 14 && code != 15 && code != 16 { // COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
			t.Errorf("a commit during the outage answered error %d", code)
		}
	}
	for code := range produced {
		if code != 6 && code != 7 { // NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT
			t.Errorf("a produce during the outage answered error %d", code)
		}
	}
	if err := srv.StartAgain(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Log("PostgreSQL restarted")
	c.waitProgress(t, 100, 60*time.Second)
	t.Logf("commits acknowledged again %v after the database came back", time.Since(back).Round(time.Millisecond))
	p.waitProgress(t, 200, 60*time.Second)
	t.Logf("records acknowledged again %v after the database came back", time.Since(back).Round(time.Millisecond))
	for _, n := range []*node{a, b} {
		if n.cmd.ProcessState != nil {
			t.Fatalf("node %d exited: %v", n.id, n.cmd.ProcessState)
		}
		n.waitReady(30 * time.Second)
	}
	c.stop()
	p.stop(t)
	c.verify(t, seeds)
	verifyConsumed(t, p, []*groupConsumers{cons}, 30*time.Second)
}
