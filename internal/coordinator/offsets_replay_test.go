package coordinator

import (
	"errors"
	"log/slog"
	"math/rand"
	"reflect"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgOffsetValue is the reference decoding of OffsetCommitValue (kmsg), as replay did before
// the in-place fast path.
func kmsgOffsetValue(value []byte) (*OffsetValue, error) {
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		return nil, err
	}
	ov := &OffsetValue{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitMs: v.CommitTimestamp}
	if v.Version >= 3 {
		ov.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 && v.ExpireTimestamp > 0 {
		ov.ExpireMs = v.ExpireTimestamp
	}
	return ov, nil
}

// TestParseOffsetMatchesKmsg: the in-place key and value readers agree with kmsg on every value
// version, on truncations of each and on trailing bytes; when they decline, kmsg decides.
func TestParseOffsetMatchesKmsg(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		v := kmsg.NewOffsetCommitValue()
		v.Version = int16(rnd.Intn(5))
		v.Offset = rnd.Int63() - rnd.Int63()
		v.LeaderEpoch = rnd.Int31n(10) - 1
		v.Metadata = []string{"", "m", "meta-data"}[rnd.Intn(3)]
		v.CommitTimestamp = rnd.Int63n(2_000_000_000_000)
		v.ExpireTimestamp = rnd.Int63n(2_000_000_000_000) - 1_000_000_000_000
		full := v.AppendTo(nil)
		inputs := [][]byte{full, append(append([]byte{}, full...), 1, 2, 3)}
		for n := 0; n < len(full); n++ {
			inputs = append(inputs, full[:n])
		}
		for _, in := range inputs {
			want, werr := kmsgOffsetValue(in)
			var got OffsetValue
			if parseOffsetValue(in, &got) {
				if werr != nil || !reflect.DeepEqual(&got, want) {
					t.Fatalf("value %x: fast %+v, kmsg %+v (%v)", in, got, want, werr)
				}
			}
		}
		k := kmsg.OffsetCommitKey{Version: int16(rnd.Intn(2)), Group: "g" + strconv.Itoa(i), Topic: "t" + strconv.Itoa(i%7), Partition: rnd.Int31()}
		key := k.AppendTo(nil)
		for n := 0; n <= len(key); n++ {
			var ref kmsg.OffsetCommitKey
			rerr := ref.ReadFrom(key[:n])
			g, tp, p, ok := parseOffsetKey(key[:n])
			if ok && (rerr != nil || string(g) != ref.Group || string(tp) != ref.Topic || p != ref.Partition) {
				t.Fatalf("key %x: fast %q %q %d, kmsg %+v (%v)", key[:n], g, tp, p, ref, rerr)
			}
			if !ok && rerr == nil {
				t.Fatalf("key %x: fast path declined a key kmsg reads", key[:n])
			}
		}
	}
}

// TestLoadRunsMatchLiveReplay: replaying the same records while loading and live gives equal
// offsets, counts and
// interned topic counts, for sorted input, shuffled input, duplicates and tombstones mixed with
// other record types.
func TestLoadRunsMatchLiveReplay(t *testing.T) {
	recs := replayBenchOffsets(20, 30)
	recs = append(recs, replayBenchMembers(3, 2)...)
	rnd := rand.New(rand.NewSource(2))
	for round := 0; round < 20; round++ {
		in := append([]Record(nil), recs...)
		if round > 0 {
			rnd.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		}
		// tombstones and re-commits of some offsets, later in the stream
		for i := 0; i < 50; i++ {
			r := recs[rnd.Intn(20*30)]
			if rnd.Intn(2) == 0 {
				r = Record{Key: r.Key}
			}
			in = append(in, r)
		}
		if round%2 == 0 {
			sortRecords(in[:len(in)-50])
		}
		live := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
		load := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
		for _, r := range in {
			if err := live.replay(r); err != nil {
				t.Fatal(err)
			}
			if err := load.Replay(r); err != nil {
				t.Fatal(err)
			}
		}
		if live.Offsets.Count() != load.Offsets.Count() {
			t.Fatalf("round %d: count live %d, load %d", round, live.Offsets.Count(), load.Offsets.Count())
		}
		if !reflect.DeepEqual(durableView(live), durableView(load)) {
			t.Fatalf("round %d: durable views differ", round)
		}
		if !reflect.DeepEqual(live.Offsets.topics, load.Offsets.topics) {
			t.Fatalf("round %d: interned topics live %v, load %v", round, live.Offsets.topics, load.Offsets.topics)
		}
		n := 0
		for _, g := range load.Offsets.GroupIDs() {
			load.Offsets.Each(g, func(string, *OffsetValue) bool { n++; return true })
		}
		if n != load.Offsets.Count() {
			t.Fatalf("round %d: %d offsets in maps, Count %d", round, n, load.Offsets.Count())
		}
	}
}

