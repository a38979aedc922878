package crash

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestSIGKILLUnderPipelinedCommits: 32 committers, each with its own group, commit offsets of
// 8 partitions back to back (a commit is sent once the previous one is acknowledged) on 4
// coordinator shards, so each shard has several batches in flight at once; muster is killed
// with SIGKILL mid-stream and restarted on the same data dir. Every group's committed offsets
// are then those of its last acknowledged commit, or of the one in flight when muster died
// (durable but not acknowledged): no acknowledged commit is lost, and none is torn (the 8
// partitions of a commit are all there or none).
func TestSIGKILLUnderPipelinedCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, dir := freeAddr(t), t.TempDir()
	p := startProc(t, addr, dir)
	const topic, committers, partitions = "pipe-topic", 32, 8
	admin := newClient(t, addr)
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	ct.Topics = append(ct.Topics, rt)
	if _, err := ct.RequestWith(ctx, admin); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	acked := make([]int64, committers) // last acknowledged commit's offset (0: none)
	sent := make([]int64, committers)  // last commit sent
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < committers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := newClient(t, addr, kgo.MaxVersions(kversion.V3_8_0())) // commits by topic name
			for n := int64(1); ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation, req.RetentionTimeMillis = fmt.Sprintf("pipe-%d", c), -1, -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = topic
				for p := int32(0); p < partitions; p++ {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch = p, n*100+int64(p), -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				mu.Lock()
				sent[c] = n
				mu.Unlock()
				rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
				resp, err := req.RequestWith(rctx, cl)
				rcancel()
				if err != nil {
					return // the broker died
				}
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						if p.ErrorCode != 0 {
							err = kerr.ErrorForCode(p.ErrorCode)
						}
					}
				}
				if kerr.IsRetriable(err) {
					n-- // a shard still loading: send it again
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if err != nil {
					t.Errorf("%s: commit %d: %v", req.Group, n, err)
					return
				}
				mu.Lock()
				acked[c] = n
				mu.Unlock()
			}
		}()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		least := acked[0]
		for _, a := range acked {
			least = min(least, a)
		}
		mu.Unlock()
		if least >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committers made no progress: %v", acked)
		}
	}
	p.kill()
	close(stop)
	wg.Wait()
	mu.Lock()
	ackedAt, sentAt := append([]int64(nil), acked...), append([]int64(nil), sent...)
	mu.Unlock()

	startProc(t, addr, dir)
	cl := newClient(t, addr, kgo.MaxVersions(kversion.V3_8_0()))
	total := int64(0)
	for c := 0; c < committers; c++ {
		req := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = fmt.Sprintf("pipe-%d", c)
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("fetch %s: %v %+v", g.Group, err, resp)
		}
		got := map[int32]int64{}
		for _, t := range resp.Groups[0].Topics {
			for _, p := range t.Partitions {
				got[p.Partition] = p.Offset
			}
		}
		n := got[0] / 100
		for p := int32(0); p < partitions; p++ {
			if got[p] != n*100+int64(p) {
				t.Errorf("%s: partition %d at %d, partition 0 at %d: a torn commit", g.Group, p, got[p], got[0])
			}
		}
		if n < ackedAt[c] || n > sentAt[c] {
			t.Errorf("%s: commit %d after the restart; last acknowledged %d, last sent %d", g.Group, n, ackedAt[c], sentAt[c])
		}
		total += ackedAt[c]
	}
	t.Logf("%d acknowledged commits of %d partitions before SIGKILL, all there after the restart", total, partitions)
}
