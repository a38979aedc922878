package storefault_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/diskguard"
	"github.com/muster-io/muster/internal/store/storefault"
)

// gate is the guard as the broker hands it to the coordinator (internal/broker groupWrites).
type gate struct{ g *diskguard.Guard }

func (w gate) Refusing() bool { return w.g.Refusing() }
func (w gate) Refuse(deletesOnly bool) error {
	if deletesOnly {
		return w.g.Refuse(diskguard.GroupDelete)
	}
	return w.g.Refuse(diskguard.GroupWrite)
}

// guardedEnv is env with a disk guard wired as internal/broker wires it: Pebble's logger, event
// listener and FS, the store's commits, the runtime's write gate and commit hook, the
// adapters' gate. free is the free space the guard sees; probeOK whether its probe write
// succeeds.
type guardedEnv struct {
	*env
	g       *diskguard.Guard
	free    atomic.Int64
	probeOK atomic.Bool
	loads   atomic.Int64
}

func openGuarded(t *testing.T, dir string, fs vfs.FS) *guardedEnv {
	t.Helper()
	ge := &guardedEnv{}
	ge.free.Store(1 << 30)
	ge.probeOK.Store(true)
	ge.g = diskguard.New(diskguard.Options{Dir: dir, MinFreeBytes: 100 << 20, Interval: 5 * time.Millisecond,
		Log:       slog.New(slog.DiscardHandler),
		DiskUsage: func(string) (uint64, uint64, error) { return uint64(ge.free.Load()), 2 << 30, nil },
		Probe: func() error {
			if !ge.probeOK.Load() {
				return errors.New("probe: still failing")
			}
			return nil
		}})
	ge.g.Start()
	if fs == nil {
		fs = vfs.Default
	}
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: ge.g.PebbleLogger(),
		EventListener: ge.g.EventListener(), FS: ge.g.FS(fs)})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := store.OpenPebbleGuarded(db, 1, ge.g)
	if err != nil {
		t.Fatal(err)
	}
	ge.env = &env{t: t, dir: dir, db: db, fs: storefault.Wrap(ps)}
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	log := slog.New(slog.DiscardHandler)
	ge.rt = engine.New(engine.Options[*coordinator.State]{
		Shards: 1,
		New:    func(i int32) *coordinator.State { return coordinator.NewState(i, cfg, log, engine.RandomIDs{}) },
		Store:  ge.fs, Log: log, Writes: gate{ge.g},
		Hooks: engine.Hooks{
			OnCommit: func(_ int32, _ int, _ time.Duration, err error) { ge.g.ReportError(err) },
			OnLoad:   func(int32, int, time.Duration, error) { ge.loads.Add(1) },
		},
	})
	ge.svc = &api.Service{RT: ge.rt, Cfg: cfg, Log: log, Writes: gate{ge.g}}
	ge.rt.Start()
	ge.waitReady()
	return ge
}

