package coordinator_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/store"
)

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

func clRuntime(t *testing.T) (*coordinator.Runtime, *clFaultStore) {
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
	cfg := &coordinator.Config{Shards: 1, MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute,
		GroupMaxSize: 100, OffsetMetadataMaxBytes: 4096, OffsetsRetention: 24 * time.Hour}
	rt := coordinator.NewRuntime(cfg, fs, coordinator.NewManualClock(time.UnixMilli(1_700_000_000_000)),
		slog.New(slog.DiscardHandler), 0, coordinator.RuntimeHooks{})
	rt.Start()
	t.Cleanup(rt.Close)
	return rt, fs
}

// clDo runs op, retrying while the shard (re)loads.
func clDo(t *testing.T, rt *coordinator.Runtime, v int16, op func(*coordinator.State, *coordinator.Call)) (any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		resp, err := rt.Do(ctx, clGroup, clMeta(v, "cli"), op)
		if errors.Is(err, kerr.CoordinatorLoadInProgress) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		return resp, err
	}
}

func clRTJoin(t *testing.T, rt *coordinator.Runtime, member string) (*kmsg.JoinGroupResponse, error) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID = 3, clGroup, member
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 10000, 30000, "consumer"
	clProtos("range")(req)
	resp, err := clDo(t, rt, 3, coordinator.JoinGroup(req))
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.JoinGroupResponse), nil
}

func clRTSync(t *testing.T, rt *coordinator.Runtime, member string, gen int32, assign map[string]string) (*kmsg.SyncGroupResponse, error) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 3, clGroup, member, gen
	for id, a := range assign {
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID, sa.MemberAssignment = id, []byte(a)
		req.GroupAssignment = append(req.GroupAssignment, sa)
	}
	resp, err := clDo(t, rt, 3, coordinator.SyncGroup(req))
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.SyncGroupResponse), nil
}

func clRTGroup(t *testing.T, rt *coordinator.Runtime) (state coordinator.ClassicState, gen int32, members int) {
	t.Helper()
	_, err := clDo(t, rt, 0, func(st *coordinator.State, c *coordinator.Call) {
		if g, ok := st.Groups[clGroup].(*coordinator.ClassicGroup); ok {
			state, gen, members = g.State(), g.Generation(), g.NumMembers()
		} else {
			state, gen, members = coordinator.ClassicDead, -1, 0
		}
		st.Reply(c, nil)
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
		clDo(t, rt, 0, func(st *coordinator.State, c *coordinator.Call) {
			parked = st.Groups[clGroup].(*coordinator.ClassicGroup).NumAwaitingSync()
			st.Reply(c, nil)
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
	cfg := &coordinator.Config{Shards: 1, MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute,
		GroupMaxSize: 100, OffsetMetadataMaxBytes: 4096, OffsetsRetention: 24 * time.Hour}
	start := func(clock *coordinator.ManualClock, hooks coordinator.RuntimeHooks) *coordinator.Runtime {
		p, err := store.OpenPebble(db, 1)
		if err != nil {
			t.Fatal(err)
		}
		rt := coordinator.NewRuntime(cfg, p, clock, slog.New(slog.DiscardHandler), 0, hooks)
		rt.Start()
		return rt
	}
	clock := coordinator.NewManualClock(time.UnixMilli(1_700_000_000_000))
	rt := start(clock, coordinator.RuntimeHooks{})
	ja, err := clRTJoin(t, rt, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clRTSync(t, rt, ja.MemberID, 1, nil); err != nil {
		t.Fatal(err)
	}
	rt.Close()

	var commits atomic.Int32
	rt = start(clock, coordinator.RuntimeHooks{OnCommit: func(int32, int, time.Duration, error) { commits.Add(1) }})
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
