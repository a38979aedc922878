package coordinator

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store"
)

// Shard-load benchmarks (docs/benchmarks.md "Session 2: replay and memory"): replay of
// the records a shard holds, in the key order a store load presents them, built with the same
// encoders the coordinator writes with. records/s is the replay rate; B/offset, B/member and
// B/group are live heap after a GC divided by the count.

// replayBenchOffsets returns groups × partitions OffsetCommit records (one topic per group,
// values v3 as OffsetCommit v9 writes them), sorted by key.
func replayBenchOffsets(groups, partitions int) []Record {
	out := make([]Record, 0, groups*partitions)
	commit := time.UnixMilli(1_700_000_000_000)
	for g := 0; g < groups; g++ {
		gid := "consumer-group-" + strconv.Itoa(g)
		topic := "orders-" + strconv.Itoa(g%50)
		for p := 0; p < partitions; p++ {
			v := &OffsetValue{Offset: int64(p) * 1000, LeaderEpoch: 3, CommitMs: commit.UnixMilli()}
			out = append(out, Record{Key: offsetKey(gid, topic, int32(p)), Value: offsetValue(v)})
		}
	}
	sortRecords(out)
	return out
}

// replayBenchMembers returns the records of groups KIP-848 consumer groups of members members
// each, as a stable group leaves them: group metadata (epoch, hash), target assignment metadata,
// and per member its metadata, target assignment and current assignment (value v1, with
// KIP-1251 assignment epochs). Every group subscribes to one topic of 2×members partitions; each
// member owns two of them. Sorted by key.
func replayBenchMembers(groups, members int) []Record {
	out := make([]Record, 0, groups*(2+3*members))
	for g := 0; g < groups; g++ {
		gid := "consumer-group-" + strconv.Itoa(g)
		topic := "orders-" + strconv.Itoa(g%50)
		var tid [16]byte
		copy(tid[:], fmt.Sprintf("topic-id-%07d", g%50))
		out = append(out,
			Record{Key: cgMetadataKey(gid), Value: cgMetadataValue(7, 0x5eed5eed5eed)},
			Record{Key: cgTargetMetaKey(gid), Value: cgTargetMetaValue(7)})
		for i := 0; i < members; i++ {
			m := &consumerMember{
				id:               fmt.Sprintf("m%021d", g*members+i), // 22 chars, like a base64 UUID
				clientID:         "consumer-" + gid + "-" + strconv.Itoa(i),
				clientHost:       "/10.0.0." + strconv.Itoa(i%250),
				subscribedNames:  []string{topic},
				serverAssignor:   "uniform",
				rebalanceTimeout: 300000,
			}
			a := topicPartitions{tid: {int32(2 * i), int32(2*i + 1)}}
			c := &consumerCurrent{epoch: 7, prevEpoch: 6, state: MemberStable, assigned: a, pending: topicPartitions{},
				epochs: assignmentEpochsAt(a, 5)}
			out = append(out,
				Record{Key: cgMemberKey(gid, m.id), Value: cgMemberValue(m)},
				Record{Key: cgTargetMemberKey(gid, m.id), Value: cgTargetMemberValue(a)},
				Record{Key: cgCurrentKey(gid, m.id), Value: cgCurrentValue(c)})
		}
	}
	sortRecords(out)
	return out
}

func sortRecords(rs []Record) {
	sort.Slice(rs, func(i, j int) bool { return bytes.Compare(rs[i].Key, rs[j].Key) < 0 })
}

func replayAll(tb testing.TB, recs []Record) *State {
	st := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
	for _, r := range recs {
		if err := st.Replay(r); err != nil {
			tb.Fatal(err)
		}
	}
	st.Loading = false
	return st
}

