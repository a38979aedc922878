package e2e

import (
	"context"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/muster-io/muster/internal/testutil"
)

// TestKafkaGoReaderGroup: a segmentio/kafka-go Reader in a consumer group (FindCoordinator v0,
// JoinGroup v2, SyncGroup v0, OffsetCommit v2) consumes every record once with synchronous
// commits; the committed offsets are visible to kadm.
func TestKafkaGoReaderGroup(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 200
	want := clProduceN(t, ctx, b.Addr(), "kafkago-topic", 2, n, "k")

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{b.Addr()},
		GroupID:           "kafkago-group",
		Topic:             "kafkago-topic",
		StartOffset:       kafka.FirstOffset,
		MinBytes:          1,
		MaxBytes:          1 << 20,
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: time.Second,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		CommitInterval:    0, // synchronous commits
	})
	seen := map[string]int{}
	for len(seen) < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("fetch after %d records: %v", len(seen), err)
		}
		seen[string(m.Value)]++
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	clWaitCommitted(t, ctx, b.Addr(), "kafkago-group", "kafkago-topic", n)
	if err := r.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	clWaitGroupEmpty(t, ctx, b.Addr(), "kafkago-group")
	clCheckSeen(t, want, seen)
}
