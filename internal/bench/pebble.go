package bench

import (
	"context"
	"encoding/binary"
	"os"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleSync measures the store's durable-commit limit on dir's filesystem: conns goroutines
// each commit one small record (the size of an offset commit record) to a fresh Pebble DB with
// pebble.Sync, back to back. Concurrent Sync commits share WAL fsyncs, so this is the ceiling
// for durable commits at that concurrency with one record per commit.
func pebbleSync(ctx context.Context, o *Options, dir string, conns int) Result {
	res := Result{Workload: WPebble, Target: "pebble", Conns: conns}
	d, err := os.MkdirTemp(dir, "pebble-probe-")
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	defer os.RemoveAll(d)
	db, err := pebble.Open(d, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	defer db.Close()
	val := make([]byte, 40)
	r := closedLoop(ctx, conns, o.Duration, o.MaxRequests, func(_ context.Context, w int, seq int64) (int64, error) {
		key := binary.BigEndian.AppendUint64([]byte{'k', byte(w)}, uint64(seq%64))
		b := db.NewBatch()
		defer b.Close()
		if err := b.Set(key, val, nil); err != nil {
			return 0, err
		}
		return 1, b.Commit(pebble.Sync)
	})
	r.Workload, r.Target = WPebble, "pebble"
	r.Note = "1 record of ~50 B per Sync commit, " + itoa(conns) + " committers"
	return r
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic("pebble fatal: " + format)
}
