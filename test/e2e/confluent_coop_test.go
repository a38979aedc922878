//go:build cgo

package e2e

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/muster-io/muster/internal/testutil"
)

// TestConfluentCooperativeTwoConsumers: two librdkafka consumers with the cooperative-sticky
// assignor; the second joins while the first is consuming (an incremental rebalance on the
// classic protocol). Every record is consumed exactly once (synchronous commits), both members
// get partitions, and both leave cleanly.
func TestConfluentCooperativeTwoConsumers(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 400
	want := clProduceN(t, ctx, b.Addr(), "coop-topic", 4, n, "q")

	var mu sync.Mutex
	seen := map[string]int{}
	by := map[string]int{}
	var protoErrs []string
	retries := 0
	total := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	consume := func(name string, stop <-chan struct{}, wg *sync.WaitGroup) {
		defer wg.Done()
		c, err := kafka.NewConsumer(&kafka.ConfigMap{
			"bootstrap.servers":             b.Addr(),
			"group.id":                      "coop-group",
			"client.id":                     name,
			"group.protocol":                "classic",
			"partition.assignment.strategy": "cooperative-sticky",
			"auto.offset.reset":             "earliest",
			"enable.auto.commit":            false,
			"session.timeout.ms":            10000,
			"heartbeat.interval.ms":         500,
			"fetch.wait.max.ms":             50,
			"broker.address.family":         "v4",
			"go.logs.channel.enable":        true,
		})
		if err != nil {
			t.Error(err)
			return
		}
		go func() {
			for l := range c.Logs() {
				if l.Tag == "PROTOERR" || strings.Contains(l.Message, "Protocol parse failure") {
					mu.Lock()
					protoErrs = append(protoErrs, name+": "+l.Message)
					mu.Unlock()
				}
			}
		}()
		if err := c.SubscribeTopics([]string{"coop-topic"}, nil); err != nil {
			t.Error(err)
			return
		}
		for {
			select {
			case <-stop:
				if err := c.Close(); err != nil {
					t.Errorf("%s close: %v", name, err)
				}
				return
			default:
			}
			switch e := c.Poll(50).(type) {
			case *kafka.Message:
				if e.TopicPartition.Error != nil {
					t.Errorf("%s: %v", name, e.TopicPartition.Error)
					continue
				}
				// A commit racing a rebalance gets REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION, as
				// from Kafka; the partition cannot be revoked before the next Poll, so retry.
				for attempt := 0; ; attempt++ {
					_, err := c.CommitMessage(e)
					if err == nil {
						break
					}
					var ke kafka.Error
					if !errors.As(err, &ke) || (ke.Code() != kafka.ErrRebalanceInProgress && ke.Code() != kafka.ErrIllegalGeneration) || attempt > 200 {
						t.Errorf("%s commit: %v", name, err)
						break
					}
					mu.Lock()
					retries++
					mu.Unlock()
					time.Sleep(10 * time.Millisecond)
				}
				mu.Lock()
				seen[string(e.Value)]++
				by[name]++
				mu.Unlock()
				time.Sleep(2 * time.Millisecond) // slow enough for c2 to join mid-stream
			case kafka.Error:
				if e.IsFatal() {
					t.Errorf("%s fatal: %v", name, e)
					return
				}
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go consume("c1", stop, &wg)
	for total() < 50 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	wg.Add(1)
	go consume("c2", stop, &wg)
	for total() < n && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	clWaitCommitted(t, ctx, b.Addr(), "coop-group", "coop-topic", n)
	close(stop)
	wg.Wait()
	clWaitGroupEmpty(t, ctx, b.Addr(), "coop-group")
	mu.Lock()
	defer mu.Unlock()
	for _, e := range protoErrs {
		t.Errorf("librdkafka protocol error: %s", e)
	}
	clCheckSeen(t, want, seen)
	t.Logf("consumed per member: %v; commits retried: %d", by, retries)
}
