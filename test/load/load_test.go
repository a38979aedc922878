// Package load drives a real broker with many groups, members and connections: KIP-848 members
// heartbeat over raw connections for a bounded time; heartbeat p99 must stay below the session
// timeout, no member may be fenced, and memory must stay bounded.
//
// CI runs a small scale. MUSTER_LOAD=full runs 10k groups, 50k members, 5k connections.
package load

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

type scale struct {
	groups, members, conns int
	interval, duration     time.Duration
}

func TestManyGroupsMembersConnections(t *testing.T) {
	sc := scale{groups: 300, members: 1500, conns: 150, interval: time.Second, duration: 8 * time.Second}
	if os.Getenv("MUSTER_LOAD") == "full" {
		sc = scale{groups: 10000, members: 50000, conns: 5000, interval: 5 * time.Second, duration: 60 * time.Second}
	}
	b := testutil.Start(t, "offsets.topic.num.partitions=50",
		"group.consumer.min.heartbeat.interval.ms=1000",
		fmt.Sprintf("group.consumer.heartbeat.interval.ms=%d", sc.interval.Milliseconds()))
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 8, 1, nil, "load"); err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	type member struct {
		group, id string
		epoch     int32
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      atomic.Int64
		fenced    atomic.Int64
		beats     atomic.Int64
		firstErr  atomic.Value
	)
	record := func(d time.Duration) {
		mu.Lock()
		latencies = append(latencies, d)
		mu.Unlock()
	}
	perConn := sc.members / sc.conns
	start := time.Now()
	stop := start.Add(sc.duration)
	var wg sync.WaitGroup
	for c := 0; c < sc.conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rc, err := testutil.DialRaw(b.Addr())
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			defer rc.Close()
			ms := make([]*member, perConn)
			for i := range ms {
				n := c*perConn + i
				ms[i] = &member{group: fmt.Sprintf("load-%d", n%sc.groups), id: fmt.Sprintf("member-%07d-xxxxxxxxxxxx", n)}
			}
			beat := func(m *member, leave bool) {
				req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
				req.Version = 1
				req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
				if leave {
					req.MemberEpoch = -1
				}
				if m.epoch == 0 {
					req.RebalanceTimeoutMillis = 60000
					req.SubscribedTopicNames = []string{"load"}
					req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
				}
				t0 := time.Now()
				r, err := rc.Do(req)
				record(time.Since(t0))
				beats.Add(1)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					return
				}
				resp := r.(*kmsg.ConsumerGroupHeartbeatResponse)
				switch resp.ErrorCode {
				case 0:
					m.epoch = resp.MemberEpoch
				case 110, 25: // FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID
					fenced.Add(1)
					m.epoch = 0
				default:
					errs.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("heartbeat error code %d", resp.ErrorCode))
				}
			}
			for round := 0; time.Now().Before(stop); round++ {
				next := time.Now().Add(sc.interval)
				for _, m := range ms {
					beat(m, false)
				}
				time.Sleep(time.Until(next))
			}
			for _, m := range ms {
				beat(m, true)
			}
		}(c)
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	t.Logf("scale %+v: %d heartbeats in %v (%.0f/s), p50 %v p99 %v max %v, fenced %d, errors %d, heap in use %d MiB → peak-ish %d MiB",
		sc, beats.Load(), time.Since(start).Round(time.Millisecond), float64(beats.Load())/time.Since(start).Seconds(),
		p(0.5), p(0.99), latencies[len(latencies)-1], fenced.Load(), errs.Load(), before.HeapInuse>>20, after.HeapInuse>>20)
	if errs.Load() > 0 {
		t.Fatalf("%d heartbeat errors; first: %v", errs.Load(), firstErr.Load())
	}
	if fenced.Load() > 0 {
		t.Fatalf("%d members fenced under load", fenced.Load())
	}
	if p(0.99) >= 45*time.Second {
		t.Fatalf("heartbeat p99 %v is not below the session timeout", p(0.99))
	}
	// Every member left: every group must be Empty now.
	groups, err := kadm.NewClient(cl).ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Sorted() {
		if g.State != "Empty" {
			t.Fatalf("group %s is %s after every member left", g.Group, g.State)
		}
	}
}
