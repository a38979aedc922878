package coordinator

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/store"
)

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

func commitOne(group string) func(st *State, c *Call) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 8, group, -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7}}}}
	return OffsetCommit(req)
}

// groupOnShard finds a group id that hashes to shard.
func groupOnShard(shard, shards int32) string {
	for i := 0; ; i++ {
		g := "g" + itoa(int32(i))
		if ShardFor(g, shards) == shard {
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
	rt := NewRuntime(&Config{Shards: 4, OffsetMetadataMaxBytes: 4096}, ss, WallClock{}, nil, 16, RuntimeHooks{})
	rt.Start()
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other := groupOnShard(1, 4)
	var err error
	for i := 0; i < 1000; i++ { // shard 1 loads at once (empty); wait for it
		if _, err = rt.Do(ctx, other, Meta{APIVersion: 8}, commitOne(other)); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		t.Fatalf("group on a loaded shard not served while another shard loads: %v", err)
	}
	slowGroup := groupOnShard(0, 4)
	if _, err := rt.Do(ctx, slowGroup, Meta{APIVersion: 8}, commitOne(slowGroup)); !errors.Is(err, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("group on the loading shard: err %v, want COORDINATOR_LOAD_IN_PROGRESS", err)
	}
	if rt.Ready() || rt.ShardStatus()[0] != "loading" {
		t.Fatalf("ready=%v status=%v while shard 0 loads", rt.Ready(), rt.ShardStatus())
	}
	close(ss.release)
	for !rt.Ready() {
		time.Sleep(time.Millisecond)
	}
	if _, err := rt.Do(ctx, slowGroup, Meta{APIVersion: 8}, commitOne(slowGroup)); err != nil {
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
	rt := NewRuntime(&Config{Shards: 1, OffsetMetadataMaxBytes: 4096}, fs, WallClock{}, nil, 16, RuntimeHooks{})
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
		_, err := rt.Do(ctx, "g", Meta{APIVersion: 8}, OffsetCommit(req))
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
		r, err := rt.Do(ctx, "g", Meta{APIVersion: 8}, func(st *State, c *Call) {
			v, ok := st.Offsets.Get("g", "t", 0)
			if !ok {
				st.Reply(c, int64(-1))
				return
			}
			st.Reply(c, v.Offset)
		})
		if err == nil {
			got = r.(int64)
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
