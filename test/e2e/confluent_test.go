//go:build cgo

package e2e

import (
	"context"
	"strings"
	"sync"
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
	want := clProduceN(t, ctx, b.Addr(), "confluent-topic", 3, n, "c")

	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers":      b.Addr(),
		"group.id":               "confluent-group",
		"client.id":              "confluent-e2e",
		"group.protocol":         "classic",
		"auto.offset.reset":      "earliest",
		"enable.auto.commit":     false,
		"session.timeout.ms":     10000,
		"heartbeat.interval.ms":  1000,
		"fetch.wait.max.ms":      100,
		"broker.address.family":  "v4",
		"log_level":              3,
		"go.logs.channel.enable": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// librdkafka's protocol errors (e.g. a record set it cannot parse) are only logged: fail on them.
	var logMu sync.Mutex
	var protoErrs []string
	go func() {
		for l := range c.Logs() {
			if l.Tag == "PROTOERR" || strings.Contains(l.Message, "Protocol parse failure") {
				logMu.Lock()
				protoErrs = append(protoErrs, l.Message)
				logMu.Unlock()
			}
		}
	}()
	defer func() {
		logMu.Lock()
		defer logMu.Unlock()
		for _, e := range protoErrs {
			t.Errorf("librdkafka protocol error: %s", e)
		}
	}()
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
	clWaitCommitted(t, ctx, b.Addr(), "confluent-group", "confluent-topic", n)
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	clWaitGroupEmpty(t, ctx, b.Addr(), "confluent-group")
	clCheckSeen(t, want, seen)
}
