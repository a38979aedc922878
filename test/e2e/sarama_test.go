package e2e

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/muster-io/muster/internal/testutil"
)

type clSaramaHandler struct {
	mu   sync.Mutex
	seen map[string]int
}

func (h *clSaramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *clSaramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *clSaramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		h.mu.Lock()
		h.seen[string(msg.Value)]++
		h.mu.Unlock()
		sess.MarkMessage(msg, "")
	}
	return nil
}

func (h *clSaramaHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// TestSaramaConsumerGroup: an IBM/sarama consumer group (protocol version 4.0: JoinGroup v5,
// SyncGroup v3, OffsetCommit v7) consumes every record once and commits; the committed offsets
// are visible to kadm.
func TestSaramaConsumerGroup(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 300
	want := clProduceN(t, ctx, b.Addr(), "sarama-topic", 3, n, "s")

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.ClientID = "sarama-e2e"
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = time.Second
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cg, err := sarama.NewConsumerGroup([]string{b.Addr()}, "sarama-group", cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &clSaramaHandler{seen: map[string]int{}}
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		for cctx.Err() == nil {
			if err := cg.Consume(cctx, []string{"sarama-topic"}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for h.count() < n && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	clWaitCommitted(t, ctx, b.Addr(), "sarama-group", "sarama-topic", n)
	ccancel()
	if err := <-done; err != nil {
		t.Fatalf("consume: %v", err)
	}
	if err := cg.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	clWaitGroupEmpty(t, ctx, b.Addr(), "sarama-group")
	clCheckSeen(t, want, h.seen)
}
