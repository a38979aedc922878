package postgres

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/jackc/pgx/v5"
)

// The partition logs of cluster mode's data plane. A partition's leader holds the lease of kind
// PartitionLeaseKind(topic) and shard = partition (the lease manager hands them out like
// coordinator shards; leader epoch = lease epoch). Only the leader writes: every write names the
// epoch it writes under, and the database refuses it once a newer epoch holds the lease, in the
// same transaction that would write it.
//
// A partition's log is its record batches (muster_batches, one row per batch: base and last
// offset, largest timestamp, the bytes) and its state keys (muster_partition_state: the log start
// offset, idempotent producers, sealed segments, the cleaner's checkpoint, open and aborted
// transactions and producers' last markers, keyed by a kind byte and a key within the
// partition; the data plane encodes them, internal/data/doc.go).

// PartitionLeaseKind is the lease kind of topic's partitions.
func PartitionLeaseKind(topicID [16]byte) string {
	return "partition:" + hex.EncodeToString(topicID[:])
}

// TopicOfLeaseKind returns the topic id of a partition lease kind (false for another kind).
func TopicOfLeaseKind(kind string) ([16]byte, bool) {
	const pre = "partition:"
	if len(kind) != len(pre)+32 || kind[:len(pre)] != pre {
		return [16]byte{}, false
	}
	b, err := hex.DecodeString(kind[len(pre):])
	if err != nil {
		return [16]byte{}, false
	}
	return [16]byte(b), true
}

// LogBatch is one stored record batch: its first and last offsets, its largest timestamp and
// its bytes (base offset and leader epoch already set by the leader).
type LogBatch struct {
	Base, Last   int64
	MaxTimestamp int64
	Data         []byte
}

// LogState is one state key of a partition: set (Value non-nil) or deleted.
type LogState struct {
	Kind  byte
	Key   []byte
	Value []byte
}

// LogAppend is one partition's part of a group commit: new batches and state keys (at most one
// entry per kind and key), written under the lease epoch Epoch.
type LogAppend struct {
	Topic     [16]byte
	Partition int32
	Epoch     int64
	Batches   []LogBatch
	State     []LogState
}

// appendLogsSQL writes the batches and state keys of many partitions in one statement (one
// transaction, one commit): it share-locks the partitions' lease rows and writes the rows of
// each partition only when its lease is at the writer's epoch; it returns every lease's epoch,
// so the caller tells the fenced partitions apart. A takeover's update (and a topic deletion)
// waits for the lock, so a write is either before it (the new leader loads it) or refused.
// Batches are inserted, never overwritten: a batch at an offset already stored (a write whose
// outcome was unknown, committed meanwhile) fails the whole statement.
const appendLogsSQL = `WITH want AS (
	SELECT DISTINCT kind, shard, epoch FROM unnest($1::text[], $2::integer[], $3::bigint[]) AS w(kind, shard, epoch)
), l AS (
	SELECT m.kind, m.shard, m.epoch FROM muster_leases m
	WHERE (m.kind, m.shard) IN (SELECT kind, shard FROM want)
	FOR SHARE
), ok AS (
	SELECT w.kind, w.shard, w.epoch FROM want w JOIN l ON l.kind = w.kind AND l.shard = w.shard AND l.epoch = w.epoch
), b AS (
	INSERT INTO muster_batches (topic_id, partition, base, last, max_ts, data)
	SELECT x.t, x.p, x.base, x.last, x.ts, x.data
	FROM unnest($4::text[], $5::bigint[], $6::bytea[], $7::integer[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bytea[])
		AS x(kind, epoch, t, p, base, last, ts, data)
	WHERE EXISTS (SELECT 1 FROM ok WHERE ok.kind = x.kind AND ok.shard = x.p AND ok.epoch = x.epoch)
	RETURNING 1
), su AS (
	INSERT INTO muster_partition_state (topic_id, partition, kind, k, v)
	SELECT y.t, y.p, y.sk, y.k, y.v
	FROM unnest($12::text[], $13::bigint[], $14::bytea[], $15::integer[], $16::smallint[], $17::bytea[], $18::bytea[])
		AS y(kind, epoch, t, p, sk, k, v)
	WHERE EXISTS (SELECT 1 FROM ok WHERE ok.kind = y.kind AND ok.shard = y.p AND ok.epoch = y.epoch)
	ON CONFLICT (topic_id, partition, kind, k) DO UPDATE SET v = excluded.v
	RETURNING 1
), sd AS (
	DELETE FROM muster_partition_state d
	USING unnest($19::text[], $20::bigint[], $21::bytea[], $22::integer[], $23::smallint[], $24::bytea[]) AS z(kind, epoch, t, p, sk, k)
	WHERE d.topic_id = z.t AND d.partition = z.p AND d.kind = z.sk AND d.k = z.k
	AND EXISTS (SELECT 1 FROM ok WHERE ok.kind = z.kind AND ok.shard = z.p AND ok.epoch = z.epoch)
	RETURNING 1
)
SELECT kind, shard, epoch FROM l`

