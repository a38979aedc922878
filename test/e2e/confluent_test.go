//go:build cgo

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/muster-io/muster/internal/testutil"
)

// TestConfluentConsumerGroup: a confluent-kafka-go (bundled librdkafka) classic consumer group
// consumes every record once with synchronous commits; the committed offsets are visible to kadm.
func TestConfluentConsumerGroup(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 200
	want := produceN(t, ctx, b.Addr(), "confluent-topic", 3, n, "c")

	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers":     b.Addr(),
		"group.id":              "confluent-group",
		"client.id":             "confluent-e2e",
		"group.protocol":        "classic",
		"auto.offset.reset":     "earliest",
		"enable.auto.commit":    false,
		"session.timeout.ms":    10000,
		"heartbeat.interval.ms": 1000,
		"fetch.wait.max.ms":     100,
		"broker.address.family": "v4",
		"log_level":             3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SubscribeTopics([]string{"confluent-topic"}, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for len(seen) < n && ctx.Err() == nil {
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				t.Fatalf("message error: %v", e.TopicPartition.Error)
			}
			seen[string(e.Value)]++
			if _, err := c.CommitMessage(e); err != nil {
				t.Fatalf("commit: %v", err)
			}
		case kafka.Error:
			if e.IsFatal() {
				t.Fatalf("fatal: %v", e)
			}
			t.Logf("librdkafka: %v", e)
		}
	}
	waitCommitted(t, ctx, b.Addr(), "confluent-group", "confluent-topic", n)
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	waitGroupEmpty(t, ctx, b.Addr(), "confluent-group")
	checkSeen(t, want, seen)
}
