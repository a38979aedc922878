package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/server"
)

// BenchmarkObserveRequest is the request-metrics cost of one ConsumerGroupHeartbeat (the server
// adds up to four clock reads).
func BenchmarkObserveRequest(b *testing.B) {
	m := newRequestMetrics()
	now := server.Mono()
	t := server.RequestTiming{Key: 68, Version: 1, Response: kmsg.NewPtrConsumerGroupHeartbeatResponse(),
		Received: now, Started: now + time.Microsecond, Finished: now + 20*time.Microsecond, Sent: now + 25*time.Microsecond}
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest(t)
	}
}

func BenchmarkMono(b *testing.B) {
	for b.Loop() {
		_ = server.Mono()
	}
}
