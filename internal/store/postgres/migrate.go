package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrSchemaTooNew means the database was migrated by a newer muster: this one refuses to run
// against it rather than misread tables it does not know.
var ErrSchemaTooNew = errors.New("cluster store: the database schema is newer than this muster")

// migrations are the schema's versions in order: migrations[i] takes the schema from version i
// to i+1. Released migrations never change; a new version appends one.
var migrations = []string{
	// 1: the node registry, coordinator leases and records, and the shared security state.
	`
CREATE TABLE muster_cluster (
	name  text PRIMARY KEY,
	value text NOT NULL
);
CREATE TABLE muster_nodes (
	node_id     integer PRIMARY KEY,
	incarnation bigint NOT NULL,
	rack        text NOT NULL DEFAULT '',
	endpoints   text NOT NULL,
	draining    boolean NOT NULL DEFAULT false,
	started_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
);
CREATE TABLE muster_leases (
	kind        text NOT NULL,
	shard       integer NOT NULL,
	epoch       bigint NOT NULL DEFAULT 0,
	owner       integer,
	owner_inc   bigint,
	acquired_at timestamptz,
	PRIMARY KEY (kind, shard)
);
CREATE TABLE muster_records (
	kind  text NOT NULL,
	shard integer NOT NULL,
	k     bytea NOT NULL,
	v     bytea NOT NULL,
	PRIMARY KEY (kind, shard, k)
);
CREATE TABLE muster_acls (
	id      bytea PRIMARY KEY,
	binding text NOT NULL
);
CREATE TABLE muster_scram (
	mechanism  smallint NOT NULL,
	username   text NOT NULL,
	credential text NOT NULL,
	PRIMARY KEY (mechanism, username)
);
CREATE TABLE muster_producer_ids (
	id   integer PRIMARY KEY,
	next bigint NOT NULL
);
CREATE TABLE muster_group_configs (
	group_id text PRIMARY KEY,
	configs  text NOT NULL
);
CREATE TABLE muster_topology_descriptions (
	group_id    text PRIMARY KEY,
	epoch       integer NOT NULL,
	description bytea NOT NULL
);
`,
	// 2: the data plane: topics, partitions (log start offsets), record batches and
	// idempotent-producer state, written by each partition's leader under its lease epoch.
	`
CREATE TABLE muster_topics (
	id         bytea PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	partitions integer NOT NULL,
	configs    text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE muster_partitions (
	topic_id  bytea NOT NULL,
	partition integer NOT NULL,
	log_start bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (topic_id, partition)
);
CREATE TABLE muster_batches (
	topic_id  bytea NOT NULL,
	partition integer NOT NULL,
	base      bigint NOT NULL,
	last      bigint NOT NULL,
	max_ts    bigint NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (topic_id, partition, base)
);
-- Record batches arrive compressed by their producers: no second compression in TOAST.
ALTER TABLE muster_batches ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE muster_producers (
	topic_id    bytea NOT NULL,
	partition   integer NOT NULL,
	producer_id bigint NOT NULL,
	base        bigint NOT NULL,
	epoch       smallint NOT NULL,
	first_seq   integer NOT NULL,
	last_delta  integer NOT NULL,
	append_ms   bigint NOT NULL,
	PRIMARY KEY (topic_id, partition, producer_id, base)
);
`,
	// 3: KIP-1331 descriptions of two topology epochs per group (the current one and the
	// previous one while a rolling upgrade is in progress).
	`
ALTER TABLE muster_topology_descriptions DROP CONSTRAINT muster_topology_descriptions_pkey;
ALTER TABLE muster_topology_descriptions ADD PRIMARY KEY (group_id, epoch);
`,
}

// SchemaVersion is the schema version this muster creates and understands.
var SchemaVersion = len(migrations)

// migrate brings the schema to SchemaVersion. Concurrent nodes serialize on the version row's
// lock; each migration runs in one transaction with the version bump.
func (db *DB) migrate(ctx context.Context) error {
	// The version table itself; two nodes creating it at once: one wins, the other sees it.
	for try := 0; ; try++ {
		_, err := db.exec(ctx, "migrate", `CREATE TABLE IF NOT EXISTS muster_schema (id integer PRIMARY KEY, version integer NOT NULL)`)
		if err == nil {
			break
		}
		if try == 3 {
			return fmt.Errorf("cluster store: creating the schema table: %w", err)
		}
	}
	if _, err := db.exec(ctx, "migrate", `INSERT INTO muster_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
		return fmt.Errorf("cluster store: %w", err)
	}
	return db.tx(ctx, "migrate", func(tx pgx.Tx) error {
		var v int
		if err := tx.QueryRow(ctx, `SELECT version FROM muster_schema WHERE id = 1 FOR UPDATE`).Scan(&v); err != nil {
			return fmt.Errorf("cluster store: reading the schema version: %w", err)
		}
		if v > SchemaVersion {
			return fmt.Errorf("%w: database at version %d, this muster knows up to %d; upgrade muster", ErrSchemaTooNew, v, SchemaVersion)
		}
		for ; v < SchemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("cluster store: migration %d: %w", v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE muster_schema SET version = $1 WHERE id = 1`, v); err != nil {
			return fmt.Errorf("cluster store: %w", err)
		}
		return nil
	})
}

// ClusterValue returns the value stored under name, creating it as def when absent (the first
// node to start fixes a cluster-wide setting such as a coordinator's shard count).
func (db *DB) ClusterValue(ctx context.Context, name, def string) (string, error) {
	if _, err := db.exec(ctx, "cluster_value", `INSERT INTO muster_cluster (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, def); err != nil {
		return "", err
	}
	var v string
	err := db.timed("cluster_value", func() error {
		return db.pool.QueryRow(ctx, `SELECT value FROM muster_cluster WHERE name = $1`, name).Scan(&v)
	})
	return v, err
}

// ErrNoSchema means the database has no muster schema yet (no node ever ran on it).
var ErrNoSchema = errors.New("cluster store: the database has no muster schema (no muster node has run on it)")

// checkSchema verifies that the schema exists and is no newer than this muster's.
func (db *DB) checkSchema(ctx context.Context) error {
	var v int
	err := db.timed("schema", func() error {
		return db.pool.QueryRow(ctx, `SELECT version FROM muster_schema WHERE id = 1`).Scan(&v)
	})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" || errors.Is(err, pgx.ErrNoRows) { // undefined_table
			return ErrNoSchema
		}
		return fmt.Errorf("cluster store: reading the schema version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: database at version %d, this muster knows up to %d", ErrSchemaTooNew, v, SchemaVersion)
	}
	return nil
}
