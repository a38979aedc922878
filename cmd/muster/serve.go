package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/broker"
	"github.com/muster-io/muster/internal/cli/consumergroups"
	"github.com/muster-io/muster/internal/cli/streamsgroups"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/console"
)

// startupGrace is how long a signal during start-up waits for start-up to finish, so that the
// broker then stops cleanly.
const startupGrace = 10 * time.Second

func serveCommand() *cobra.Command {
	var (
		listen, dataDir, httpListen, configFile, logLevel, storeURL string
		overrides                                                   []string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the broker on the embedded durable store",
		Long: `Run muster: a Kafka listener, the group coordinator and the data plane on an embedded
Pebble store in --data-dir. Broker config uses Kafka's key names, from --config (server.properties
syntax) and repeatable --override key=value (later wins). An unknown key or a bad value stops
start-up with every problem listed at once (exit 1). SIGTERM/SIGINT stop gracefully.

Cluster mode: --store postgres://user@host:port/db (or cluster.store.url) makes this node one of
several that share the group coordinator, ACLs and SCRAM credentials through that PostgreSQL
database; the coordinator's shards are leased to the live nodes (cluster.lease.ttl.ms) and a
stopping node hands its shards over first. Each node keeps its own node.id, listeners and
--data-dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return exitErr(1, fmt.Sprintf("--log-level %q: want debug, info, warn or error", logLevel))
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
			if storeURL != "" {
				overrides = append(overrides, "cluster.store.url="+storeURL)
			}
			vals, err := config.ParseFile(configFile, overrides)
			if err != nil {
				msg := "invalid configuration:\n  " + strings.ReplaceAll(err.Error(), "\n", "\n  ")
				return exitErr(1, msg)
			}
			// Catch SIGTERM/SIGINT before starting, so a signal during start-up still shuts down
			// cleanly once the broker is up.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if !cmd.Flags().Changed("listen") && vals.IsSet("listeners") {
				listen = "" // the config names the listeners
			}
			// Start waits for the store to open, which waits for free space when the disk is
			// full (Pebble flushes its WAL first). A signal meanwhile gives start-up a few
			// seconds to finish, then the broker closes cleanly; a start-up still stuck after
			// that ends the process (nothing was acknowledged yet, and the store recovers from
			// its files).
			type started struct {
				b   *broker.Broker
				err error
			}
			ch := make(chan started, 1)
			go func() {
				b, err := broker.Start(broker.Options{Listen: listen, HTTPListen: httpListen, DataDir: dataDir, Config: vals, Log: log,
					Tools: console.Tools{ConsumerGroups: consumergroups.NewCommand, StreamsGroups: streamsgroups.NewCommand}, Ctx: ctx})
				ch <- started{b, err}
			}()
			var b *broker.Broker
			select {
			case r := <-ch:
				if r.err != nil {
					return exitErr(1, r.err.Error())
				}
				b = r.b
			case <-ctx.Done():
				select {
				case r := <-ch:
					if r.err != nil {
						return exitErr(1, "interrupted during start-up: "+r.err.Error())
					}
					b = r.b
				case <-time.After(startupGrace):
					return exitErr(1, "interrupted during start-up")
				}
			}
			<-ctx.Done()
			log.Info("shutting down")
			if err := b.Close(); err != nil {
				return exitErr(1, "closing the store: "+err.Error())
			}
			log.Info("stopped; every acknowledged write is on disk")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:9092", "address of one PLAINTEXT Kafka listener (a shortcut for listeners=PLAINTEXT://ADDR; not with listeners)")
	f.StringVar(&dataDir, "data-dir", "./muster-data", "directory of the durable store")
	f.StringVar(&httpListen, "http-listen", "127.0.0.1:9644", "HTTP address for /healthz, /readyz and /metrics (empty: off)")
	f.StringVar(&configFile, "config", "", "broker config file (Kafka server.properties syntax)")
	f.StringArrayVar(&overrides, "override", nil, "broker config override key=value (repeatable)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&storeURL, "store", "", "cluster mode: postgres:// URL of the database the nodes share (sets cluster.store.url)")
	return cmd
}

type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
func (e *exitError) ExitCode() int {
	fmt.Fprintln(os.Stderr, "Error:", e.msg)
	return e.code
}

func exitErr(code int, msg string) error { return &exitError{code, msg} }
