package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/pgtest"
)

// classicMembers runs n franz-go consumers of a classic group on topic t.
type classicMembers struct {
	cls  []*kgo.Client
	stop chan struct{}
	wg   sync.WaitGroup
}

func startClassic(t *testing.T, seeds []string, group string, n int) *classicMembers {
	m := &classicMembers{stop: make(chan struct{})}
	for i := 0; i < n; i++ {
		opts := append(clientOpts(seeds), kgo.ConsumerGroup(group), kgo.ConsumeTopics("t"),
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond))
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		m.cls = append(m.cls, cl)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for {
				select {
				case <-m.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				cl.PollFetches(ctx)
				cancel()
			}
		}()
	}
	return m
}

func (m *classicMembers) close() {
	close(m.stop)
	m.wg.Wait()
	for _, cl := range m.cls {
		cl.Close()
	}
}

// waitStable waits until group is Stable with members members through seeds and returns its
// coordinator and generation.
func waitStable(t *testing.T, seeds []string, group string, members int, d time.Duration) (int32, int32) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		// A fresh client each time: no coordinator cached from before a failover.
		cl, err := kgo.NewClient(clientOpts(seeds)...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		gs, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
		cancel()
		cl.Close()
		if err == nil {
			g := gs[group]
			if g.Err == nil && g.State == "Stable" && len(g.Members) == members {
				return g.Coordinator.NodeID, 0
			}
			last = g.State
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s not stable with %d members within %v (last: %s)", group, members, d, last)
		}
	}
}

// TestClusterFailover: three `muster serve` nodes share the coordinator. Committers commit
// through all three and a classic group of two franz-go consumers stays joined while the
// group's coordinator node is SIGKILLed (its shards move to the survivors after the lease TTL)
// and restarted, and another node is stopped with SIGTERM (its shards are handed over at once).
// Every acknowledged commit is kept and no stale owner overwrote a newer one; the group
// rebalances onto the survivors each time.
func TestClusterFailover(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var nodes []*node
	for id := int32(1); id <= 3; id++ {
		n := newNode(t, url, id, "cluster.lease.ttl.ms=2000")
		n.start()
		n.createTopic("t", 4)
		nodes = append(nodes, n)
	}
	byID := func(id int32) *node { return nodes[id-1] }
	seeds := []string{nodes[0].addr, nodes[1].addr, nodes[2].addr}

	c := startCommitters(t, seeds, 8)
	members := startClassic(t, seeds, "classic", 2)
	defer members.close()
	coord, _ := waitStable(t, seeds, "classic", 2, 30*time.Second)
	c.waitProgress(t, 50, 30*time.Second)

	victim := byID(coord)
	start := time.Now()
	victim.kill()
	t.Logf("SIGKILL node %d (the classic group's coordinator)", coord)
	var survivors []string
	for _, n := range nodes {
		if n != victim {
			survivors = append(survivors, n.addr)
		}
	}
	newCoord, _ := waitStable(t, survivors, "classic", 2, 30*time.Second)
	t.Logf("group stable again on node %d %v after the kill", newCoord, time.Since(start).Round(time.Millisecond))
	c.waitProgress(t, 50, 30*time.Second)

	victim.start()
	t.Logf("node %d restarted", victim.id)
	c.waitProgress(t, 50, 30*time.Second)

	var other *node
	for _, n := range nodes {
		if n != victim {
			other = n
			break
		}
	}
	start = time.Now()
	other.stop()
	t.Logf("SIGTERM node %d: stopped in %v", other.id, time.Since(start).Round(time.Millisecond))
	survivors = nil
	for _, n := range nodes {
		if n != other {
			survivors = append(survivors, n.addr)
		}
	}
	waitStable(t, survivors, "classic", 2, 30*time.Second)
	c.waitProgress(t, 50, 30*time.Second)
	c.stop()
	c.verify(t, survivors)
}
