package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// testLog is a MirrorLog kept in the same Pebble DB under 'x' shard base → the batch's records
// (count, then key length, key, value length or -1, value), as __consumer_offsets keeps its
// batches: written in the Append's own Pebble batch, read back from an offset on.
type testLog struct {
	db   *pebble.DB
	mu   sync.Mutex
	next map[int32]int64
}

func logKeyOf(shard int32, base int64) []byte {
	k := binary.BigEndian.AppendUint32([]byte{'x'}, uint32(shard))
	return binary.BigEndian.AppendUint64(k, uint64(base))
}

func newTestLog(t *testing.T, db *pebble.DB, shards int32) *testLog {
	l := &testLog{db: db, next: map[int32]int64{}}
	for s := int32(0); s < shards; s++ {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: logKeyOf(s, 0), UpperBound: logKeyOf(s+1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if it.Last() {
			l.next[s] = int64(binary.BigEndian.Uint64(it.Key()[5:])) + int64(binary.BigEndian.Uint32(it.Value()))
		}
		it.Close()
	}
	return l
}

func (l *testLog) Stage(shard int32, recs []Record, b *pebble.Batch) func(bool) {
	l.mu.Lock()
	base := l.next[shard]
	l.next[shard] += int64(len(recs))
	l.mu.Unlock()
	v := binary.BigEndian.AppendUint32(nil, uint32(len(recs)))
	for _, r := range recs {
		v = binary.BigEndian.AppendUint32(v, uint32(len(r.Key)))
		v = append(v, r.Key...)
		if r.Value == nil {
			v = binary.BigEndian.AppendUint32(v, 0xffffffff)
			continue
		}
		v = binary.BigEndian.AppendUint32(v, uint32(len(r.Value)))
		v = append(v, r.Value...)
	}
	_ = b.Set(logKeyOf(shard, base), v, nil)
	return func(bool) {}
}

// Verbatim: keys starting with 0 0 or 0 1 (OffsetCommit) are kept verbatim.
func (l *testLog) Verbatim(key []byte) bool { return len(key) >= 2 && key[0] == 0 && key[1] <= 1 }

func (l *testLog) End(shard int32) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next[shard]
}

func (l *testLog) Read(ctx context.Context, shard int32, from int64, fn func(key, value []byte) error) error {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: logKeyOf(shard, 0), UpperBound: logKeyOf(shard+1, 0)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		base := int64(binary.BigEndian.Uint64(it.Key()[5:]))
		v := it.Value()
		n := int(binary.BigEndian.Uint32(v))
		v = v[4:]
		for i := 0; i < n; i++ {
			kl := int(binary.BigEndian.Uint32(v))
			k := v[4 : 4+kl]
			v = v[4+kl:]
			vl := binary.BigEndian.Uint32(v)
			v = v[4:]
			var val []byte
			if vl != 0xffffffff {
				val, v = v[:vl], v[vl:]
			}
			if base+int64(i) >= from {
				if err := fn(k, val); err != nil {
					return err
				}
			}
		}
	}
	return it.Error()
}

func loadAll(t *testing.T, sh Shard) map[string]string {
	t.Helper()
	got := map[string]string{}
	var last []byte
	if err := sh.Load(context.Background(), func(r Record) error {
		if last != nil && bytes.Compare(last, r.Key) >= 0 {
			t.Fatalf("load out of key order: %x after %x", r.Key, last)
		}
		last = append(last[:0], r.Key...)
		got[string(r.Key)] = string(r.Value)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func openLazy(t *testing.T, fs vfs.FS, shards int32) (*pebble.DB, *Pebble) {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenPebble(db, shards)
	if err != nil {
		t.Fatal(err)
	}
	p.SetMirror(newTestLog(t, db, shards))
	return db, p
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// With a MirrorLog, verbatim records live in the mirror until a checkpoint: whatever the
// interleaving of Appends (both kinds), checkpoints, reloads and crashes (a clone of the disk
// as synced, keeping a random part of what was not synced: checkpoints are written without a
// sync), a load streams exactly the latest acknowledged record of every key, in key order.
func TestOffsetLogLoadsTheLatestRecords(t *testing.T) {
	const shards = 2
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		fs := vfs.NewCrashableMem()
		db, p := openLazy(t, fs, shards)
		// A data dir written before the offset log: records under their own keys, no checkpoint.
		model := []map[string]string{{}, {}}
		eager, err := OpenPebble(db, shards)
		if err != nil {
			t.Fatal(err)
		}
		for s := int32(0); s < shards; s++ {
			sh, _ := eager.Acquire(context.Background(), s)
			k := []byte{0, 1, 'o', byte(s)}
			if err := sh.Append(context.Background(), []Record{{Key: k, Value: []byte("old")}}); err != nil {
				t.Fatal(err)
			}
			model[s][string(k)] = "old"
		}
		leases := make([]Shard, shards)
		acquire := func(s int32) {
			sh, err := p.Acquire(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			leases[s] = sh
			if got := loadAll(t, sh); fmt.Sprint(got) != fmt.Sprint(model[s]) {
				t.Fatalf("seed %d shard %d: loaded %v, want %v", seed, s, got, model[s])
			}
		}
		for s := int32(0); s < shards; s++ {
			acquire(s)
		}
		for step := 0; step < 300; step++ {
			s := int32(rng.IntN(shards))
			switch op := rng.IntN(20); {
			case op < 14: // an Append of 1–6 records
				var recs []Record
				seen := map[string]bool{}
				for n := 1 + rng.IntN(6); n > 0; n-- {
					typ := byte(1)
					if rng.IntN(4) == 0 {
						typ = 3 // not verbatim: under its own key at once
					}
					k := string([]byte{0, typ, 'k', byte('a' + rng.IntN(12))})
					if seen[k] {
						continue
					}
					seen[k] = true
					var v []byte
					if rng.IntN(5) > 0 {
						v = []byte(fmt.Sprint(step))
					}
					recs = append(recs, Record{Key: []byte(k), Value: v})
				}
				var err error
				if rng.IntN(2) == 0 {
					err = leases[s].(OrderedAppender).BeginAppend(context.Background(), recs)()
				} else {
					err = leases[s].Append(context.Background(), recs)
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					if r.Value == nil {
						delete(model[s], string(r.Key))
					} else {
						model[s][string(r.Key)] = string(r.Value)
					}
				}
			case op < 16:
				if err := p.checkpoint(s, true); err != nil {
					t.Fatal(err)
				}
			case op < 18: // a reload (a new lease) in the same process
				acquire(s)
			default: // a crash: reopen a clone of what the disk holds
				clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, uint64(step)))})
				p.ckpt.halt()
				_ = db.Close()
				fs = clone
				db, p = openLazy(t, fs, shards)
				for s := int32(0); s < shards; s++ {
					acquire(s)
				}
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		for s := int32(0); s < shards; s++ {
			if n := p.logs[s].dirty.len(); n != 0 {
				t.Fatalf("seed %d: %d records left unchecked after Close", seed, n)
			}
			acquire(s)
		}
		_ = db.Close()
	}
}

// halt stops the background checkpoints without a last one (a crash).
func (c *checkpointer) halt() {
	if c.started {
		c.started = false
		close(c.quit)
		<-c.done
	}
}
