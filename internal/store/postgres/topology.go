package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Topologies is the KIP-1331 topology descriptions table of cluster mode (topodesc.Table):
// one row per streams group and topology epoch, its canonical JSON description.
type Topologies struct{ db *DB }

// Topologies returns the shared topology descriptions table.
func (db *DB) Topologies() *Topologies { return &Topologies{db: db} }

// PutTopology implements topodesc.Table: it stores the row of (group, epoch) and deletes the
// group's rows of the epochs in drop, in one transaction.
func (t *Topologies) PutTopology(ctx context.Context, group string, epoch int32, description []byte, drop []int32) error {
	_, err := t.db.exec(ctx, "topology_put", `WITH put AS (
	INSERT INTO muster_topology_descriptions (group_id, epoch, description) VALUES ($1, $2, $3)
	ON CONFLICT (group_id, epoch) DO UPDATE SET description = excluded.description
)
DELETE FROM muster_topology_descriptions WHERE group_id = $1 AND epoch = ANY($4)`,
		group, epoch, description, drop)
	return err
}

// GetTopology implements topodesc.Table.
func (t *Topologies) GetTopology(ctx context.Context, group string, epoch int32) ([]byte, bool, error) {
	var d []byte
	err := t.db.timed("topology_get", func() error {
		return t.db.pool.QueryRow(ctx, `SELECT description FROM muster_topology_descriptions WHERE group_id = $1 AND epoch = $2`,
			group, epoch).Scan(&d)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return d, err == nil, err
}

// TopologyEpochs implements topodesc.Table: the group's stored epochs, ascending.
func (t *Topologies) TopologyEpochs(ctx context.Context, group string) ([]int32, error) {
	out := []int32{}
	err := t.db.timed("topology_epochs", func() error {
		rows, err := t.db.pool.Query(ctx, `SELECT epoch FROM muster_topology_descriptions WHERE group_id = $1 ORDER BY epoch`, group)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e int32
			if err := rows.Scan(&e); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// DeleteTopology implements topodesc.Table: every epoch of the group, or one (epoch ≥ 0).
func (t *Topologies) DeleteTopology(ctx context.Context, group string, epoch int32) error {
	_, err := t.db.exec(ctx, "topology_delete", `DELETE FROM muster_topology_descriptions WHERE group_id = $1 AND ($2 < 0 OR epoch = $2)`, group, epoch)
	return err
}
