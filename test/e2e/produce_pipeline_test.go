package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

// TestPipelinedIdempotentProduce: franz-go's idempotent producer pipelines several Produce
// requests on one connection; the broker must handle them in send order (as Kafka does), so no
// batch is refused with OUT_OF_ORDER_SEQUENCE_NUMBER and offsets stay dense.
func TestPipelinedIdempotentProduce(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "pipe"); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("pipe"), kgo.ProducerLinger(0),
		kgo.ProducerBatchMaxBytes(2048))
	const n = 5000
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	wg.Add(n)
	start := time.Now()
	for i := 0; i < n; i++ {
		prod.Produce(ctx, kgo.StringRecord(fmt.Sprintf("%0100d", i)), func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d records failed: %v", failed.Load(), firstErr.Load())
	}
	ends, err := adm.ListEndOffsets(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("pipe", 0)
	if end.Offset != n {
		t.Fatalf("end offset %d, want %d (duplicates or gaps)", end.Offset, n)
	}
	t.Logf("%d records through pipelined idempotent produce in %v", n, time.Since(start))
}
