package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// TestConfluentConsumerProtocol: two confluent-kafka-go (librdkafka) consumers with
// group.protocol=consumer and the uniform server assignor share a 4-partition topic: each gets
// partitions from the coordinator, every record is consumed exactly once, and the offsets they
// commit are visible through OffsetFetch.
func TestConfluentConsumerProtocol(t *testing.T) {
	b := testutil.Start(t,
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=250")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admCl := newClient(t, b.Addr())
	adm := kadm.NewClient(admCl)
	const topic, group, parts, n = "rdk848", "rdk848-group", 4, 400
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	byConsumer := map[string]map[int32]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for _, name := range []string{"rdk1", "rdk2"} {
		c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
			"bootstrap.servers":                  b.Addr(),
			"group.id":                           group,
			"group.protocol":                     "consumer",
			"group.remote.assignor":              "uniform",
			"client.id":                          name,
			"auto.offset.reset":                  "earliest",
			"enable.auto.commit":                 false,
			"broker.address.family":              "v4",
			"topic.metadata.refresh.interval.ms": 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe(topic, nil); err != nil {
			t.Fatal(err)
		}
		byConsumer[name] = map[int32]bool{}
		wg.Add(1)
		go func(name string, c *ckafka.Consumer) {
			defer wg.Done()
			defer c.Close()
			for {
				select {
				case <-stop:
					if _, err := c.Commit(); err != nil {
						if ke, ok := err.(ckafka.Error); !ok || ke.Code() != ckafka.ErrNoOffset {
							errs <- fmt.Errorf("%s final commit: %w", name, err)
						}
					}
					return
				default:
				}
				ev := c.Poll(100)
				switch e := ev.(type) {
				case *ckafka.Message:
					mu.Lock()
					seen[string(e.Value)]++
					byConsumer[name][e.TopicPartition.Partition] = true
					mu.Unlock()
					if _, err := c.CommitMessage(e); err != nil {
						errs <- fmt.Errorf("%s commit: %w", name, err)
					}
				case ckafka.Error:
					if e.IsFatal() {
						errs <- fmt.Errorf("%s fatal: %w", name, e)
						return
					}
					t.Logf("%s: %v", name, e)
				}
			}
		}(name, c)
	}
	// The coordinator splits the partitions: each member is assigned 2 (ConsumerGroupDescribe).
	waitFor(t, "2 partitions per librdkafka consumer", 30*time.Second, func() bool {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := req.RequestWith(ctx, admCl)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 || len(resp.Groups[0].Members) != 2 {
			return false
		}
		for _, m := range resp.Groups[0].Members {
			k := 0
			for _, tp := range m.Assignment.TopicPartitions {
				k += len(tp.Partitions)
			}
			if k != 2 {
				return false
			}
		}
		return true
	})
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < n; i++ {
		r := kgo.StringRecord(fmt.Sprintf("r%d", i))
		r.Partition = int32(i % parts)
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		got, both := len(seen), len(byConsumer["rdk1"]) > 0 && len(byConsumer["rdk2"]) > 0
		mu.Unlock()
		if got == n && both {
			break
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d records", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mu.Lock()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
	mu.Unlock()

	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < parts; p++ {
		o, ok := offs.Lookup(topic, p)
		if !ok || o.Err != nil || o.At != n/parts {
			t.Errorf("committed offset of %s/%d: %+v (ok=%v), want %d", topic, p, o, ok, n/parts)
		}
	}
}

// TestConfluentMixedProtocols: a librdkafka consumer-protocol member and a librdkafka classic
// member (eager range assignor) share one consumer group; the server assigns both, every record
// is consumed once and both members' commits are visible.
func TestConfluentMixedProtocols(t *testing.T) {
	b := testutil.Start(t,
		"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=250",
		"group.consumer.assignment.interval.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admCl := newClient(t, b.Addr())
	adm := kadm.NewClient(admCl)
	const topic, group, parts, n = "rdkmixed", "rdkmixed-group", 4, 200
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	start := func(name string, extra ckafka.ConfigMap) {
		cfg := ckafka.ConfigMap{
			"bootstrap.servers":     b.Addr(),
			"group.id":              group,
			"client.id":             name,
			"auto.offset.reset":     "earliest",
			"enable.auto.commit":    false,
			"broker.address.family": "v4",
		}
		for k, v := range extra {
			cfg[k] = v
		}
		c, err := ckafka.NewConsumer(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe(topic, nil); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch e := c.Poll(100).(type) {
				case *ckafka.Message:
					mu.Lock()
					seen[string(e.Value)]++
					mu.Unlock()
					if _, err := c.CommitMessage(e); err != nil {
						errs <- fmt.Errorf("%s commit: %w", name, err)
					}
				case ckafka.Error:
					if e.IsFatal() {
						errs <- fmt.Errorf("%s fatal: %w", name, e)
						return
					}
				}
			}
		}()
	}
	members := func() map[int8][]int {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Version = 1
		req.Groups = []string{group}
		resp, err := req.RequestWith(ctx, admCl)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			return nil
		}
		out := map[int8][]int{}
		for _, m := range resp.Groups[0].Members {
			k := 0
			for _, tp := range m.Assignment.TopicPartitions {
				k += len(tp.Partitions)
			}
			out[m.MemberType] = append(out[m.MemberType], k)
		}
		return out
	}
	start("rdk-consumer", ckafka.ConfigMap{"group.protocol": "consumer"})
	waitFor(t, "consumer-protocol member owns all", 30*time.Second, func() bool {
		m := members()
		return len(m[1]) == 1 && m[1][0] == parts
	})
	start("rdk-classic", ckafka.ConfigMap{"group.protocol": "classic", "partition.assignment.strategy": "range",
		"session.timeout.ms": 6000, "heartbeat.interval.ms": 300})
	waitFor(t, "2 partitions per member", 30*time.Second, func() bool {
		m := members()
		return len(m[0]) == 1 && len(m[1]) == 1 && m[0][0] == 2 && m[1][0] == 2
	})
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < n; i++ {
		r := kgo.StringRecord(fmt.Sprintf("r%d", i))
		r.Partition = int32(i % parts)
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	waitFor(t, "every record consumed", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	waitFor(t, "every commit visible", 10*time.Second, func() bool {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		for p := int32(0); p < parts; p++ {
			if o, ok := offs.Lookup(topic, p); !ok || o.At != n/parts {
				return false
			}
		}
		return true
	})
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
}
