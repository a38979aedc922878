package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/store"
)

// The engine driving the real group coordinator shard on a real Pebble store.

type groupRT = engine.Runtime[*coordinator.State]

func groupRuntime(shards int32, st store.Store, clock engine.Clock, hooks engine.Hooks) *groupRT {
	cfg := coordtest.Config()
	cfg.Shards = shards
	cfg.Classic = coordinator.ClassicConfig{MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute, MaxSize: 100}
	cfg.Offsets = coordinator.OffsetsConfig{MetadataMaxBytes: 4096, Retention: 24 * time.Hour}
	log := slog.New(slog.DiscardHandler)
	ids := &coordtest.SeqIDs{} // one sequence across reloads: a reloaded shard must not reuse member ids
	return engine.New(engine.Options[*coordinator.State]{
		Shards: shards,
		New:    func(i int32) *coordinator.State { return coordinator.NewState(i, cfg, log, ids) },
		Store:  st, Clock: clock, Log: log, QueueDepth: 16, Hooks: hooks,
	})
}

func doGroup[T any](ctx context.Context, rt *groupRT, group string, op func(*coordinator.State, *coordinator.Call[T])) (T, error) {
	return engine.Do(ctx, rt, coordinator.ShardFor(group, rt.Shards()), coordinator.Meta{APIVersion: 8}, op)
}

const clGroup = "g"

func clMeta(v int16, client string) coordinator.Meta {
	return coordinator.Meta{APIVersion: v, ClientID: &client, ClientHost: "/127.0.0.1"}
}

func clProtos(names ...string) func(*kmsg.JoinGroupRequest) {
	return func(r *kmsg.JoinGroupRequest) {
		r.Protocols = nil
		for _, n := range names {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = n, []byte("md-"+n)
			r.Protocols = append(r.Protocols, p)
		}
	}
}

// slowStore blocks the load of one shard until released: a shard replaying a huge log.
type slowStore struct {
	store.Store
	slow    int32
	release chan struct{}
}

type slowShard struct {
	store.Shard
	release chan struct{}
}

func (s *slowStore) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	sh, err := s.Store.Acquire(ctx, shard)
	if err != nil || shard != s.slow {
		return sh, err
	}
	return &slowShard{Shard: sh, release: s.release}, nil
}

func (s *slowShard) Load(ctx context.Context, fn func(store.Record) error) error {
	<-s.release
	return s.Shard.Load(ctx, fn)
}

func openPebble(t *testing.T, shards int32) (*pebble.DB, store.Store) {
	t.Helper()
	db, err := pebble.Open(filepath.Join(t.TempDir(), "db"), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := store.OpenPebble(db, shards)
	if err != nil {
		t.Fatal(err)
	}
	return db, st
}

func commitOne(group string) func(st *coordinator.State, c *coordinator.Call[*kmsg.OffsetCommitResponse]) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 8, group, -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7}}}}
	return coordinator.OffsetCommit(req)
}

// groupOnShard finds a group id that hashes to shard.
func groupOnShard(shard, shards int32) string {
	for i := 0; ; i++ {
		g := "g" + strconv.Itoa(i)
		if coordinator.ShardFor(g, shards) == shard {
			return g
		}
	}
}

// TestLoadingShardDoesNotStallOthers: while one shard is still replaying, groups on other shards
// are served, groups on the loading shard get COORDINATOR_LOAD_IN_PROGRESS, and the runtime is
// not ready; once the load finishes the shard serves and the runtime is ready.
func TestLoadingShardDoesNotStallOthers(t *testing.T) {
	_, base := openPebble(t, 4)
	ss := &slowStore{Store: base, slow: 0, release: make(chan struct{})}
	rt := groupRuntime(4, ss, engine.WallClock{}, engine.Hooks{})
	rt.Start()
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other := groupOnShard(1, 4)
	var err error
	for i := 0; i < 1000; i++ { // shard 1 loads at once (empty); wait for it
		if _, err = doGroup(ctx, rt, other, commitOne(other)); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		t.Fatalf("group on a loaded shard not served while another shard loads: %v", err)
	}
	slowGroup := groupOnShard(0, 4)
	if _, err := doGroup(ctx, rt, slowGroup, commitOne(slowGroup)); !errors.Is(err, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("group on the loading shard: err %v, want COORDINATOR_LOAD_IN_PROGRESS", err)
	}
	if rt.Ready() || rt.ShardStatus()[0] != "loading" {
		t.Fatalf("ready=%v status=%v while shard 0 loads", rt.Ready(), rt.ShardStatus())
	}
	close(ss.release)
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	if _, err := doGroup(ctx, rt, slowGroup, commitOne(slowGroup)); err != nil {
		t.Fatalf("after load: %v", err)
	}
}

// failingStore fails Appends on command.
type failingStore struct {
	store.Store
	fail chan error
}

type failingShard struct {
	store.Shard
	fail chan error
}

func (s *failingStore) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	sh, err := s.Store.Acquire(ctx, shard)
	if err != nil {
		return nil, err
	}
	return &failingShard{Shard: sh, fail: s.fail}, nil
}

