// Package testutil starts real muster brokers for tests: in-process on loopback with a real
// Pebble data dir, or as a `muster serve` child process.
package testutil

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/broker"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator/engine"
)

// Broker is an in-process broker bound to 127.0.0.1:0.
type Broker struct {
	*broker.Broker
	DataDir string
	t       testing.TB
	opts    broker.Options
}

// Start starts a broker on a fresh data dir with the given config overrides (key=value). The
// initial rebalance delay defaults to 0 in tests unless overridden, and the free-space guard
// keeps 32 MiB free rather than the production 1 GiB / 5 % (a test machine's busy disk must not
// run every test degraded); the guard's own tests set their thresholds. With a clock (StartIn,
// StartLogged) records may carry timestamps any time after it (wall-clock producers).
func Start(t testing.TB, overrides ...string) *Broker {
	return StartIn(t, t.TempDir(), nil, overrides...)
}

// StartIn starts a broker on dir (reuse a dir to test restarts); clock may be nil.
func StartIn(t testing.TB, dir string, clock engine.Clock, overrides ...string) *Broker {
	t.Helper()
	return StartLogged(t, dir, clock, nil, overrides...)
}

// StartLogged is StartIn with the broker's log (text, debug level) written to log as well (nil:
// only to stderr when MUSTER_TEST_LOG is set). log must be safe for concurrent writes.
func StartLogged(t testing.TB, dir string, clock engine.Clock, log io.Writer, overrides ...string) *Broker {
	t.Helper()
	defaults := []string{"group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=8",
		"transaction.state.log.num.partitions=8",
		"muster.storage.min.free.bytes=33554432", "muster.storage.min.free.ratio=0"}
	if clock != nil {
		// Clients stamp records with the wall clock, which a manual clock may trail by far more
		// than the hour message.timestamp.after.max.ms allows by default.
		defaults = append(defaults, "log.message.timestamp.after.max.ms=9223372036854775807")
	}
	all := append(defaults, overrides...)
	vals, err := config.Parse(nil, all)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	var w io.Writer = io.Discard
	if os.Getenv("MUSTER_TEST_LOG") != "" {
		w = os.Stderr
	}
	if log != nil {
		w = io.MultiWriter(w, log)
	}
	listen := "127.0.0.1:0"
	if vals.IsSet("listeners") {
		listen = ""
	}
	opts := broker.Options{Listen: listen, HTTPListen: "127.0.0.1:0", DataDir: dir, Config: vals,
		Log: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})), Clock: clock}
	b, err := broker.Start(opts)
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	tb := &Broker{Broker: b, DataDir: dir, t: t, opts: opts}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.WaitReady(ctx); err != nil {
		t.Fatalf("broker not ready: %v", err)
	}
	return tb
}

// Restart closes the broker and starts a new one on the same data dir and config.
func (b *Broker) Restart() *Broker {
	b.t.Helper()
	b.Broker.Close()
	nb, err := broker.Start(b.opts)
	if err != nil {
		b.t.Fatalf("restart broker: %v", err)
	}
	b.t.Cleanup(func() { nb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := nb.WaitReady(ctx); err != nil {
		b.t.Fatalf("broker not ready: %v", err)
	}
	return &Broker{Broker: nb, DataDir: b.DataDir, t: b.t, opts: b.opts}
}
