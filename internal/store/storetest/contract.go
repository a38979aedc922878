// Package storetest is the contract every coordinator store (store.Store) passes: the Memory
// store, the embedded Pebble store and the PostgreSQL store of cluster mode run the same tests.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/muster-io/muster/internal/store"
)

// Impl opens one store implementation for a test.
type Impl struct {
	// Open returns a store over the test's data with shards shards; called again (after Close)
	// it reopens the same data (a restart).
	Open func(shards int32) store.Store
	// Fencing: a newer Acquire of a shard fences the Appends of the older lease (ErrFenced).
	// The embedded Pebble store has one owner per data dir and needs none.
	Fencing bool
	// Ordered: the store's shards are store.OrderedAppenders (a later batch is never durable
	// before an earlier one), so the engine pipelines their batches. PostgreSQL's are not.
	Ordered bool
}

// Run runs the contract against impl; newImpl gives each subtest fresh data.
func Run(t *testing.T, newImpl func(t *testing.T) Impl) {
	tests := []struct {
		name string
		fn   func(t *testing.T, impl Impl)
	}{
		{"AppendLoadKeyOrder", testAppendLoadKeyOrder},
		{"LastValueWinsAndTombstones", testLastValueWins},
		{"ShardsAreIsolated", testShardsIsolated},
		{"DurableAcrossReopen", testReopen},
		{"BinaryKeysAndLargeValues", testBinary},
		{"EpochIncreases", testEpochIncreases},
		{"Fencing", testFencing},
		{"ConcurrentShards", testConcurrentShards},
		{"BorrowedLoadEqualsLoad", testBorrowed},
		{"EmptyAppend", testEmptyAppend},
		{"OrderedAppender", testOrderedAppender},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newImpl(t)) })
	}
}

func acquire(t *testing.T, s store.Store, shard int32) store.Shard {
	t.Helper()
	l, err := s.Acquire(context.Background(), shard)
	if err != nil {
		t.Fatalf("acquire %d: %v", shard, err)
	}
	if l.ID() != shard {
		t.Fatalf("lease for shard %d has id %d", shard, l.ID())
	}
	return l
}

func appendOK(t *testing.T, l store.Shard, recs ...store.Record) {
	t.Helper()
	if err := l.Append(context.Background(), recs); err != nil {
		t.Fatalf("append: %v", err)
	}
}

func load(t *testing.T, l store.Shard) []store.Record {
	t.Helper()
	var out []store.Record
	if err := l.Load(context.Background(), func(r store.Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("load: %v", err)
	}
	return out
}

func rec(k, v string) store.Record {
	r := store.Record{Key: []byte(k)}
	if v != "" {
		r.Value = []byte(v)
	}
	return r
}

func dump(recs []store.Record) string {
	var b bytes.Buffer
	for _, r := range recs {
		if r.Value == nil {
			fmt.Fprintf(&b, "%q=<nil> ", r.Key)
		} else {
			fmt.Fprintf(&b, "%q=%q ", r.Key, r.Value)
		}
	}
	return b.String()
}

func expect(t *testing.T, got []store.Record, want ...store.Record) {
	t.Helper()
	if dump(got) != dump(want) {
		t.Fatalf("loaded %s\nwant   %s", dump(got), dump(want))
	}
}

func testAppendLoadKeyOrder(t *testing.T, impl Impl) {
	s := impl.Open(4)
	defer s.Close()
	if got := s.Config().Shards; got != 4 {
		t.Fatalf("Config().Shards = %d", got)
	}
	l := acquire(t, s, 2)
	appendOK(t, l, rec("m", "1"), rec("a", "2"))
	appendOK(t, l, rec("z", "3"), rec("b", "4"))
	expect(t, load(t, l), rec("a", "2"), rec("b", "4"), rec("m", "1"), rec("z", "3"))
}

func testLastValueWins(t *testing.T, impl Impl) {
	s := impl.Open(1)
	defer s.Close()
	l := acquire(t, s, 0)
	appendOK(t, l, rec("k1", "a"), rec("k2", "b"), rec("k3", "c"))
	appendOK(t, l, rec("k1", "a2"), rec("k2", ""))
	appendOK(t, l, rec("k4", ""), rec("k3", "c2")) // a tombstone of an absent key is fine
	expect(t, load(t, l), rec("k1", "a2"), rec("k3", "c2"))
}

func testShardsIsolated(t *testing.T, impl Impl) {
	s := impl.Open(3)
	defer s.Close()
	l0, l1 := acquire(t, s, 0), acquire(t, s, 1)
	appendOK(t, l0, rec("k", "zero"))
	appendOK(t, l1, rec("k", "one"), rec("j", "one"))
	appendOK(t, l1, rec("k", ""))
	expect(t, load(t, l0), rec("k", "zero"))
	expect(t, load(t, l1), rec("j", "one"))
	expect(t, load(t, acquire(t, s, 2)))
}

func testReopen(t *testing.T, impl Impl) {
	s := impl.Open(2)
	l := acquire(t, s, 1)
	appendOK(t, l, rec("a", "1"), rec("b", "2"))
	appendOK(t, l, rec("a", ""))
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("release: %v", err)
	}
	s.Close()
	s = impl.Open(2)
	defer s.Close()
	l2 := acquire(t, s, 1)
	if l2.Epoch() <= l.Epoch() {
		t.Fatalf("epoch after reopen %d, before %d: must grow", l2.Epoch(), l.Epoch())
	}
	expect(t, load(t, l2), rec("b", "2"))
}

