package postgres

import (
	"context"
	"errors"
)

// ProducerIDBlockSize is how many producer ids a node takes at a time (Kafka's
// ProducerIdManager hands out blocks of 1000 too).
const ProducerIDBlockSize = 1000

// AllocateProducerIDs reserves n consecutive producer ids for this node and returns the first:
// one atomic update of a counter every node shares, so no id is handed out twice in the
// cluster, whatever the nodes do concurrently.
func (db *DB) AllocateProducerIDs(ctx context.Context, n int64) (int64, error) {
	if n <= 0 {
		return 0, errors.New("cluster store: producer id block size must be positive")
	}
	var first int64
	err := db.timed("producer_ids", func() error {
		return db.pool.QueryRow(ctx, `INSERT INTO muster_producer_ids (id, next) VALUES (1, $1)
ON CONFLICT (id) DO UPDATE SET next = muster_producer_ids.next + $1
RETURNING next - $1`, n).Scan(&first)
	})
	return first, err
}
