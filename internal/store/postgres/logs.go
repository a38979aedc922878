package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The partition logs of cluster mode's data plane. A partition's leader holds the lease of kind
// PartitionLeaseKind(topic) and shard = partition (the lease manager hands them out like
// coordinator shards; leader epoch = lease epoch). Only the leader writes: every write names the
// epoch it writes under, and the database refuses it once a newer epoch holds the lease, in the
// same statement that would write it.

// PartitionKey names one partition.
type PartitionKey struct {
	TopicID   [16]byte
	Partition int32
}

// PartitionLeaseKind is the lease kind of topic's partitions.
func PartitionLeaseKind(topicID [16]byte) string {
	return "partition:" + hex.EncodeToString(topicID[:])
}

// LogBatch is one stored record batch: its first and last offsets, its largest timestamp and
// its bytes (base offset and leader epoch already set by the leader).
type LogBatch struct {
	Base, Last   int64
	MaxTimestamp int64
	Data         []byte
}

// ProducerEntry is one idempotent producer's batch in a partition (Kafka's ProducerStateEntry
// keeps the last five).
type ProducerEntry struct {
	ProducerID int64
	Base       int64
	Epoch      int16
	FirstSeq   int32
	LastDelta  int32
	AppendMs   int64
}

// LogAppend is one partition's part of a group commit.
type LogAppend struct {
	Partition PartitionKey
	// Epoch is the lease epoch the leader writes under.
	Epoch   int64
	Batches []LogBatch
	// Producers are upserted, Forget (producer id and base) deleted.
	Producers []ProducerEntry
	Forget    []ProducerEntry
}

// appendLogsSQL writes the batches and producer state of many partitions in one statement (one
// transaction, one commit): it share-locks the partitions' lease rows and writes the rows of
// each partition only when its lease is at the append's epoch; it returns every lease's epoch,
// so the caller tells the fenced partitions apart. A takeover's update waits for the lock.
const appendLogsSQL = `WITH want AS (
	SELECT * FROM unnest($1::text[], $2::integer[], $3::bigint[]) AS w(kind, shard, epoch)
), l AS (
	SELECT m.kind, m.shard, m.epoch FROM muster_leases m
	WHERE (m.kind, m.shard) IN (SELECT kind, shard FROM want)
	FOR SHARE
), ok AS (
	SELECT w.kind, w.shard FROM want w JOIN l ON l.kind = w.kind AND l.shard = w.shard AND l.epoch = w.epoch
), b AS (
	INSERT INTO muster_batches (topic_id, partition, base, last, max_ts, data)
	SELECT x.t, x.p, x.base, x.last, x.ts, x.data
	FROM unnest($4::text[], $5::bytea[], $6::integer[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bytea[])
		AS x(kind, t, p, base, last, ts, data)
	WHERE EXISTS (SELECT 1 FROM ok WHERE ok.kind = x.kind AND ok.shard = x.p)
	ON CONFLICT (topic_id, partition, base) DO UPDATE SET last = excluded.last, max_ts = excluded.max_ts, data = excluded.data
	RETURNING 1
), pu AS (
	INSERT INTO muster_producers (topic_id, partition, producer_id, base, epoch, first_seq, last_delta, append_ms)
	SELECT y.t, y.p, y.pid, y.base, y.epoch, y.seq, y.delta, y.ms
	FROM unnest($11::text[], $12::bytea[], $13::integer[], $14::bigint[], $15::bigint[], $16::smallint[], $17::integer[], $18::integer[], $19::bigint[])
		AS y(kind, t, p, pid, base, epoch, seq, delta, ms)
	WHERE EXISTS (SELECT 1 FROM ok WHERE ok.kind = y.kind AND ok.shard = y.p)
	ON CONFLICT (topic_id, partition, producer_id, base) DO UPDATE SET epoch = excluded.epoch,
		first_seq = excluded.first_seq, last_delta = excluded.last_delta, append_ms = excluded.append_ms
	RETURNING 1
), pd AS (
	DELETE FROM muster_producers d
	USING unnest($20::text[], $21::bytea[], $22::integer[], $23::bigint[], $24::bigint[]) AS z(kind, t, p, pid, base)
	WHERE d.topic_id = z.t AND d.partition = z.p AND d.producer_id = z.pid AND d.base = z.base
	AND EXISTS (SELECT 1 FROM ok WHERE ok.kind = z.kind AND ok.shard = z.p)
	RETURNING 1
)
SELECT kind, shard, epoch FROM l`