// appendTimeoutLogs bounds one group commit of partition logs.
const appendTimeoutLogs = appendTimeout

// AppendLogs commits the appends of many partitions (a group commit of the leader's produce
// requests and markers) in one transaction. fenced lists the indexes of the appends whose
// partition's lease is no longer at their epoch (another node leads it, or its topic is gone):
// they wrote nothing; the others are durable when AppendLogs returns nil. On an error the
// outcome is unknown.
func (db *DB) AppendLogs(ctx context.Context, appends []LogAppend) (fenced []int, err error) {
	var (
		wk            []string
		ws            []int32
		we            []int64
		bk            []string
		be            []int64
		bt            [][]byte
		bp            []int32
		bb, bl, bts   []int64
		bd            [][]byte
		uk            []string
		ue            []int64
		ut            [][]byte
		up            []int32
		usk           []int16
		ukey, uv      [][]byte
		dk            []string
		de            []int64
		dt            [][]byte
		dp            []int32
		dsk           []int16
		dkey          [][]byte
		kindsOfAppend = make([]string, len(appends))
	)
	for i := range appends {
		a := &appends[i]
		kind := PartitionLeaseKind(a.Topic)
		kindsOfAppend[i] = kind
		tid := a.Topic[:]
		wk, ws, we = append(wk, kind), append(ws, a.Partition), append(we, a.Epoch)
		for _, b := range a.Batches {
			bk, be, bt, bp = append(bk, kind), append(be, a.Epoch), append(bt, tid), append(bp, a.Partition)
			bb, bl, bts, bd = append(bb, b.Base), append(bl, b.Last), append(bts, b.MaxTimestamp), append(bd, b.Data)
		}
		for _, s := range a.State {
			if s.Value != nil {
				uk, ue, ut, up = append(uk, kind), append(ue, a.Epoch), append(ut, tid), append(up, a.Partition)
				usk, ukey, uv = append(usk, int16(s.Kind)), append(ukey, nzb(s.Key)), append(uv, s.Value)
			} else {
				dk, de, dt, dp = append(dk, kind), append(de, a.Epoch), append(dt, tid), append(dp, a.Partition)
				dsk, dkey = append(dsk, int16(s.Kind)), append(dkey, nzb(s.Key))
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, appendTimeoutLogs)
	defer cancel()
	type shardKey struct {
		kind  string
		shard int32
	}
	got := map[shardKey]int64{}
	err = db.timed("append_logs", func() error {
		rows, err := db.pool.Query(ctx, appendLogsSQL, wk, ws, we,
			nz(bk), nz(be), nz(bt), nz(bp), nz(bb), nz(bl), nz(bts), nz(bd),
			nz(uk), nz(ue), nz(ut), nz(up), nz(usk), nz(ukey), nz(uv),
			nz(dk), nz(de), nz(dt), nz(dp), nz(dsk), nz(dkey))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k shardKey
			var epoch int64
			if err := rows.Scan(&k.kind, &k.shard, &epoch); err != nil {
				return err
			}
			got[k] = epoch
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	for i := range appends {
		if e, ok := got[shardKey{kindsOfAppend[i], appends[i].Partition}]; !ok || e != appends[i].Epoch {
			fenced = append(fenced, i)
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

// nzb turns a nil key into an empty one (the key column is NOT NULL).
func nzb(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ErrLogFenced means a newer epoch leads the partition: the write did not happen.
var ErrLogFenced = errors.New("cluster store: the partition is led by a newer epoch")

// LogRewrite is a change of a partition's stored log below its end, in one transaction under
// the lease epoch Epoch: batches rewritten (the log cleaner) or deleted (the cleaner, and all
// those based below TruncateBelow when the log start moves), state keys set or deleted, and per
// StateBelow entry every state key of its kind below its key deleted.
type LogRewrite struct {
	Topic         [16]byte
	Partition     int32
	Epoch         int64
	Append        []LogBatch
	Replace       []LogBatch
	Drop          []int64
	TruncateBelow int64
	State         []LogState
	StateBelow    []LogState
}

// RewriteLog commits w in one transaction, after checking (share lock) that the partition's
// lease is still at w.Epoch: ErrLogFenced otherwise.
func (db *DB) RewriteLog(ctx context.Context, w LogRewrite) error {
	kind := PartitionLeaseKind(w.Topic)
	tid := w.Topic[:]
	ctx, cancel := context.WithTimeout(ctx, appendTimeoutLogs)
	defer cancel()
	return db.tx(ctx, "rewrite_log", func(tx pgx.Tx) error {
		var cur int64
		err := tx.QueryRow(ctx, `SELECT epoch FROM muster_leases WHERE kind = $1 AND shard = $2 FOR SHARE`, kind, w.Partition).Scan(&cur)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && cur != w.Epoch) {
			return ErrLogFenced
		}
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, x := range w.Append {
			b.Queue(`INSERT INTO muster_batches (topic_id, partition, base, last, max_ts, data) VALUES ($1, $2, $3, $4, $5, $6)`,
				tid, w.Partition, x.Base, x.Last, x.MaxTimestamp, x.Data)
		}
		for _, x := range w.Replace {
			b.Queue(`UPDATE muster_batches SET last = $4, max_ts = $5, data = $6 WHERE topic_id = $1 AND partition = $2 AND base = $3`,
				tid, w.Partition, x.Base, x.Last, x.MaxTimestamp, x.Data)
		}
		if len(w.Drop) > 0 {
			b.Queue(`DELETE FROM muster_batches WHERE topic_id = $1 AND partition = $2 AND base = ANY($3::bigint[])`, tid, w.Partition, w.Drop)
		}
		if w.TruncateBelow > 0 {
			b.Queue(`DELETE FROM muster_batches WHERE topic_id = $1 AND partition = $2 AND base < $3`, tid, w.Partition, w.TruncateBelow)
		}
		for _, s := range w.State {
			if s.Value == nil {
				b.Queue(`DELETE FROM muster_partition_state WHERE topic_id = $1 AND partition = $2 AND kind = $3 AND k = $4`,
					tid, w.Partition, int16(s.Kind), nzb(s.Key))
			} else {
				b.Queue(`INSERT INTO muster_partition_state (topic_id, partition, kind, k, v) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (topic_id, partition, kind, k) DO UPDATE SET v = excluded.v`, tid, w.Partition, int16(s.Kind), nzb(s.Key), s.Value)
			}
		}
		for _, s := range w.StateBelow {
			b.Queue(`DELETE FROM muster_partition_state WHERE topic_id = $1 AND partition = $2 AND kind = $3 AND k < $4`,
				tid, w.Partition, int16(s.Kind), nzb(s.Key))
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// ReadLog calls fn with at most limit stored batches of a partition that hold offsets at or
// after from and are based below to, in offset order; it returns how many it read (fewer than
// limit: there are no more).
func (db *DB) ReadLog(ctx context.Context, topic [16]byte, partition int32, from, to int64, limit int, fn func(base, last int64, data []byte) error) (int, error) {
	n := 0
	err := db.timed("read_log", func() error {
		// The batch holding from is the last one based at or below it (one index probe), unless
		// it ends below from (a gap).
		rows, err := db.pool.Query(ctx, `SELECT base, last, data FROM muster_batches
WHERE topic_id = $1 AND partition = $2 AND base < $4 AND last >= $3
AND base >= coalesce((SELECT max(base) FROM muster_batches WHERE topic_id = $1 AND partition = $2 AND base <= $3), $3)
ORDER BY base LIMIT $5`, topic[:], partition, from, to, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			raw := rows.RawValues()
			var base, last int64
			if err := rows.Scan(&base, &last, nil); err != nil {
				return err
			}
			n++
			if err := fn(base, last, raw[2]); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return n, err
}

// LogBounds returns the base offset of a partition's first stored batch and one past the last
// offset of its last (ok false: none).
func (db *DB) LogBounds(ctx context.Context, topic [16]byte, partition int32) (first, end int64, ok bool, err error) {
	var f, l *int64
	err = db.timed("log_bounds", func() error {
		return db.pool.QueryRow(ctx, `SELECT
(SELECT base FROM muster_batches WHERE topic_id = $1 AND partition = $2 ORDER BY base LIMIT 1),
(SELECT last FROM muster_batches WHERE topic_id = $1 AND partition = $2 ORDER BY base DESC LIMIT 1)`,
			topic[:], partition).Scan(&f, &l)
	})
	if err != nil || f == nil || l == nil {
		return 0, 0, false, err
	}
	return *f, *l + 1, true, nil
}

// LogStats returns, of a partition's batches based in [from, to), their stored bytes, the
// largest timestamp of the first (-1: none) and the largest of all (-1: none), without reading
// the batches.
func (db *DB) LogStats(ctx context.Context, topic [16]byte, partition int32, from, to int64) (bytes, firstTs, largestTs int64, err error) {
	err = db.timed("log_stats", func() error {
		return db.pool.QueryRow(ctx, `SELECT coalesce(sum(octet_length(data)), 0), coalesce(max(max_ts), -1),
coalesce((SELECT max_ts FROM muster_batches WHERE topic_id = $1 AND partition = $2 AND base >= $3 AND base < $4 ORDER BY base LIMIT 1), -1)
FROM muster_batches WHERE topic_id = $1 AND partition = $2 AND base >= $3 AND base < $4`,
			topic[:], partition, from, to).Scan(&bytes, &largestTs, &firstTs)
	})
	return bytes, firstTs, largestTs, err
}

// LogStateOf calls fn with every state key of kind of a partition, in key order.
func (db *DB) LogStateOf(ctx context.Context, topic [16]byte, partition int32, kind byte, fn func(k, v []byte) error) error {
	return db.timed("log_state", func() error {
		rows, err := db.pool.Query(ctx, `SELECT k, v FROM muster_partition_state
WHERE topic_id = $1 AND partition = $2 AND kind = $3 ORDER BY k`, topic[:], partition, int16(kind))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			raw := rows.RawValues()
			if err := fn(raw[0], raw[1]); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}
