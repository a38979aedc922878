package server_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/server"
)

// An ordered request (Produce) holds up the connection's next ordered request only until it
// calls Request.Sequenced; responses still leave in request order.
func TestSequencedLetsTheNextOrderedRequestStart(t *testing.T) {
	s := server.New(server.Options{MaxRequestBytes: 1 << 20, MaxInflightBytes: 1 << 30}, slog.New(slog.DiscardHandler))
	started := make(chan int32, 4)
	release := make(chan struct{})
	s.Handle(0, func(ctx context.Context, r *server.Request) kmsg.Response {
		req := r.Body.(*kmsg.ProduceRequest)
		started <- req.TimeoutMillis
		if req.TimeoutMillis == 1 {
			r.Sequenced()
			<-release // the first waits (for its sync) after its ordered part
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		resp.ThrottleMillis = req.TimeoutMillis
		return resp
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeListener(ln, &server.Listener{Name: "PLAINTEXT", Protocol: security.Plaintext})
	t.Cleanup(s.Close)
	c := dial(t, ln.Addr().String())
	for corr := int32(1); corr <= 2; corr++ {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 7, -1, corr
		if _, err := c.Write(frame(0, 7, corr, "x", nil, req.AppendTo(nil))); err != nil {
			t.Fatal(err)
		}
	}
	for want := int32(1); want <= 2; want++ {
		select {
		case got := <-started:
			if got != want {
				t.Fatalf("request %d started, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d did not start while the first waits after Sequenced", want)
		}
	}
	close(release)
	for corr := int32(1); corr <= 2; corr++ {
		readResponse(t, c, corr) // in request order
	}
}