func (s *failingShard) Append(ctx context.Context, recs []store.Record) error {
	select {
	case err := <-s.fail:
		return err
	default:
		return s.Shard.Append(ctx, recs)
	}
}

// TestFailedAppendFailsRequestsAndReloads: a failed durable write answers NOT_COORDINATOR
// (retriable), the shard reloads from the store, and the failed commit is not visible; the
// acknowledged one before it is.
func TestFailedAppendFailsRequestsAndReloads(t *testing.T) {
	_, base := openPebble(t, 1)
	fs := &failingStore{Store: base, fail: make(chan error, 1)}
	rt := groupRuntime(1, fs, engine.WallClock{}, engine.Hooks{})
	rt.Start()
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	commit := func(off int64) error {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 8, "g", -1
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: off}}}}
		_, err := doGroup(ctx, rt, "g", coordinator.OffsetCommit(req))
		return err
	}
	if err := commit(1); err != nil {
		t.Fatal(err)
	}
	fs.fail <- errors.New("injected: disk write failed")
	if err := commit(2); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("commit during failed append: %v, want NOT_COORDINATOR", err)
	}
	var got int64 = -2
	for i := 0; i < 5000 && got == -2; i++ {
		r, err := doGroup(ctx, rt, "g", func(st *coordinator.State, c *coordinator.Call[int64]) {
			v, ok := st.Offsets.Get("g", "t", 0)
			if !ok {
				c.Reply(st, -1)
				return
			}
			c.Reply(st, v.Offset)
		})
		if err == nil {
			got = r
			break
		}
		time.Sleep(time.Millisecond)
	}
	if got != 1 {
		t.Fatalf("after reload the committed offset is %d, want the acknowledged 1 (not the failed 2)", got)
	}
	if err := commit(3); err != nil {
		t.Fatalf("commit after reload: %v", err)
	}
}

// clFaultStore is the real Pebble store with one injected fault: when failNext is set, the next
// Append fails without writing (as a full disk or an I/O error would).
type clFaultStore struct {
	*store.Pebble
	failNext atomic.Bool
}

func (s *clFaultStore) Acquire(ctx context.Context, shard int32) (store.Shard, error) {
	l, err := s.Pebble.Acquire(ctx, shard)
	if err != nil {
		return nil, err
	}
	return &clFaultShard{Shard: l, s: s}, nil
}

type clFaultShard struct {
	store.Shard
	s *clFaultStore
}

var errClInjected = errors.New("injected append failure")

func (l *clFaultShard) Append(ctx context.Context, recs []store.Record) error {
	if l.s.failNext.CompareAndSwap(true, false) {
		return errClInjected
	}
	return l.Shard.Append(ctx, recs)
}

func clRuntime(t *testing.T) (*groupRT, *clFaultStore) {
	t.Helper()
	db, err := pebble.Open(filepath.Join(t.TempDir(), "pebble"), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := store.OpenPebble(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	fs := &clFaultStore{Pebble: p}
	rt := groupRuntime(1, fs, coordtest.NewManualClock(coordtest.T0), engine.Hooks{})
	rt.Start()
	t.Cleanup(rt.Close)
	return rt, fs
}

// clDo runs op, retrying while the shard (re)loads.
func clDo[T any](t *testing.T, rt *groupRT, v int16, op func(*coordinator.State, *coordinator.Call[T])) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		resp, err := engine.Do(ctx, rt, coordinator.ShardFor(clGroup, rt.Shards()), clMeta(v, "cli"), op)
		if errors.Is(err, kerr.CoordinatorLoadInProgress) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		return resp, err
	}
}

func clRTJoin(t *testing.T, rt *groupRT, member string) (*kmsg.JoinGroupResponse, error) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID = 3, clGroup, member
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 10000, 30000, "consumer"
	clProtos("range")(req)
	return clDo(t, rt, 3, coordinator.JoinGroup(req))
}

func clRTSync(t *testing.T, rt *groupRT, member string, gen int32, assign map[string]string) (*kmsg.SyncGroupResponse, error) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 3, clGroup, member, gen
	for id, a := range assign {
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID, sa.MemberAssignment = id, []byte(a)
		req.GroupAssignment = append(req.GroupAssignment, sa)
	}
	return clDo(t, rt, 3, coordinator.SyncGroup(req))
}

func clRTGroup(t *testing.T, rt *groupRT) (state coordinator.ClassicState, gen int32, members int) {
	t.Helper()
	_, err := clDo(t, rt, 0, func(st *coordinator.State, c *coordinator.Call[coordinator.Ack]) {
		if g, ok := st.Groups[clGroup].(*coordinator.ClassicGroup); ok {
			state, gen, members = g.State(), g.Generation(), g.NumMembers()
		} else {
			state, gen, members = coordinator.ClassicDead, -1, 0
		}
		c.Reply(st, coordinator.Ack{})
	})
	if err != nil {
		t.Fatal(err)
	}
	return
}

