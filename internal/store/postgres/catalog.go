package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The data plane's catalog in cluster mode: topics (muster_topics: id, name, partition count,
// config overrides as JSON), dynamic broker configs (muster_broker_configs, by resource: "" for
// the cluster default, a node id for one broker) and group configs (muster_group_configs). Every
// change is announced on CatalogChannel; nodes re-read the catalog then, and periodically.

// CatalogChannel is the LISTEN/NOTIFY channel of catalog changes.
const CatalogChannel = "muster_catalog"

// TopicRow is one topic of the catalog.
type TopicRow struct {
	ID         [16]byte
	Name       string
	Partitions int32
	Configs    map[string]string
}

// ErrTopicExists means a topic of the name exists already.
var ErrTopicExists = errors.New("cluster store: a topic of the name exists")

// Topics lists every topic.
func (db *DB) Topics(ctx context.Context) ([]TopicRow, error) {
	var out []TopicRow
	err := db.timed("topics", func() error {
		rows, err := db.pool.Query(ctx, `SELECT id, name, partitions, configs FROM muster_topics ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r TopicRow
			var id []byte
			var cfgs string
			if err := rows.Scan(&id, &r.Name, &r.Partitions, &cfgs); err != nil {
				return err
			}
			if len(id) != 16 {
				return fmt.Errorf("cluster store: topic %q: corrupt id", r.Name)
			}
			r.ID = [16]byte(id)
			if err := json.Unmarshal([]byte(cfgs), &r.Configs); err != nil {
				return fmt.Errorf("cluster store: topic %q: corrupt configs: %w", r.Name, err)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func configsJSON(m map[string]string) string {
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// partitionLeasesSQL creates the (free) lease rows of partitions [0, $2) of kind $1.
const partitionLeasesSQL = `INSERT INTO muster_leases (kind, shard, epoch)
SELECT $1, g, 0 FROM generate_series(0, $2::integer - 1) AS g ON CONFLICT (kind, shard) DO NOTHING`

// CreateTopic adds a topic and the leases of its partitions, in one transaction; ErrTopicExists
// when the name is taken.
func (db *DB) CreateTopic(ctx context.Context, r TopicRow) error {
	err := db.tx(ctx, "create_topic", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO muster_topics (id, name, partitions, configs) VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO NOTHING`, r.ID[:], r.Name, r.Partitions, configsJSON(r.Configs))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrTopicExists
		}
		_, err = tx.Exec(ctx, partitionLeasesSQL, PartitionLeaseKind(r.ID), r.Partitions)
		return err
	})
	if err == nil {
		db.notifyOn(ctx, CatalogChannel, "")
		db.notify(ctx)
	}
	return err
}

// UpdateTopic sets a topic's partition count (creating the new partitions' leases) and configs.
func (db *DB) UpdateTopic(ctx context.Context, r TopicRow) error {
	err := db.tx(ctx, "update_topic", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE muster_topics SET partitions = $2, configs = $3 WHERE id = $1`,
			r.ID[:], r.Partitions, configsJSON(r.Configs)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, partitionLeasesSQL, PartitionLeaseKind(r.ID), r.Partitions)
		return err
	})
	if err == nil {
		db.notifyOn(ctx, CatalogChannel, "")
		db.notify(ctx)
	}
	return err
}

// DeleteTopic removes a topic with its partitions' leases, batches and state, in one
// transaction. Deleting the lease rows waits for the partitions' writes in flight (they hold
// the rows' share locks); writes after it find no lease and are refused.
func (db *DB) DeleteTopic(ctx context.Context, id [16]byte) error {
	err := db.tx(ctx, "delete_topic", func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM muster_leases WHERE kind = $1`, PartitionLeaseKind(id))
		b.Queue(`DELETE FROM muster_batches WHERE topic_id = $1`, id[:])
		b.Queue(`DELETE FROM muster_partition_state WHERE topic_id = $1`, id[:])
		b.Queue(`DELETE FROM muster_topics WHERE id = $1`, id[:])
		return tx.SendBatch(ctx, b).Close()
	})
	if err == nil {
		db.notifyOn(ctx, CatalogChannel, "")
		db.notify(ctx)
	}
	return err
}

// BrokerConfigs returns the dynamic configs of BROKER resource res (nil: none).
func (db *DB) BrokerConfigs(ctx context.Context, res string) (map[string]string, error) {
	var raw string
	err := db.timed("broker_configs", func() error {
		return db.pool.QueryRow(ctx, `SELECT configs FROM muster_broker_configs WHERE resource = $1`, res).Scan(&raw)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("cluster store: broker configs %q: %w", res, err)
	}
	return m, nil
}

// SetBrokerConfigs replaces the dynamic configs of BROKER resource res (empty: removes them).
func (db *DB) SetBrokerConfigs(ctx context.Context, res string, m map[string]string) error {
	var err error
	if len(m) == 0 {
		_, err = db.exec(ctx, "broker_configs", `DELETE FROM muster_broker_configs WHERE resource = $1`, res)
	} else {
		_, err = db.exec(ctx, "broker_configs", `INSERT INTO muster_broker_configs (resource, configs) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET configs = excluded.configs`, res, configsJSON(m))
	}
	if err == nil {
		db.notifyOn(ctx, CatalogChannel, "")
	}
	return err
}

// GroupConfigs returns every group's dynamic configs.
func (db *DB) GroupConfigs(ctx context.Context) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	err := db.timed("group_configs", func() error {
		rows, err := db.pool.Query(ctx, `SELECT group_id, configs FROM muster_group_configs`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var g, raw string
			if err := rows.Scan(&g, &raw); err != nil {
				return err
			}
			m := map[string]string{}
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				return fmt.Errorf("cluster store: group configs of %q: %w", g, err)
			}
			out[g] = m
		}
		return rows.Err()
	})
	return out, err
}

// SetGroupConfigs replaces group's dynamic configs (empty: removes them).
func (db *DB) SetGroupConfigs(ctx context.Context, group string, m map[string]string) error {
	var err error
	if len(m) == 0 {
		_, err = db.exec(ctx, "group_configs", `DELETE FROM muster_group_configs WHERE group_id = $1`, group)
	} else {
		_, err = db.exec(ctx, "group_configs", `INSERT INTO muster_group_configs (group_id, configs) VALUES ($1, $2)
ON CONFLICT (group_id) DO UPDATE SET configs = excluded.configs`, group, configsJSON(m))
	}
	if err == nil {
		db.notifyOn(ctx, CatalogChannel, "")
	}
	return err
}
