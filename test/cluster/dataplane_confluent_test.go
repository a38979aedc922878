package cluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// startConfluentProducer produces unique values "c<n>" to topic with an idempotent
// confluent-kafka-go (librdkafka) producer, acks=all, one record every interval, and
// remembers where each acknowledged record went.
func startConfluentProducer(t *testing.T, seeds []string, topic string, every time.Duration) *producer {
	t.Helper()
	pr, err := ckafka.NewProducer(&ckafka.ConfigMap{
		"bootstrap.servers":                  strings.Join(seeds, ","),
		"enable.idempotence":                 true,
		"acks":                               "all",
		"linger.ms":                          5,
		"message.timeout.ms":                 0, // retry until acknowledged
		"broker.address.family":              "v4",
		"retry.backoff.ms":                   50,
		"retry.backoff.max.ms":               200,
		"topic.metadata.refresh.interval.ms": 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &producer{ledger: newLedger(), acked: map[string]pos{}, errs: map[string]int{}, done: make(chan struct{})}
	events := make(chan struct{})
	go func() {
		defer close(events)
		for ev := range pr.Events() {
			m, ok := ev.(*ckafka.Message)
			if !ok {
				continue
			}
			v := string(m.Value)
			if m.TopicPartition.Error != nil {
				p.mu.Lock()
				p.errs[m.TopicPartition.Error.Error()]++
				p.mu.Unlock()
				continue
			}
			at := pos{m.TopicPartition.Partition, int64(m.TopicPartition.Offset)}
			p.ledger.note(at, v)
			p.mu.Lock()
			p.acked[v] = at
			p.mu.Unlock()
		}
	}()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
			v := fmt.Sprintf("c%08d", i)
			for {
				err := pr.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: ckafka.PartitionAny},
					Key: []byte(v), Value: []byte(v)}, nil)
				if err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond) // queue full
			}
		}
	}()
	p.finish = func(t *testing.T) {
		if left := pr.Flush(30000); left > 0 {
			t.Logf("confluent producer: %d records unacknowledged at the end (not required)", left)
		}
		pr.Close()
		<-events
	}
	return p
}

// startConfluentGroup runs one confluent-kafka-go consumer of a KIP-848 group
// (group.protocol=consumer) on topic, recording every record it receives.
func startConfluentGroup(t *testing.T, seeds []string, topic, group string) *groupConsumers {
	t.Helper()
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers":                  strings.Join(seeds, ","),
		"group.id":                           group,
		"group.protocol":                     "consumer",
		"auto.offset.reset":                  "earliest",
		"enable.auto.commit":                 true,
		"auto.commit.interval.ms":            500,
		"broker.address.family":              "v4",
		"topic.metadata.refresh.interval.ms": 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, nil); err != nil {
		t.Fatal(err)
	}
	g := &groupConsumers{group: group, ledger: newLedger(), seen: map[string]bool{}, stopc: make(chan struct{})}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			select {
			case <-g.stopc:
				return
			default:
			}
			if m, ok := c.Poll(100).(*ckafka.Message); ok && m.TopicPartition.Error == nil {
				g.ledger.note(pos{m.TopicPartition.Partition, int64(m.TopicPartition.Offset)}, string(m.Value))
				g.mu.Lock()
				g.seen[string(m.Value)] = true
				g.mu.Unlock()
			}
		}
	}()
	g.closers = append(g.closers, func() { c.Close() })
	return g
}
