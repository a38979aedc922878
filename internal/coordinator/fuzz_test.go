package coordinator_test

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// FuzzDec drives coordinator.Dec over arbitrary bytes with an arbitrary sequence of reads (ops
// picks each read). Dec must never panic and never allocate more than a small multiple of its
// input, whatever lengths the bytes claim.
func FuzzDec(f *testing.F) {
	e := coordinator.Enc{}
	e.Int16(3)
	e.String("group")
	e.NullableString(nil)
	e.Bytes([]byte{1, 2, 3})
	e.Strings([]string{"a", "bc"})
	e.Int32s([]int32{1, 2, 3})
	e.UUID([16]byte{1})
	e.Int64(-1)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, e.B)
	f.Add([]byte{6, 6, 6}, []byte{0x7f, 0xff, 0xff, 0xff, 0})
	f.Add([]byte{5, 7}, []byte{0xff, 0xff, 0xff, 0xfe, 1, 2})
	f.Fuzz(func(t *testing.T, ops, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := coordinator.Dec{B: data}
		for _, op := range ops {
			switch op % 12 {
			case 0:
				d.Int8()
			case 1:
				d.Bool()
			case 2:
				d.Int16()
			case 3:
				d.Int32()
			case 4:
				d.Int64()
			case 5:
				_ = d.String()
			case 6:
				d.NullableString()
			case 7:
				d.Bytes()
			case 8:
				d.UUID()
			case 9:
				d.ArrayLen(int(op / 12))
			case 10:
				d.Strings()
			case 11:
				d.Int32s()
			}
		}
		_ = d.Done()
		runtime.ReadMemStats(&after)
		// Strings() makes n 16-byte headers for ≥2 input bytes each: 8× input, plus copies.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(10*len(data)+64*len(ops)+4096) {
			t.Fatalf("Dec allocated %d bytes for %d input bytes and %d reads", alloc, len(data), len(ops))
		}
	})
}

// replaySeeds are real records of every type main registers, plus keys of the other
// registered type ids with Enc-style group keys, as starting points.
func replaySeeds() [][2][]byte {
	var out [][2][]byte
	ok := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 3}
	ov := kmsg.NewOffsetCommitValue()
	ov.Version = 3
	ov.Offset = 42
	out = append(out, [2][]byte{ok.AppendTo(nil), ov.AppendTo(nil)}, [2][]byte{ok.AppendTo(nil), nil})
	ov.Version = 1
	ov.ExpireTimestamp = 1
	ok.Version = 0
	out = append(out, [2][]byte{ok.AppendTo(nil), ov.AppendTo(nil)})
	gk := kmsg.GroupMetadataKey{Version: 2, Group: "g"}
	gv := kmsg.NewGroupMetadataValue()
	gv.Version = 3
	gv.ProtocolType = "consumer"
	p, l := "range", "m1"
	gv.Protocol, gv.Leader = &p, &l
	m := kmsg.NewGroupMetadataValueMember()
	m.MemberID, m.ClientID, m.ClientHost = "m1", "c", "/h"
	m.SessionTimeoutMillis, m.RebalanceTimeoutMillis = 10000, 10000
	m.Subscription, m.Assignment = []byte{0, 1}, []byte{}
	gv.Members = append(gv.Members, m)
	out = append(out, [2][]byte{gk.AppendTo(nil), gv.AppendTo(nil)}, [2][]byte{gk.AppendTo(nil), nil})
	for _, typ := range []int16{3, 5, 6, 7, 8, 16, 17, 19, 20, 21, 22, 23} {
		e := coordinator.Enc{}
		e.Int16(typ)
		e.String("g")
		e.String("m")
		v := coordinator.Enc{}
		v.Int16(0)
		v.Int32(1)
		v.String("x")
		out = append(out, [2][]byte{e.B, v.B}, [2][]byte{e.B, nil})
	}
	return out
}

// FuzzReplay replays one arbitrary live record (key, value) next to a valid offset and a valid
// classic group, through Harness.Reload as a shard load would (in two orders). A corrupt record
// must return an error, never panic. (Loads never see tombstones: the store drops them.)
func FuzzReplay(f *testing.F) {
	for _, s := range replaySeeds() {
		if s[1] != nil {
			f.Add(s[0], s[1])
		}
	}
	for _, r := range liveRecords(f) {
		f.Add(r.Key, r.Value)
	}
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	base := replaySeeds()
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if value == nil {
			value = []byte{}
		}
		h := coordtest.New(cfg)
		h.Log = append(h.Log, coordinator.Record{Key: base[0][0], Value: base[0][1]},
			coordinator.Record{Key: base[3][0], Value: base[3][1]},
			coordinator.Record{Key: key, Value: value})
		for seed := int64(0); seed < 2; seed++ {
			if st, err := h.Reload(seed); err == nil && st == nil {
				t.Fatal("Reload returned neither a state nor an error")
			}
		}
	})
}

// TestReplayCorruptPrefixes: every truncation of every seed record's key and value replays to
// an error or a state, never a panic.
func TestReplayCorruptPrefixes(t *testing.T) {
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	for _, s := range replaySeeds() {
		for i := 0; i <= len(s[0]); i++ {
			for j := 0; j <= len(s[1]); j++ {
				h := coordtest.New(cfg)
				v := s[1]
				if v != nil {
					v = v[:j]
				}
				h.Log = append(h.Log, coordinator.Record{Key: s[0][:i], Value: v})
				_, _ = h.Reload(0)
				if v == nil {
					break
				}
			}
		}
	}
}