// TestReplayOffsetCorrupt: malformed offset records are errors wrapping ErrCorruptRecord.
func TestReplayOffsetCorrupt(t *testing.T) {
	st := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
	key := offsetKey("g", "t", 1)
	for _, r := range []Record{
		{Key: key[:5], Value: []byte{0, 3}},
		{Key: key, Value: []byte{0, 3, 0}},
		{Key: key, Value: []byte{0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}},
	} {
		if err := st.Replay(r); !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("record %x/%x: err %v", r.Key, r.Value, err)
		}
	}
}

// TestAssignmentEpochsForms: epochs built with set (map form) and the same epochs decoded from a
// record (sorted form) answer get, len and equal alike; a decoded list that is not sorted (or
// repeats a partition, the last one winning) reads as its sorted form.
func TestAssignmentEpochsForms(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	for round := 0; round < 200; round++ {
		var built assignmentEpochs
		type ent struct {
			t [16]byte
			p int32
			e int32
		}
		var ents []ent
		for i := 0; i < rnd.Intn(20); i++ {
			var tid [16]byte
			tid[15] = byte(rnd.Intn(3))
			x := ent{tid, rnd.Int31n(8), rnd.Int31n(100)}
			ents = append(ents, x)
			built.set(x.t, x.p, x.e)
		}
		// unordered raw list, as a foreign writer might produce
		e := Enc{}
		e.ArrayLen(len(ents))
		for _, x := range ents {
			e.UUID(x.t)
			e.Int32(x.p)
			e.Int32(x.e)
		}
		d := Dec{B: e.B}
		dec := decAssignmentEpochs(&d)
		if err := d.Done(); err != nil {
			t.Fatal(err)
		}
		// and the canonical encoding of the built value
		c := &consumerCurrent{epochs: built}
		e2 := Enc{}
		encAssignmentEpochs(&e2, c)
		d2 := Dec{B: e2.B}
		canon := assignmentEpochs{}
		if c.epochs.len() > 0 {
			canon = decAssignmentEpochs(&d2)
		}
		for _, v := range []assignmentEpochs{dec, canon} {
			if v.m != nil {
				t.Fatalf("decoded epochs in map form")
			}
			if !v.equal(built) || !built.equal(v) || v.len() != built.len() {
				t.Fatalf("round %d: decoded %v, built %v", round, v.sorted, built.m)
			}
			for _, x := range ents {
				want, _ := built.get(x.t, x.p)
				if got, ok := v.get(x.t, x.p); !ok || got != want {
					t.Fatalf("round %d: get %v/%d = %d,%v want %d", round, x.t[15], x.p, got, ok, want)
				}
			}
			if _, ok := v.get([16]byte{9}, 0); ok {
				t.Fatal("get of an absent partition")
			}
		}
	}
}

// The expire timestamps kept aside (Offsets.expire) follow their offsets: set, cleared by a
// commit without one, dropped with the offset; a replay of the records agrees.
func TestOffsetExpireKeptAside(t *testing.T) {
	live := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
	live.WriteOffset("g", "t", 0, &OffsetValue{Offset: 1, CommitMs: 10, ExpireMs: 99})
	live.WriteOffset("g", "t", 1, &OffsetValue{Offset: 2, CommitMs: 10, ExpireMs: 77})
	if v, _ := live.Offsets.Get("g", "t", 0); v.ExpireMs != 99 || v.LeaderEpoch != -1 {
		t.Fatalf("with expire: %+v", v)
	}
	live.WriteOffset("g", "t", 0, &OffsetValue{Offset: 3, CommitMs: 11, LeaderEpoch: 4})
	if v, _ := live.Offsets.Get("g", "t", 0); v.ExpireMs != 0 || v.LeaderEpoch != 4 {
		t.Fatalf("after a commit without expire: %+v", v)
	}
	live.WriteOffsetTombstone("g", "t", 1)
	if len(live.Offsets.expire) != 0 {
		t.Fatalf("expire left behind: %v", live.Offsets.expire)
	}
	live.WriteOffset("g", "t", 2, &OffsetValue{Offset: 5, CommitMs: 12, ExpireMs: 55})
	replayed := NewState(0, microBenchConfig(), slog.New(slog.DiscardHandler), &testIDs{})
	for _, r := range dedupeRecords(live.TakeEffects().Records) {
		if err := replayed.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(durableView(live), durableView(replayed)) {
		t.Fatalf("live %v\nreplayed %v", durableView(live), durableView(replayed))
	}
}

func dedupeRecords(recs []Record) []Record {
	last := map[string]int{}
	for i, r := range recs {
		last[string(r.Key)] = i
	}
	var out []Record
	for i, r := range recs {
		if last[string(r.Key)] == i && r.Value != nil {
			out = append(out, r)
		}
	}
	return out
}
