package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Topologies is the KIP-1331 topology descriptions table of cluster mode (topodesc.Table):
// one row per streams group, its latest epoch and canonical JSON description.
type Topologies struct{ db *DB }

// Topologies returns the shared topology descriptions table.
func (db *DB) Topologies() *Topologies { return &Topologies{db: db} }

// PutTopology implements topodesc.Table.
func (t *Topologies) PutTopology(ctx context.Context, group string, epoch int32, description []byte) error {
	_, err := t.db.exec(ctx, "topology_put", `INSERT INTO muster_topology_descriptions (group_id, epoch, description)
VALUES ($1, $2, $3) ON CONFLICT (group_id) DO UPDATE SET epoch = excluded.epoch, description = excluded.description`,
		group, epoch, description)
	return err
}

// GetTopology implements topodesc.Table.
func (t *Topologies) GetTopology(ctx context.Context, group string) (int32, []byte, bool, error) {
	var epoch int32
	var d []byte
	err := t.db.timed("topology_get", func() error {
		return t.db.pool.QueryRow(ctx, `SELECT epoch, description FROM muster_topology_descriptions WHERE group_id = $1`, group).Scan(&epoch, &d)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, false, nil
	}
	return epoch, d, err == nil, err
}

// DeleteTopology implements topodesc.Table.
func (t *Topologies) DeleteTopology(ctx context.Context, group string) error {
	_, err := t.db.exec(ctx, "topology_delete", `DELETE FROM muster_topology_descriptions WHERE group_id = $1`, group)
	return err
}
