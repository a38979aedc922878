package cluster_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/pgtest"
)

// commitRaw commits offset for group on topic t partition 0 at node n itself (OffsetCommit
// v7, simple commit) and returns the partition's error code (-1: no answer).
func commitRaw(n *node, group string, offset int64) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 7, group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := n.raw(req)
	if err != nil {
		return -1
	}
	return resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// fetchRaw reads group's committed offset of t/0 at node n (-1: none; error code otherwise).
func fetchRaw(n *node, group string) (int64, int16) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 7, group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := n.raw(req)
	if err != nil {
		return -1, -1
	}
	r := resp.(*kmsg.OffsetFetchResponse)
	if r.ErrorCode != 0 {
		return -1, r.ErrorCode
	}
	p := r.Topics[0].Partitions[0]
	return p.Offset, p.ErrorCode
}

// groupOn finds a group whose coordinator is node id.
func groupOn(t *testing.T, n *node, id int32) string {
	t.Helper()
	for i := 0; i < 500; i++ {
		g := fmt.Sprintf("g%d", i)
		if c, code := n.coordinatorOf(context.Background(), g); code == 0 && c == id {
			return g
		}
	}
	t.Fatalf("no group coordinated by node %d", id)
	return ""
}

// TestClusterFencingSIGSTOP: a node paused (SIGSTOP) past its lease loses its shards to the
// other node; resumed, it cannot write: a commit sent to it at once is refused (its lease
// watchdog unloads the shard, or the store refuses the stale epoch's batch) and does not
// overwrite what the new owner committed; the group ends on the new owner.
func TestClusterFencingSIGSTOP(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ttl := 2 * time.Second
	a := newNode(t, url, 1, "cluster.lease.ttl.ms=2000")
	b := newNode(t, url, 2, "cluster.lease.ttl.ms=2000")
	a.start()
	b.start()
	a.createTopic("t", 1)
	b.createTopic("t", 1)
	// Wait for the shards to spread over both nodes.
	var g string
	for deadline := time.Now().Add(20 * time.Second); g == ""; time.Sleep(100 * time.Millisecond) {
		for i := 0; i < 500; i++ {
			cand := fmt.Sprintf("g%d", i)
			if c, code := b.coordinatorOf(context.Background(), cand); code == 0 && c == 1 {
				g = cand
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("node 1 coordinates no group")
		}
	}
	if c := commitRaw(a, g, 1); c != 0 {
		t.Fatalf("commit at the owner: error %d", c)
	}

	a.signal(syscall.SIGSTOP)
	paused := time.Now()
	for {
		if c := commitRaw(b, g, 2); c == 0 {
			break
		}
		if time.Since(paused) > 4*ttl {
			t.Fatalf("node 2 did not take group %s over within %v", g, 4*ttl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("node 2 took group %s over %v after node 1 was paused (ttl %v)", g, time.Since(paused).Round(time.Millisecond), ttl)

	a.signal(syscall.SIGCONT)
	if c := commitRaw(a, g, 99); c == 0 {
		t.Fatal("the resumed stale owner acknowledged a commit")
	} else {
		t.Logf("resumed stale owner answered error %d", c)
	}
	if off, c := fetchRaw(b, g); c != 0 || off != 2 {
		t.Fatalf("committed offset at the new owner: %d (error %d), want 2", off, c)
	}
	a.waitReady(20 * time.Second)
	losses, fenced := a.metric("muster_cluster_lease_losses_total"), a.metric("muster_cluster_fencing_refusals_total")
	if losses <= 0 {
		t.Errorf("node 1 lost no lease (muster_cluster_lease_losses_total %v)", losses)
	}
	t.Logf("node 1: lease losses %v, fencing refusals %v", losses, fenced)
	// The group's coordinator may move back to node 1 with the rebalance; wherever it is, the
	// offset is the new owner's.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		owner, code := b.coordinatorOf(context.Background(), g)
		n := map[int32]*node{1: a, 2: b}[owner]
		if code == 0 && n != nil {
			if off, c := fetchRaw(n, g); c == 0 {
				if off != 2 {
					t.Fatalf("final offset %d, want 2", off)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("group has no serving coordinator")
		}
	}
}