// AppendLogs commits the appends of many partitions (a group commit of the leader's produce
// requests) in one transaction. A partition whose lease is no longer at its append's epoch
// (another node leads it now) writes nothing and is listed in fenced; the others are durable
// when AppendLogs returns nil.
func (db *DB) AppendLogs(ctx context.Context, appends []LogAppend) (fenced []PartitionKey, err error) {
	var (
		wk        []string
		ws        []int32
		we        []int64
		bk        []string
		bt        [][]byte
		bp        []int32
		bb, bl    []int64
		bts       []int64
		bd        [][]byte
		pk        []string
		pt        [][]byte
		pp        []int32
		ppid, pb  []int64
		pe        []int16
		pseq, pdl []int32
		pms       []int64
		dk        []string
		dt        [][]byte
		dp        []int32
		dpid, db_ []int64
	)
	for _, a := range appends {
		kind := PartitionLeaseKind(a.Partition.TopicID)
		tid := a.Partition.TopicID[:]
		wk, ws, we = append(wk, kind), append(ws, a.Partition.Partition), append(we, a.Epoch)
		for _, b := range a.Batches {
			bk, bt, bp = append(bk, kind), append(bt, tid), append(bp, a.Partition.Partition)
			bb, bl, bts, bd = append(bb, b.Base), append(bl, b.Last), append(bts, b.MaxTimestamp), append(bd, b.Data)
		}
		for _, e := range a.Producers {
			pk, pt, pp = append(pk, kind), append(pt, tid), append(pp, a.Partition.Partition)
			ppid, pb, pe = append(ppid, e.ProducerID), append(pb, e.Base), append(pe, e.Epoch)
			pseq, pdl, pms = append(pseq, e.FirstSeq), append(pdl, e.LastDelta), append(pms, e.AppendMs)
		}
		for _, e := range a.Forget {
			dk, dt, dp = append(dk, kind), append(dt, tid), append(dp, a.Partition.Partition)
			dpid, db_ = append(dpid, e.ProducerID), append(db_, e.Base)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, appendTimeout)
	defer cancel()
	got := map[PartitionKey]int64{}
	err = db.timed("append_logs", func() error {
		rows, err := db.pool.Query(ctx, appendLogsSQL, wk, ws, we,
			nz(bk), nz(bt), nz(bp), nz(bb), nz(bl), nz(bts), nz(bd),
			nz(pk), nz(pt), nz(pp), nz(ppid), nz(pb), nz(pe), nz(pseq), nz(pdl), nz(pms),
			nz(dk), nz(dt), nz(dp), nz(dpid), nz(db_))
		if err != nil {
			return err
		}
		defer rows.Close()
		byKind := map[string][16]byte{}
		for _, a := range appends {
			byKind[PartitionLeaseKind(a.Partition.TopicID)] = a.Partition.TopicID
		}
		for rows.Next() {
			var kind string
			var shard int32
			var epoch int64
			if err := rows.Scan(&kind, &shard, &epoch); err != nil {
				return err
			}
			got[PartitionKey{TopicID: byKind[kind], Partition: shard}] = epoch
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	for _, a := range appends {
		if e, ok := got[a.Partition]; !ok || e != a.Epoch {
			fenced = append(fenced, a.Partition)
		}
	}
	return fenced, nil
}

// nz turns a nil slice into an empty one (a NULL array would make unnest fail).
func nz[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ReadLog returns the stored batches of p that end at or after from, in offset order, until
// their bytes pass maxBytes (at least one batch when any exists).
func (db *DB) ReadLog(ctx context.Context, p PartitionKey, from int64, maxBytes int) ([]LogBatch, error) {
	var out []LogBatch
	err := db.timed("read_log", func() error {
		rows, err := db.pool.Query(ctx, `SELECT base, last, max_ts, data FROM muster_batches
WHERE topic_id = $1 AND partition = $2 AND last >= $3 ORDER BY base`, p.TopicID[:], p.Partition, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		size := 0
		for rows.Next() {
			var b LogBatch
			if err := rows.Scan(&b.Base, &b.Last, &b.MaxTimestamp, &b.Data); err != nil {
				return err
			}
			if len(out) > 0 && size+len(b.Data) > maxBytes {
				break
			}
			out = append(out, b)
			size += len(b.Data)
		}
		return rows.Err()
	})
	return out, err
}

// LogState is what a new leader loads before it takes writes: the log start offset, the end
// offset (one past the last stored batch; the log start when empty) and producer state.
type LogState struct {
	LogStart, End int64
	Producers     []ProducerEntry
}

// LoadLogState reads p's end state.
func (db *DB) LoadLogState(ctx context.Context, p PartitionKey) (LogState, error) {
	var st LogState
	err := db.timed("load_log", func() error {
		b := &pgx.Batch{}
		b.Queue(`SELECT coalesce((SELECT log_start FROM muster_partitions WHERE topic_id = $1 AND partition = $2), 0)`,
			p.TopicID[:], p.Partition).QueryRow(func(r pgx.Row) error { return r.Scan(&st.LogStart) })
		b.Queue(`SELECT coalesce(max(last) + 1, -1) FROM muster_batches WHERE topic_id = $1 AND partition = $2`,
			p.TopicID[:], p.Partition).QueryRow(func(r pgx.Row) error { return r.Scan(&st.End) })
		b.Queue(`SELECT producer_id, base, epoch, first_seq, last_delta, append_ms FROM muster_producers
WHERE topic_id = $1 AND partition = $2 ORDER BY producer_id, base`, p.TopicID[:], p.Partition).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var e ProducerEntry
				if err := rows.Scan(&e.ProducerID, &e.Base, &e.Epoch, &e.FirstSeq, &e.LastDelta, &e.AppendMs); err != nil {
					return err
				}
				st.Producers = append(st.Producers, e)
			}
			return rows.Err()
		})
		return db.pool.SendBatch(ctx, b).Close()
	})
	if st.End < st.LogStart {
		st.End = st.LogStart
	}
	return st, err
}

// ErrLogFenced means a newer epoch leads the partition: the write did not happen.
var ErrLogFenced = errors.New("cluster store: the partition is led by a newer epoch")

// SetLogStart advances p's log start offset to offset (DeleteRecords, retention) under the
// leader's epoch and deletes the batches that end below it, in one transaction.
func (db *DB) SetLogStart(ctx context.Context, p PartitionKey, epoch, offset int64) error {
	kind := PartitionLeaseKind(p.TopicID)
	return db.tx(ctx, "log_start", func(tx pgx.Tx) error {
		var cur int64
		err := tx.QueryRow(ctx, `SELECT epoch FROM muster_leases WHERE kind = $1 AND shard = $2 FOR SHARE`, kind, p.Partition).Scan(&cur)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && cur != epoch) {
			return ErrLogFenced
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO muster_partitions (topic_id, partition, log_start) VALUES ($1, $2, $3)
ON CONFLICT (topic_id, partition) DO UPDATE SET log_start = greatest(muster_partitions.log_start, excluded.log_start)`,
			p.TopicID[:], p.Partition, offset); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM muster_batches WHERE topic_id = $1 AND partition = $2 AND last < $3`, p.TopicID[:], p.Partition, offset)
		return err
	})
}

// CreatePartitionLeases creates the lease rows of topic's partitions [0, n) (free, epoch 0).
func (db *DB) CreatePartitionLeases(ctx context.Context, topicID [16]byte, n int32) error {
	_, err := db.exec(ctx, "partition_leases", `INSERT INTO muster_leases (kind, shard, epoch)
SELECT $1, g, 0 FROM generate_series(0, $2::integer - 1) AS g ON CONFLICT (kind, shard) DO NOTHING`, PartitionLeaseKind(topicID), n)
	if err != nil {
		return fmt.Errorf("cluster store: creating partition leases: %w", err)
	}
	return nil
}

// AcquirePartition takes the leadership lease of p for me (as AcquireLease).
func (db *DB) AcquirePartition(ctx context.Context, me Me, p PartitionKey) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return db.AcquireLease(ctx, me, PartitionLeaseKind(p.TopicID), p.Partition)
}
