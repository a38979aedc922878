package storefault_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/storefault"
)

type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

// env is a coordinator runtime assembled as internal/broker does it, over a fault-injecting
// wrapper of the Pebble store, with one shard.
type env struct {
	t   *testing.T
	dir string
	db  *pebble.DB
	fs  *storefault.Store
	rt  *api.Runtime
	svc *api.Service
	// timeout bounds each request (default 10 s).
	timeout time.Duration
}

func open(t *testing.T, dir string) *env {
	t.Helper()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := store.OpenPebble(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, db: db, fs: storefault.Wrap(ps)}
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	log := slog.New(slog.DiscardHandler)
	e.rt, e.svc = newCoordinator(cfg, e.fs, log)
	e.rt.Start()
	e.waitReady()
	return e
}

func (e *env) waitReady() {
	e.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !e.rt.Ready(); {
		if time.Now().After(deadline) {
			e.t.Fatalf("shards not ready: %v", e.rt.ShardStatus())
		}
		time.Sleep(time.Millisecond)
	}
}

func (e *env) close() {
	e.rt.Close()
	if err := e.db.Close(); err != nil {
		e.t.Fatal(err)
	}
}

// commit commits offset for topic t, partition p of group g (a simple group: generation -1)
// and returns the partition's error code.
func (e *env) commit(g string, p int32, offset int64) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation = g, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = p, offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	timeout := e.timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp := e.svc.OffsetCommit(ctx, coordinator.Meta{APIVersion: 8}, req)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// fetch returns every committed offset of group g by partition.
func (e *env) fetch(g string) map[int32]int64 {
	e.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = g
	req.Groups = append(req.Groups, rg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := e.svc.OffsetFetch(ctx, coordinator.Meta{APIVersion: 8}, req)
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		e.t.Fatalf("offset fetch: %+v", resp.Groups)
	}
	out := map[int32]int64{}
	for _, t := range resp.Groups[0].Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				e.t.Fatalf("offset fetch partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
			if p.Offset >= 0 {
				out[p.Partition] = p.Offset
			}
		}
	}
	return out
}

// retriable are the codes a commit may get while its shard fails and reloads.
func retriable(code int16) bool {
	return code == kerr.NotCoordinator.Code || code == kerr.CoordinatorLoadInProgress.Code
}

var errDisk = errors.New("injected: disk on fire")

// TestFailedAppend: a failed Append fails every request of the failed batch and of the batch
// queued behind it with NOT_COORDINATOR, the shard reloads from the store, nothing
// unacknowledged is visible afterwards (in memory or after a restart) and everything
// acknowledged is.
func TestFailedAppend(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir)
	if c := e.commit("g", 0, 10); c != 0 {
		t.Fatalf("first commit: %v", kerr.ErrorForCode(c))
	}
	// Hold the disk so that 40 concurrent commits pile up: one batch in flight, the rest
	// behind it. The in-flight batch fails; every other is failed with it and the shard reloads.
	release := e.fs.Hold()
	e.fs.FailAppends(storefault.AppendFault{Err: errDisk})
	codes := make([]int16, 40)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = e.commit("g", int32(i+1), int64(1000+i))
		}()
	}
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	acked := map[int32]int64{0: 10}
	failed := 0
	for i, c := range codes {
		switch {
		case c == 0:
			acked[int32(i+1)] = int64(1000 + i)
		case retriable(c):
			failed++
		default:
			t.Fatalf("commit %d: %v, want success or a retriable error", i, kerr.ErrorForCode(c))
		}
	}
	if failed == 0 {
		t.Fatalf("no commit failed although the Append did")
	}
	e.waitReady()
	if got := e.fetch("g"); !equal(got, acked) {
		t.Fatalf("after the failed append: committed %v, acknowledged %v", got, acked)
	}
	// Retries succeed once the shard is back.
	for i, c := range codes {
		if c != 0 {
			if c := e.commit("g", int32(i+1), int64(1000+i)); c != 0 {
				t.Fatalf("retry %d: %v", i, kerr.ErrorForCode(c))
			}
			acked[int32(i+1)] = int64(1000 + i)
		}
	}
	e.close()
	e = open(t, dir)
	defer e.close()
	if got := e.fetch("g"); !equal(got, acked) {
		t.Fatalf("after restart: committed %v, acknowledged %v", got, acked)
	}
	t.Logf("%d of %d concurrent commits failed with a retriable error; %d acknowledged offsets intact", failed, len(codes), len(acked))
}

