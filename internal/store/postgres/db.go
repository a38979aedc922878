// Package postgres is muster's shared store for cluster mode: several muster nodes over one
// PostgreSQL database (or a PostgreSQL-compatible one; the SQL sticks to what CockroachDB and
// YugabyteDB also run). It holds the node registry, the leases of coordinator shards with their
// fencing epochs, the coordinators' records (the latest value per key, like the Pebble store),
// and what every node shares: ACLs, SCRAM credentials, producer-id blocks, group configs and
// KIP-1331 topology descriptions.
//
// muster creates and migrates the schema itself (migrate.go) and refuses to run against a schema
// newer than it knows. Time that decides a lease (expiry) is always the database's clock, never
// a node's.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Observer is told the duration and outcome of every SQL round trip, by operation name
// (metrics: muster_store_sql_seconds).
type Observer func(op string, d time.Duration, err error)

// DB is a pool of connections to the shared database.
type DB struct {
	pool    *pgxpool.Pool
	observe Observer
	url     string
}

// Options configure Open.
type Options struct {
	// MaxConns bounds the pool (default 32).
	MaxConns int32
	// Observe, when set, sees every SQL round trip.
	Observe Observer
	// NoMigrate opens without creating or migrating the schema (tools that only read): the
	// schema must exist and be no newer than this muster's.
	NoMigrate bool
}

// Open connects to url (postgres://...), creates or migrates the schema and returns the pool.
// A database whose schema is newer than this muster's refuses to open (ErrSchemaTooNew).
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("cluster.store.url: %w", err)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 32
	}
	cfg.MaxConns = opts.MaxConns
	cfg.MinConns = 2
	cfg.HealthCheckPeriod = 5 * time.Second
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "muster"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cluster store: connecting to PostgreSQL at %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	db := &DB{pool: pool, observe: opts.Observe, url: url}
	check := db.migrate
	if opts.NoMigrate {
		check = db.checkSchema
	}
	if err := check(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close closes every connection.
func (db *DB) Close() { db.pool.Close() }

// Pool is the connection pool (tests and tools).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// URL is the connection URL the DB was opened with.
func (db *DB) URL() string { return db.url }

// timed runs fn and reports its duration under op.
func (db *DB) timed(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	if db.observe != nil {
		db.observe(op, time.Since(start), err)
	}
	return err
}

// exec runs one statement.
func (db *DB) exec(ctx context.Context, op, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := db.timed(op, func() error {
		var err error
		tag, err = db.pool.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// tx runs fn in one transaction (committed when fn returns nil).
func (db *DB) tx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	return db.timed(op, func() error { return pgx.BeginFunc(ctx, db.pool, fn) })
}

// IsUnavailable reports whether err means the database could not be reached or the statement's
// outcome is unknown (a retry may succeed), as opposed to a refusal by the database.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P: operator intervention (shutdown); 53: resources.
		c := pe.Code
		return len(c) >= 2 && (c[:2] == "08" || c[:2] == "53" || c[:3] == "57P" || c == "40001" || c == "40P01")
	}
	return true
}
