package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Endpoint is where clients reach a node on one of its listeners.
type Endpoint struct {
	Listener string `json:"listener"`
	Host     string `json:"host"`
	Port     int32  `json:"port"`
}

// Node is one row of the node registry.
type Node struct {
	ID int32
	// Incarnation tells a node's runs apart: a restarted node registers a new one, and leases
	// held under an older one are free.
	Incarnation int64
	Rack        string
	Endpoints   []Endpoint
	// Draining: the node is handing its leases over before it stops; no new lease goes to it.
	Draining  bool
	StartedAt time.Time
	ExpiresAt time.Time
	// Live: the node's lease had not expired when the row was read (database clock).
	Live bool
}

// Endpoint returns the node's endpoint on listener (false when it has no such listener).
func (n Node) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range n.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Lease is one row of the lease table: who holds one coordinator shard (kind "group" or
// "txn") and under which fencing epoch.
type Lease struct {
	Kind  string
	Shard int32
	Epoch int64
	// Owner and OwnerInc name the holder; Owner < 0: free.
	Owner      int32
	OwnerInc   int64
	AcquiredAt time.Time
}

// View is the cluster as one renewal read it: the registry and every lease, at the database's
// time Now.
type View struct {
	Now    time.Time
	Nodes  []Node
	Leases []Lease
}

// Held reports whether l is held by a live incarnation of its owner in v.
func (v *View) Held(l Lease) bool {
	if l.Owner < 0 {
		return false
	}
	for _, n := range v.Nodes {
		if n.ID == l.Owner {
			return n.Incarnation == l.OwnerInc && n.Live
		}
	}
	return false
}

// Node returns the registry row of id.
func (v *View) Node(id int32) (Node, bool) {
	for _, n := range v.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// ErrNodeIDInUse means a live node with another incarnation holds the node id.
var ErrNodeIDInUse = errors.New("cluster store: node.id is registered by another live muster node")

// ErrLeaseHeld means another live node holds the lease.
var ErrLeaseHeld = errors.New("cluster store: the lease is held by another live node")

// ErrNotRegistered means this node's registration is gone or expired: it holds nothing.
var ErrNotRegistered = errors.New("cluster store: this node's registration expired or was taken over")

// Me identifies this node's run in lease statements.
type Me struct {
	ID          int32
	Incarnation int64
}

// ttlMs renders a time-to-live for SQL (milliseconds, added to now() on the database's clock).
func ttlMs(d time.Duration) int64 { return d.Milliseconds() }

// Register enters n in the registry with a lease of ttl. A row of the same id whose lease
// expired, or whose incarnation is n's or prev (this node's previous run, known dead because
// its data dir was free), is replaced; a live row of another incarnation refuses
// (ErrNodeIDInUse).
func (db *DB) Register(ctx context.Context, n Node, prev int64, ttl time.Duration) error {
	eps, err := json.Marshal(n.Endpoints)
	if err != nil {
		return err
	}
	tag, err := db.exec(ctx, "register", `
INSERT INTO muster_nodes (node_id, incarnation, rack, endpoints, draining, started_at, expires_at)
VALUES ($1, $2, $3, $4, false, now(), now() + $5::bigint * interval '1 millisecond')
ON CONFLICT (node_id) DO UPDATE SET incarnation = excluded.incarnation, rack = excluded.rack,
	endpoints = excluded.endpoints, draining = false, started_at = excluded.started_at,
	expires_at = excluded.expires_at
WHERE muster_nodes.expires_at <= now() OR muster_nodes.incarnation = $2 OR muster_nodes.incarnation = $6`,
		n.ID, n.Incarnation, n.Rack, string(eps), ttlMs(ttl), prev)
	if err != nil {
		return fmt.Errorf("cluster store: registering node %d: %w", n.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w (node.id %d)", ErrNodeIDInUse, n.ID)
	}
	db.notify(ctx)
	return nil
}

// Renew extends this node's lease by ttl and reads the registry and the lease table, in one
// round trip. ErrNotRegistered: the node's row is gone or belongs to another incarnation.
func (db *DB) Renew(ctx context.Context, me Me, ttl time.Duration) (*View, error) {
	v := &View{}
	renewed := false
	err := db.timed("renew", func() error {
		b := &pgx.Batch{}
		b.Queue(`UPDATE muster_nodes SET expires_at = now() + $3::bigint * interval '1 millisecond'
WHERE node_id = $1 AND incarnation = $2`, me.ID, me.Incarnation, ttlMs(ttl)).Exec(func(tag pgconn.CommandTag) error {
			renewed = tag.RowsAffected() == 1
			return nil
		})
		queueView(b, v)
		return db.pool.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, err
	}
	if !renewed {
		return v, ErrNotRegistered
	}
	return v, nil
}

// ReadView reads the registry and the lease table without renewing anything (cluster status).
func (db *DB) ReadView(ctx context.Context) (*View, error) {
	v := &View{}
	err := db.timed("view", func() error {
		b := &pgx.Batch{}
		queueView(b, v)
		return db.pool.SendBatch(ctx, b).Close()
	})
	return v, err
}

func queueView(b *pgx.Batch, v *View) {
	b.Queue(`SELECT now()`).QueryRow(func(r pgx.Row) error { return r.Scan(&v.Now) })
	b.Queue(`SELECT node_id, incarnation, rack, endpoints, draining, started_at, expires_at, expires_at > now()
FROM muster_nodes ORDER BY node_id`).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var n Node
			var eps string
			if err := rows.Scan(&n.ID, &n.Incarnation, &n.Rack, &eps, &n.Draining, &n.StartedAt, &n.ExpiresAt, &n.Live); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(eps), &n.Endpoints); err != nil {
				return fmt.Errorf("cluster store: node %d: corrupt endpoints: %w", n.ID, err)
			}
			v.Nodes = append(v.Nodes, n)
		}
		return rows.Err()
	})
	b.Queue(`SELECT kind, shard, epoch, coalesce(owner, -1), coalesce(owner_inc, 0), coalesce(acquired_at, now())
FROM muster_leases ORDER BY kind, shard`).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var l Lease
			if err := rows.Scan(&l.Kind, &l.Shard, &l.Epoch, &l.Owner, &l.OwnerInc, &l.AcquiredAt); err != nil {
				return err
			}
			v.Leases = append(v.Leases, l)
		}
		return rows.Err()
	})
}

