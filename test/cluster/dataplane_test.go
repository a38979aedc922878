package cluster_test

import (
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
)

// TestClusterDataPlaneFailover: three `muster serve` nodes share topics and partition logs in
// PostgreSQL, each partition led by one node. Idempotent franz-go and confluent-kafka-go
// producers produce through all three, a classic and a KIP-848 group of two franz-go members
// each and a KIP-848 group of one confluent-kafka-go member consume, and committers commit
// offsets, while one node is SIGKILLed (its partitions and shards move to the survivors
// after the lease TTL) and later restarted, and another is stopped with SIGTERM (it hands them
// over at once). Every acknowledged record is consumed by every group, no offset holds two
// records (no offset reused by two leaders), every acknowledged commit is kept.
func TestClusterDataPlaneFailover(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var nodes []*node
	for id := int32(1); id <= 3; id++ {
		// KIP-848 members heartbeat every 500 ms (Kafka's 5 s would make each step of a
		// reassignment after a failover take seconds) and expire after 6 s.
		n := newNode(t, url, id, "cluster.lease.ttl.ms=2000", "group.consumer.heartbeat.interval.ms=500",
			"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.session.timeout.ms=6000",
			"group.consumer.min.session.timeout.ms=1000")
		n.start()
		nodes = append(nodes, n)
	}
	nodes[0].createTopic("d", 6)
	nodes[0].createTopic("t", 4)
	seeds := []string{nodes[0].addr, nodes[1].addr, nodes[2].addr}

	p := startProducer(t, seeds, "d", 2*time.Millisecond)
	cp := startConfluentProducer(t, seeds, "d", 5*time.Millisecond)
	classic := startGroup(t, seeds, "d", "data-classic", 2, false)
	defer classic.close()
	kip848 := startGroup(t, seeds, "d", "data-848", 2, true)
	defer kip848.close()
	rdk := startConfluentGroup(t, seeds, "d", "data-rdk")
	defer rdk.close()
	c := startCommitters(t, seeds, 4)
	p.waitProgress(t, 300, 30*time.Second)
	c.waitProgress(t, 20, 30*time.Second)

	victim := nodes[1]
	before := leadersOf(nodes[0], "d")
	start := time.Now()
	victim.kill()
	t.Logf("SIGKILL node %d", victim.id)
	after := waitLeadersExcept(t, nodes[0], "d", victim.id, 30*time.Second)
	t.Logf("every partition led by the survivors %v after the kill", time.Since(start).Round(time.Millisecond))
	for i, b := range before {
		if b.leader == victim.id && after[i].epoch <= b.epoch {
			t.Errorf("partition %d moved from node %d at leader epoch %d to node %d at epoch %d (want a newer epoch)", i, victim.id, b.epoch, after[i].leader, after[i].epoch)
		}
	}
	p.waitProgress(t, 300, 30*time.Second)
	c.waitProgress(t, 20, 30*time.Second)

	victim.start()
	t.Logf("node %d restarted", victim.id)
	p.waitProgress(t, 300, 30*time.Second)

	other := nodes[2]
	start = time.Now()
	other.stop()
	t.Logf("SIGTERM node %d: stopped in %v", other.id, time.Since(start).Round(time.Millisecond))
	waitLeadersExcept(t, nodes[0], "d", other.id, 30*time.Second)
	p.waitProgress(t, 300, 30*time.Second)
	c.waitProgress(t, 20, 30*time.Second)

	cp.waitProgress(t, 100, 30*time.Second)
	p.stop(t)
	cp.stop(t)
	p.merge(cp)
	c.stop()
	survivors := []string{nodes[0].addr, nodes[1].addr}
	verifyConsumed(t, p, []*groupConsumers{classic, kip848, rdk}, 30*time.Second)
	c.verify(t, survivors)
}