func testBinary(t *testing.T, impl Impl) {
	s := impl.Open(1)
	defer s.Close()
	l := acquire(t, s, 0)
	big := bytes.Repeat([]byte{0, 0xff, 7}, 400_000) // 1.2 MB
	keys := [][]byte{{0}, {0, 0}, {0xff}, {0xff, 0}, {0x7f, 0x80}, {1, 0, 1}}
	var recs []store.Record
	for i, k := range keys {
		v := []byte{byte(i), 0}
		if i == 2 {
			v = big
		}
		recs = append(recs, store.Record{Key: k, Value: v})
	}
	appendOK(t, l, recs...)
	sort.Slice(recs, func(i, j int) bool { return bytes.Compare(recs[i].Key, recs[j].Key) < 0 })
	expect(t, load(t, l), recs...)
}

func testEpochIncreases(t *testing.T, impl Impl) {
	s := impl.Open(2)
	defer s.Close()
	l := acquire(t, s, 0)
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	l2 := acquire(t, s, 0)
	if l2.Epoch() <= l.Epoch() {
		t.Fatalf("epochs %d then %d: must strictly increase", l.Epoch(), l2.Epoch())
	}
}

func testFencing(t *testing.T, impl Impl) {
	if !impl.Fencing {
		t.Skip("single-owner store: no fencing")
	}
	s := impl.Open(1)
	defer s.Close()
	old := acquire(t, s, 0)
	appendOK(t, old, rec("a", "old"))
	cur := acquire(t, s, 0)
	if err := old.Append(context.Background(), []store.Record{rec("a", "stale"), rec("b", "stale")}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale owner's append: %v, want ErrFenced", err)
	}
	select {
	case <-old.Lost():
	default:
		t.Fatal("a fenced lease's Lost is not closed")
	}
	appendOK(t, cur, rec("c", "new"))
	expect(t, load(t, cur), rec("a", "old"), rec("c", "new"))
	if err := old.Load(context.Background(), func(store.Record) error { return nil }); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale owner's load: %v, want ErrFenced", err)
	}
}

func testConcurrentShards(t *testing.T, impl Impl) {
	const shards, batches = 4, 40
	s := impl.Open(shards)
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, shards)
	for sh := int32(0); sh < shards; sh++ {
		l := acquire(t, s, sh)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < batches; i++ {
				if err := l.Append(context.Background(), []store.Record{rec(fmt.Sprintf("k%03d", i), fmt.Sprint(sh)), rec("last", fmt.Sprint(i))}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for sh := int32(0); sh < shards; sh++ {
		got := load(t, acquire(t, s, sh))
		if len(got) != batches+1 || string(got[batches].Key) != "last" || string(got[batches].Value) != fmt.Sprint(batches-1) {
			t.Fatalf("shard %d: %d records, last %s", sh, len(got), dump(got[len(got)-1:]))
		}
	}
}

func testBorrowed(t *testing.T, impl Impl) {
	s := impl.Open(1)
	defer s.Close()
	l := acquire(t, s, 0)
	for i := 0; i < 10; i++ {
		appendOK(t, l, rec(fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)))
	}
	bl, ok := l.(store.BorrowingLoader)
	if !ok {
		t.Skip("no borrowing loader")
	}
	var got []store.Record
	if err := bl.LoadBorrowed(context.Background(), func(r store.Record) error {
		got = append(got, store.Record{Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, load(t, l)...)
}

func testEmptyAppend(t *testing.T, impl Impl) {
	s := impl.Open(1)
	defer s.Close()
	l := acquire(t, s, 0)
	appendOK(t, l)
	expect(t, load(t, l))
}

// testOrderedAppender: the shard has the OrderedAppender capability exactly when the store
// claims it; with it, batches begun one after another before any wait (as the engine pipelines
// them) load as the same Appends in sequence would, empty batches included, and a fenced lease's
// wait fails with ErrFenced.
func testOrderedAppender(t *testing.T, impl Impl) {
	s := impl.Open(1)
	defer s.Close()
	l := acquire(t, s, 0)
	oa, ok := l.(store.OrderedAppender)
	if ok != impl.Ordered {
		t.Fatalf("shard is an OrderedAppender: %v, the store claims %v", ok, impl.Ordered)
	}
	if !ok {
		return
	}
	ctx := context.Background()
	var waits []func() error
	for i := 0; i < 20; i++ {
		recs := []store.Record{rec("last", fmt.Sprint(i)), rec(fmt.Sprintf("k%02d", i), fmt.Sprint(i))}
		if i%5 == 4 {
			recs = append(recs, store.Record{Key: []byte(fmt.Sprintf("k%02d", i-1))}) // delete the previous batch's key
		}
		if i == 7 {
			recs = nil
		}
		waits = append(waits, oa.BeginAppend(ctx, recs))
	}
	for i, w := range waits {
		if err := w(); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	var want []store.Record
	for i := 0; i < 20; i++ {
		if i == 7 || i%5 == 3 {
			continue // empty, or deleted by the next batch
		}
		want = append(want, rec(fmt.Sprintf("k%02d", i), fmt.Sprint(i)))
	}
	want = append(want, rec("last", "19"))
	expect(t, load(t, l), want...)
	if !impl.Fencing {
		return
	}
	acquire(t, s, 0)
	if err := oa.BeginAppend(ctx, []store.Record{rec("stale", "x")})(); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale owner's pipelined append: %v, want ErrFenced", err)
	}
}