// TestAmbiguousAppend: an Append that wrote its batch but reported an error fails its requests
// (NOT_COORDINATOR); after the reload the write may be visible — records are idempotent
// upserts, so the client's retry converges on the same state.
func TestAmbiguousAppend(t *testing.T) {
	e := open(t, t.TempDir())
	defer e.close()
	e.fs.FailAppends(storefault.AppendFault{Err: errDisk, Applied: true})
	if c := e.commit("g", 0, 5); c != kerr.NotCoordinator.Code {
		t.Fatalf("commit during an ambiguous append: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	e.waitReady()
	if got := e.fetch("g"); !equal(got, map[int32]int64{0: 5}) {
		t.Fatalf("after an applied-but-failed append: %v", got)
	}
	if c := e.commit("g", 0, 5); c != 0 {
		t.Fatalf("retry: %v", kerr.ErrorForCode(c))
	}
}

// TestFencedAppend: store.ErrFenced fails the batch, drops the lease and re-acquires the shard
// with a newer epoch before serving again.
func TestFencedAppend(t *testing.T) {
	e := open(t, t.TempDir())
	defer e.close()
	if c := e.commit("g", 0, 1); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	e.fs.FailAppends(storefault.AppendFault{Err: fmt.Errorf("lease check: %w", store.ErrFenced)})
	if c := e.commit("g", 0, 2); c != kerr.NotCoordinator.Code {
		t.Fatalf("commit on a fenced shard: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	e.waitReady()
	if got := e.fetch("g"); !equal(got, map[int32]int64{0: 1}) {
		t.Fatalf("after fencing: %v", got)
	}
	acq := e.fs.Acquired()
	if len(acq) != 2 || acq[1].Epoch != acq[0].Epoch+1 {
		t.Fatalf("leases after fencing: %+v, want a second acquire with epoch+1", acq)
	}
	if c := e.commit("g", 0, 3); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
}

// TestFailedLoad: a shard whose load fails is "failed" (calls get NOT_COORDINATOR) and retries
// with back-off until the load succeeds; its data is intact.
func TestFailedLoad(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir)
	if c := e.commit("g", 0, 7); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	e.close()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := store.OpenPebble(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	e = &env{t: t, dir: dir, db: db, fs: storefault.Wrap(ps)}
	e.fs.FailLoads(errDisk, errDisk)
	cfg := coordinator.ConfigFrom(config.Defaults())
	cfg.Shards = 1
	e.rt, e.svc = newCoordinator(cfg, e.fs, slog.New(slog.DiscardHandler))
	e.rt.Start()
	defer e.close()
	sawFailed := false
	for !e.rt.Ready() {
		if e.rt.ShardStatus()[0] == "failed" {
			sawFailed = true
			// The shard may finish reloading between the status check and the commit.
			if c := e.commit("g", 1, 1); !retriable(c) && (c != 0 || e.rt.ShardStatus()[0] != "active") {
				t.Fatalf("commit on a failed shard: %v", kerr.ErrorForCode(c))
			}
		}
		time.Sleep(time.Millisecond)
	}
	if !sawFailed {
		t.Fatal("shard never reported failed")
	}
	if got := e.fetch("g"); got[0] != 7 {
		t.Fatalf("after failed loads: %v", got)
	}
}

func equal(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// newCoordinator is the group coordinator (engine and adapters) on st.
func newCoordinator(cfg *coordinator.Config, st store.Store, log *slog.Logger) (*api.Runtime, *api.Service) {
	rt := engine.New(engine.Options[*coordinator.State]{
		Shards: cfg.Shards,
		New:    func(i int32) *coordinator.State { return coordinator.NewState(i, cfg, log, engine.RandomIDs{}) },
		Store:  st, Log: log,
	})
	return rt, &api.Service{RT: rt, Cfg: cfg, Log: log}
}
