package server

import (
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
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