func (ge *guardedEnv) waitState(want diskguard.State) {
	ge.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ge.g.Status().State != want; {
		if time.Now().After(deadline) {
			ge.t.Fatalf("guard state %v, want %v", ge.g.Status().State, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestInjectedFaultDegradesTheNode: an Append fails (storefault). The batch's commit gets
// NOT_COORDINATOR (retriable), nothing panics, and the node degrades: commits are refused with
// COORDINATOR_NOT_AVAILABLE while reads go on, until a probe write succeeds; then commits work
// again, and a restart has every acknowledged commit.
func TestInjectedFaultDegradesTheNode(t *testing.T) {
	dir := t.TempDir()
	ge := openGuarded(t, dir, nil)
	if c := ge.commit("g", 0, 1); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	ge.probeOK.Store(false)
	ge.fs.FailAppends(storefault.AppendFault{Err: errDisk})
	if c := ge.commit("g", 0, 2); c != kerr.NotCoordinator.Code {
		t.Fatalf("commit whose Append failed: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	ge.waitState(diskguard.StoreError)
	if s := ge.g.Status(); s.Episodes != 1 || !strings.Contains(s.Reason, "disk on fire") {
		t.Fatalf("guard: %+v", s)
	}
	ge.waitReady()
	if c := ge.commit("g", 0, 3); c != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit while degraded: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(c))
	}
	if got := ge.fetch("g"); got[0] != 1 {
		t.Fatalf("read while degraded: %v, want the acknowledged {0: 1}", got)
	}
	ge.probeOK.Store(true)
	ge.waitState(diskguard.OK)
	if c := ge.commit("g", 0, 4); c != 0 {
		t.Fatalf("commit after the probe succeeded: %v", kerr.ErrorForCode(c))
	}
	ge.close()
	ge.g.Close()
	e := open(t, dir)
	defer e.close()
	if got := e.fetch("g"); got[0] != 4 {
		t.Fatalf("after restart: %v, want {0: 4}", got)
	}
}

// TestWALFaultFailsTheNodeWithoutPanic: Pebble's WAL writes fail (errorfs) under a commit.
// Pebble calls Logger.Fatalf; the guard's logger turns it into an error: the commit gets
// NOT_COORDINATOR, the process goes on, the store is failed (no more writes: commits get
// COORDINATOR_NOT_AVAILABLE up front), committed offsets are still read, and the files on disk
// hold every acknowledged commit.
func TestWALFaultFailsTheNodeWithoutPanic(t *testing.T) {
	dir := t.TempDir()
	var on atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return errorfs.ErrInjected
		}
		return nil
	})
	ge := openGuarded(t, dir, errorfs.Wrap(vfs.Default, inj))
	defer ge.g.Close()
	defer ge.rt.Close() // the DB is abandoned: its commit pipeline is dead
	for p := int32(0); p < 5; p++ {
		if c := ge.commit("g", p, int64(10+p)); c != 0 {
			t.Fatal(kerr.ErrorForCode(c))
		}
	}
	on.Store(true)
	if c := ge.commit("g", 0, 99); c != kerr.NotCoordinator.Code {
		t.Fatalf("commit during a WAL fault: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	on.Store(false)
	if s := ge.g.Status(); s.State != diskguard.Failed {
		t.Fatalf("guard after a WAL fault: %+v", s)
	}
	ge.waitReady()
	if c := ge.commit("g", 1, 99); c != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit on a failed store: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(c))
	}
	got := ge.fetch("g")
	for p := int32(1); p < 5; p++ {
		if got[p] != int64(10+p) {
			t.Fatalf("read on a failed store: %v", got)
		}
	}
	after := filepath.Join(t.TempDir(), "after")
	if err := os.CopyFS(after, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(after, "pebble", "LOCK"))
	r := open(t, after)
	defer r.close()
	got = r.fetch("g")
	for p := int32(0); p < 5; p++ {
		if got[p] != int64(10+p) && !(p == 0 && got[p] == 99) {
			t.Fatalf("after restart: %v, want every acknowledged commit", got)
		}
	}
}

// cgHeartbeat sends a ConsumerGroupHeartbeat.
func (ge *guardedEnv) cgHeartbeat(group, member string, epoch int32, topics ...string) *kmsg.ConsumerGroupHeartbeatResponse {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
	req.RebalanceTimeoutMillis = 30000
	if topics != nil {
		req.SubscribedTopicNames = topics
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ge.svc.ConsumerGroupHeartbeat(ctx, coordinator.Meta{APIVersion: 1}, req)
}

// TestHeartbeatThatWritesFreezesItsGroup: while the disk is short of space, a consumer group's
// steady heartbeats keep working; a join is refused up front; a heartbeat that would bump the
// group epoch is refused by the shard, which reloads once, and the group is then frozen: its
// next heartbeats are refused without reaching the shard (no reload storm), another group's
// heartbeats keep working, and once space is back the group heartbeats and bumps its epoch.
func TestHeartbeatThatWritesFreezesItsGroup(t *testing.T) {
	ge := openGuarded(t, t.TempDir(), nil)
	defer ge.g.Close()
	defer ge.close()
	join := func(group, member string) int32 {
		r := ge.cgHeartbeat(group, member, 0, "t1")
		if r.ErrorCode != 0 {
			t.Fatalf("join %s: %v", group, kerr.ErrorForCode(r.ErrorCode))
		}
		return r.MemberEpoch
	}
	ea := join("a", "m1")
	eb := join("b", "m1")
	ge.free.Store(50 << 20)
	ge.waitState(diskguard.LowSpace)
	loads := ge.loads.Load()

	for i := 0; i < 5; i++ {
		if r := ge.cgHeartbeat("a", "m1", ea); r.ErrorCode != 0 || r.MemberEpoch != ea {
			t.Fatalf("steady heartbeat while short of space: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
		}
	}
	if r := ge.cgHeartbeat("a", "m2", 0, "t1"); r.ErrorCode != kerr.CoordinatorNotAvailable.Code || r.ErrorMessage == nil {
		t.Fatalf("join while short of space: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if n := ge.loads.Load(); n != loads {
		t.Fatalf("%d reloads from heartbeats that write nothing or were refused up front", n-loads)
	}
	// A new subscription bumps the group epoch: a write.
	if r := ge.cgHeartbeat("a", "m1", ea, "t1", "t2"); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("heartbeat that bumps the epoch: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(r.ErrorCode))
	}
	ge.waitReady()
	for i := 0; i < 10; i++ {
		if r := ge.cgHeartbeat("a", "m1", ea, "t1", "t2"); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("frozen group's heartbeat: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		if r := ge.cgHeartbeat("b", "m1", eb); r.ErrorCode != 0 {
			t.Fatalf("other group's heartbeat: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	if n := ge.loads.Load() - loads; n != 1 {
		t.Fatalf("%d reloads for a group retrying a heartbeat that writes, want 1", n)
	}
	ge.free.Store(1 << 30)
	ge.waitState(diskguard.OK)
	if r := ge.cgHeartbeat("a", "m1", ea, "t1", "t2"); r.ErrorCode != 0 {
		t.Fatalf("heartbeat once space is back: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