// TestClassicRuntimeFailedAppend: when the batch holding the leader's assignment fails to
// append, the leader and the follower waiting in SyncGroup both get NOT_COORDINATOR, the shard
// reloads from the store (the previous generation), and the group then rebalances normally.
func TestClassicRuntimeFailedAppend(t *testing.T) {
	rt, fs := clRuntime(t)
	// Generation 1: a alone, Stable and persisted.
	ja, err := clRTJoin(t, rt, "")
	if err != nil || ja.ErrorCode != 0 {
		t.Fatalf("join a: %v %+v", err, ja)
	}
	a := ja.MemberID
	if r, err := clRTSync(t, rt, a, 1, map[string]string{a: "gen1"}); err != nil || r.ErrorCode != 0 {
		t.Fatalf("sync a: %v %+v", err, r)
	}
	// b joins, a rejoins: generation 2 in CompletingRebalance.
	var wg sync.WaitGroup
	var jb *kmsg.JoinGroupResponse
	wg.Add(1)
	go func() { defer wg.Done(); jb, _ = clRTJoin(t, rt, "") }()
	for {
		if st, _, n := clRTGroup(t, rt); st == coordinator.ClassicPreparingRebalance && n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ja, err = clRTJoin(t, rt, a)
	wg.Wait()
	if err != nil || ja.Generation != 2 || jb == nil || jb.Generation != 2 {
		t.Fatalf("generation 2 joins: %v %+v %+v", err, ja, jb)
	}
	b := jb.MemberID
	// b waits in SyncGroup; the leader's sync batch fails.
	var sb *kmsg.SyncGroupResponse
	var sbErr error
	wg.Add(1)
	go func() { defer wg.Done(); sb, sbErr = clRTSync(t, rt, b, 2, nil) }()
	for parked := 0; parked == 0; time.Sleep(time.Millisecond) { // let b's sync park
		clDo(t, rt, 0, func(st *coordinator.State, c *coordinator.Call[coordinator.Ack]) {
			parked = st.Groups[clGroup].(*coordinator.ClassicGroup).NumAwaitingSync()
			c.Reply(st, coordinator.Ack{})
		})
	}
	fs.failNext.Store(true)
	_, errA := clRTSync(t, rt, a, 2, map[string]string{a: "pa", b: "pb"})
	wg.Wait()
	if !errors.Is(errA, kerr.NotCoordinator) {
		t.Fatalf("leader sync in a failed batch: %v", errA)
	}
	if !errors.Is(sbErr, kerr.NotCoordinator) {
		t.Fatalf("follower sync released with a failed batch: %v %+v", sbErr, sb)
	}
	// Reloaded: generation 1 with a only, Stable.
	if st, gen, n := clRTGroup(t, rt); st != coordinator.ClassicStable || gen != 1 || n != 1 {
		t.Fatalf("after reload: %v generation %d members %d", st, gen, n)
	}
	// The group moves on: b rejoins as new, a rejoins, both sync.
	wg.Add(1)
	go func() { defer wg.Done(); jb, _ = clRTJoin(t, rt, "") }()
	for {
		if st, _, n := clRTGroup(t, rt); st == coordinator.ClassicPreparingRebalance && n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ja, err = clRTJoin(t, rt, a)
	wg.Wait()
	if err != nil || ja.Generation != 2 || jb.Generation != 2 {
		t.Fatalf("rejoin after reload: %v %+v %+v", err, ja, jb)
	}
	wg.Add(1)
	go func() { defer wg.Done(); sb, sbErr = clRTSync(t, rt, jb.MemberID, 2, nil) }()
	ra, err := clRTSync(t, rt, a, 2, map[string]string{a: "pa", jb.MemberID: "pb"})
	wg.Wait()
	if err != nil || ra.ErrorCode != 0 || sbErr != nil || string(sb.MemberAssignment) != "pb" {
		t.Fatalf("sync after reload: %v %+v / %v %+v", err, ra, sbErr, sb)
	}
}

// TestClassicRuntimeTimersArmedOnLoad: after a restart, a reloaded member's session timer fires
// on an idle shard (no request needed): the group empties and persists that.
func TestClassicRuntimeTimersArmedOnLoad(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := func(clock *coordtest.ManualClock, hooks engine.Hooks) *groupRT {
		p, err := store.OpenPebble(db, 1)
		if err != nil {
			t.Fatal(err)
		}
		rt := groupRuntime(1, p, clock, hooks)
		rt.Start()
		return rt
	}
	clock := coordtest.NewManualClock(coordtest.T0)
	rt := start(clock, engine.Hooks{})
	ja, err := clRTJoin(t, rt, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clRTSync(t, rt, ja.MemberID, 1, nil); err != nil {
		t.Fatal(err)
	}
	rt.Close()

	var commits atomic.Int32
	rt = start(clock, engine.Hooks{OnCommit: func(int32, int, time.Duration, error) { commits.Add(1) }})
	defer rt.Close()
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	clock.Advance(11 * time.Second) // past the 10 s session; no request is sent
	for deadline := time.Now().Add(5 * time.Second); commits.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the reloaded member's session timer never fired on the idle shard")
		}
	}
	if st, gen, n := clRTGroup(t, rt); st != coordinator.ClassicEmpty || gen != 2 || n != 0 {
		t.Fatalf("after session expiry: %v generation %d members %d", st, gen, n)
	}
}
