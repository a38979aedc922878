package broker

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/config"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A start-up failure after the Kafka listener is up (here: the HTTP port is taken) returns at
// once with the reason; it used to hang in Close waiting for a Serve that had not started.
func TestStartFailsFastWhenHTTPPortIsTaken(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	done := make(chan error, 1)
	go func() {
		b, err := Start(Options{Listen: "127.0.0.1:0", HTTPListen: busy.Addr().String(), DataDir: t.TempDir(),
			Config: config.Defaults("offsets.topic.num.partitions=2"), Log: quiet()})
		if b != nil {
			b.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "http listen") {
			t.Fatalf("err = %v, want an http listen error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Start hung when the HTTP port was taken")
	}
}

// A second broker on a data dir in use says so, rather than calling the dir corrupt.
func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Defaults("offsets.topic.num.partitions=2")
	b, err := Start(Options{Listen: "127.0.0.1:0", DataDir: dir, Config: cfg, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = Start(Options{Listen: "127.0.0.1:0", DataDir: dir, Config: cfg, Log: quiet()})
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second broker on the same dir: %v", err)
	}
}