// BenchmarkShardLoadReplay replays a shard's records into a fresh State: "offsets" is 1M
// committed offsets (1k groups × 1k partitions), "members" 100k KIP-848 members (1k groups × 100
// members, 5 records per member incl. per-group ones, so ~300k records).
func BenchmarkShardLoadReplay(b *testing.B) {
	cases := []struct {
		name string
		recs func() []Record
	}{
		{"offsets-1k-groups-x-1k", func() []Record { return replayBenchOffsets(1000, 1000) }},
		{"offsets-100-groups-x-1k", func() []Record { return replayBenchOffsets(100, 1000) }},
		{"members-1k-groups-x-100", func() []Record { return replayBenchMembers(1000, 100) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			recs := c.recs()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				replayAll(b, recs)
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkShardLoadPebble is the end-to-end shard load: 1M committed offsets (1k groups × 1k
// partitions) written to a real Pebble dir and flushed to sstables, then per op: acquire the
// shard lease, stream the records (store.Shard.Load) and replay them, as Shard.tryLoad does.
func BenchmarkShardLoadPebble(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run("offsets-"+strconv.Itoa(n)+"-groups-x-1k", func(b *testing.B) {
			recs := replayBenchOffsets(n, 1000)
			db, err := pebble.Open(filepath.Join(b.TempDir(), "pebble"), &pebble.Options{Logger: quietPebble{}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ps, err := store.OpenPebble(db, 1)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			sh, err := ps.Acquire(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < len(recs); i += 100_000 {
				if err := sh.Append(ctx, toStore(recs[i:min(i+100_000, len(recs))])); err != nil {
					b.Fatal(err)
				}
			}
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
			// Settle compactions so that they do not run during the measured loads.
			if err := db.Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
				b.Fatal(err)
			}
			// "copy": store.Shard.Load (every record copied); "borrowed": what Shard.tryLoad
			// does when the store implements store.BorrowingLoader.
			for _, mode := range []string{"copy", "borrowed"} {
				b.Run(mode, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						sh, err := ps.Acquire(ctx, 0)
						if err != nil {
							b.Fatal(err)
						}
						st := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
						if mode == "copy" {
							err = sh.Load(ctx, func(r store.Record) error { return st.Replay(Record(r)) })
						} else {
							err = sh.(store.BorrowingLoader).LoadBorrowed(ctx, func(r store.Record) error { return st.ReplayBorrowed(Record(r)) })
						}
						if err != nil {
							b.Fatal(err)
						}
						if st.Offsets.Count() != len(recs) {
							b.Fatalf("%d offsets loaded, want %d", st.Offsets.Count(), len(recs))
						}
					}
					b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// liveHeap returns the live heap after a full GC.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkShardMemory measures the live heap a loaded shard keeps: per committed offset (1k
// groups × 1k partitions), per KIP-848 member (1k groups × 100 members with assignments, group
// overhead included), per empty KIP-848 group (group metadata and target metadata records
// only) and per simple classic group (one committed offset, B/group minus B/offset). Each op
// loads once; the metrics are what matter, not the time.
func BenchmarkShardMemory(b *testing.B) {
	cases := []struct {
		name, unit string
		count      int
		recs       func() []Record
	}{
		{"offsets-1k-groups-x-1k", "B/offset", 1_000_000, func() []Record { return replayBenchOffsets(1000, 1000) }},
		{"members-1k-groups-x-100", "B/member", 100_000, func() []Record { return replayBenchMembers(1000, 100) }},
		{"members-100-groups-x-1k", "B/member", 100_000, func() []Record { return replayBenchMembers(100, 1000) }},
		{"empty-consumer-groups-100k", "B/group", 100_000, func() []Record { return replayBenchMembers(100_000, 0) }},
		{"simple-groups-100k-x-1-offset", "B/group", 100_000, func() []Record { return replayBenchOffsets(100_000, 1) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			recs := c.recs()
			var per float64
			for b.Loop() {
				before := liveHeap()
				st := replayAll(b, recs)
				after := liveHeap()
				runtime.KeepAlive(st)
				per = (float64(after) - float64(before)) / float64(c.count)
			}
			b.ReportMetric(per, c.unit)
			b.ReportMetric(0, "ns/op")
		})
	}
}

func toStore(recs []Record) []store.Record {
	out := make([]store.Record, len(recs))
	for i, r := range recs {
		out[i] = store.Record(r)
	}
	return out
}