// Drain marks this node as draining: no node assigns it new leases, and it hands its own over.
func (db *DB) Drain(ctx context.Context, me Me) error {
	_, err := db.exec(ctx, "drain", `UPDATE muster_nodes SET draining = true WHERE node_id = $1 AND incarnation = $2`, me.ID, me.Incarnation)
	db.notify(ctx)
	return err
}

// Deregister ends this node's lease at once (graceful stop, after its leases were released);
// the row stays for cluster status, expired.
func (db *DB) Deregister(ctx context.Context, me Me) error {
	_, err := db.exec(ctx, "deregister", `UPDATE muster_nodes SET expires_at = now(), draining = true WHERE node_id = $1 AND incarnation = $2`, me.ID, me.Incarnation)
	db.notify(ctx)
	return err
}

// AcquireLease takes the lease of (kind, shard) for me with the next epoch, when it is free,
// already me's, or held by a node whose lease expired or that restarted (another
// incarnation); me's own registration must be live. ErrLeaseHeld otherwise.
func (db *DB) AcquireLease(ctx context.Context, me Me, kind string, shard int32) (int64, error) {
	var epoch int64
	err := db.timed("acquire", func() error {
		return db.pool.QueryRow(ctx, `
UPDATE muster_leases SET epoch = epoch + 1, owner = $3, owner_inc = $4, acquired_at = now()
WHERE kind = $1 AND shard = $2
AND EXISTS (SELECT 1 FROM muster_nodes me WHERE me.node_id = $3 AND me.incarnation = $4 AND me.expires_at > now())
AND (owner IS NULL OR (owner = $3 AND owner_inc = $4) OR NOT EXISTS (
	SELECT 1 FROM muster_nodes n WHERE n.node_id = muster_leases.owner AND n.incarnation = muster_leases.owner_inc
	AND n.expires_at > now()))
RETURNING epoch`, kind, shard, me.ID, me.Incarnation).Scan(&epoch)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrLeaseHeld
	}
	if err == nil {
		db.notify(ctx) // the other nodes' directories learn the new owner at once
	}
	return epoch, err
}

// ReleaseLease frees the lease of (kind, shard) if me still holds it at epoch.
func (db *DB) ReleaseLease(ctx context.Context, me Me, kind string, shard int32, epoch int64) error {
	_, err := db.exec(ctx, "release", `UPDATE muster_leases SET owner = NULL, owner_inc = NULL
WHERE kind = $1 AND shard = $2 AND epoch = $3 AND owner = $4 AND owner_inc = $5`, kind, shard, epoch, me.ID, me.Incarnation)
	db.notify(ctx)
	return err
}

// NotifyChannel is the LISTEN/NOTIFY channel on which nodes announce registry and lease
// changes, so the others rebalance at once instead of at their next renewal.
const NotifyChannel = "muster_cluster"

// notify announces a registry or lease change.
func (db *DB) notify(ctx context.Context) { db.notifyOn(ctx, NotifyChannel, "") }

// notifyOn announces a change on channel (best effort: databases without NOTIFY rely on the
// periodic re-read).
func (db *DB) notifyOn(ctx context.Context, channel, payload string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
}

// Listen calls fn on every notification of channel until ctx ends, reconnecting after errors.
func (db *DB) Listen(ctx context.Context, channel string, fn func(payload string)) {
	for ctx.Err() == nil {
		err := func() error {
			c, err := db.pool.Acquire(ctx)
			if err != nil {
				return err
			}
			defer c.Release()
			conn := c.Conn()
			if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
				return err
			}
			defer func() {
				// A connection returned to the pool must not stay subscribed.
				uctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				conn.Exec(uctx, "UNLISTEN *")
			}()
			fn("") // subscribed: whatever changed before is read now
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					return err
				}
				fn(n.Payload)
			}
		}()
		if err != nil && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}
