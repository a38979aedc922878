package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// clientOpts are the options of every client of these tests: topic IDs are per node until the
// data plane moves to the shared store, so nothing newer than Kafka 3.9's versions (no
// OffsetCommit v10 by topic ID).
func clientOpts(seeds []string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.MaxVersions(kversion.V3_9_0()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.RequestRetries(1000), kgo.RetryTimeout(60 * time.Second)}
}

// committers commit strictly increasing offsets, one group each and one commit at a time, and
// remember the last acknowledged offset of each group and the first time each error was seen.
type committers struct {
	mu     sync.Mutex
	acked  map[string]int64
	tried  map[string]int64
	errs   map[string]int
	done   chan struct{}
	wg     sync.WaitGroup
	groups []string
	// lastAck is when any commit was last acknowledged; gaps measure unavailability.
	lastAck time.Time
	maxGap  time.Duration
}

func startCommitters(t *testing.T, seeds []string, n int) *committers {
	c := &committers{acked: map[string]int64{}, tried: map[string]int64{}, errs: map[string]int{}, done: make(chan struct{}), lastAck: time.Now()}
	for i := 0; i < n; i++ {
		g := fmt.Sprintf("committer-%d", i)
		c.groups = append(c.groups, g)
		cl, err := kgo.NewClient(clientOpts(seeds)...)
		if err != nil {
			t.Fatal(err)
		}
		adm := kadm.NewClient(cl)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer cl.Close()
			for off := int64(1); ; off++ {
				select {
				case <-c.done:
					return
				default:
				}
				c.mu.Lock()
				c.tried[g] = off
				c.mu.Unlock()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				os := kadm.Offsets{}
				for p := int32(0); p < 4; p++ {
					os.Add(kadm.Offset{Topic: "t", Partition: p, At: off})
				}
				err := adm.CommitAllOffsets(ctx, g, os)
				cancel()
				c.mu.Lock()
				if err == nil {
					c.acked[g] = off
					now := time.Now()
					if gap := now.Sub(c.lastAck); gap > c.maxGap {
						c.maxGap = gap
					}
					c.lastAck = now
				} else {
					var ke *kerr.Error
					name := err.Error()
					if errors.As(err, &ke) {
						name = ke.Message
					}
					c.errs[name]++
				}
				c.mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	return c
}

func (c *committers) stop() {
	close(c.done)
	c.wg.Wait()
}

// ackedCount is the number of acknowledged commits so far (a progress measure).
func (c *committers) ackedSum() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s int64
	for _, v := range c.acked {
		s += v
	}
	return s
}

// waitProgress waits until n more commits were acknowledged.
func (c *committers) waitProgress(t *testing.T, n int64, d time.Duration) {
	t.Helper()
	start := c.ackedSum()
	for deadline := time.Now().Add(d); c.ackedSum() < start+n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("committers made no progress in %v (errors %v)", d, c.errs)
		}
	}
}

// verify reads every group's committed offsets through seeds: each group's last acknowledged
// commit (or a later attempted one) is there, so no acknowledged commit was lost or
// overwritten by a stale owner.
func (c *committers) verify(t *testing.T, seeds []string) {
	t.Helper()
	cl, err := kgo.NewClient(clientOpts(seeds)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, g := range c.groups {
		resp, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			t.Fatalf("fetch %s: %v", g, err)
		}
		acked, tried := c.acked[g], c.tried[g]
		for p := int32(0); p < 4; p++ {
			o, ok := resp.Lookup("t", p)
			if !ok || o.Err != nil || o.At < acked || o.At > tried {
				t.Errorf("group %s partition %d: committed %+v, last acknowledged %d, last tried %d", g, p, o, acked, tried)
			}
		}
	}
	t.Logf("commits verified: %d groups, errors seen by clients %v, longest gap between acknowledgements %v", len(c.groups), c.errs, c.maxGap.Round(time.Millisecond))
}
