package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestIdleTimeout: an idle connection, a stalled half frame and a client that half-closes
// without reading are all closed after the idle timeout.
func TestIdleTimeout(t *testing.T) {
	s := New(Options{IdleTimeout: 200 * time.Millisecond}, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	closed := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: not closed after the idle timeout", what)
		}
	}
	idle, _ := net.Dial("tcp", ln.Addr().String())
	defer idle.Close()
	half, _ := net.Dial("tcp", ln.Addr().String())
	defer half.Close()
	half.Write(append(binary.BigEndian.AppendUint32(nil, 1000), 0, 18, 0, 0))
	closed(idle, "idle connection")
	closed(half, "stalled half frame")
	for deadline := time.Now().Add(5 * time.Second); s.Stats.ConnectionsOpen.Load() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open", s.Stats.ConnectionsOpen.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIdleTimeoutSparesPendingRequests: a connection waiting for a slow response is not idle.
func TestIdleTimeoutSparesPendingRequests(t *testing.T) {
	s := New(Options{IdleTimeout: 100 * time.Millisecond}, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	s.Handle(12, func(ctx context.Context, r *Request) kmsg.Response { // Heartbeat, held
		<-release
		return r.Body.ResponseKind()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 0
	req.Group, req.MemberID = "g", "m"
	var b []byte
	b = binary.BigEndian.AppendUint16(b, 12)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, 42)
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = req.AppendTo(b)
	c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	time.Sleep(500 * time.Millisecond) // five idle timeouts while the handler holds the request
	close(release)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		t.Fatalf("connection with a pending request was closed as idle: %v", err)
	}
}
