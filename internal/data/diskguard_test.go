package data

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// guardedEnv is an env whose plane writes through a guard watching a fake disk.
type guardedEnv struct {
	*env
	g     *diskguard.Guard
	avail atomic.Uint64
}

func newGuardedEnv(t testing.TB, fs vfs.FS, interval time.Duration) *guardedEnv {
	t.Helper()
	ge := &guardedEnv{env: &env{t: t, dir: t.TempDir(), ctx: context.Background(), now: time.UnixMilli(1_700_000_000_000)}}
	ge.avail.Store(1 << 30)
	ge.g = diskguard.New(diskguard.Options{MinFreeBytes: 100 << 20, Interval: interval,
		DiskUsage: func(string) (uint64, uint64, error) { return ge.avail.Load(), 2 << 30, nil }})
	ge.g.Start()
	ge.cfg = Config{NodeID: 1, AdvertisedHost: "127.0.0.1", AdvertisedPort: 9092, ClusterID: "muster-test",
		AutoCreateTopics: true, Now: func() time.Time { return ge.now }, Guard: ge.g}
	if fs == nil {
		fs = vfs.Default
	}
	db, err := pebble.Open(ge.dir, &pebble.Options{Logger: ge.g.PebbleLogger(), FS: ge.g.FS(fs)})
	if err != nil {
		t.Fatal(err)
	}
	ge.g.StartReclaimer(db)
	p, err := Open(db, ge.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ge.db, ge.p = db, p
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

// TestLowSpaceRefusesWhatGrows: below the free-space threshold Produce answers
// KAFKA_STORAGE_ERROR with the reason, CreateTopics and CreatePartitions KAFKA_STORAGE_ERROR,
// Metadata's auto-creation LEADER_NOT_AVAILABLE; Fetch, AlterConfigs, DeleteRecords and
// DeleteTopics work; once space is back, Produce works again without a restart.
func TestLowSpaceRefusesWhatGrows(t *testing.T) {
	ge := newGuardedEnv(t, nil, 5*time.Millisecond)
	defer func() { ge.p.Close(); ge.g.Close(); ge.db.Close() }()
	ge.createTopic("t", 1, nil)
	ge.createTopic("gone", 1, nil)
	for i := 0; i < 3; i++ {
		if sp := ge.produce("t", 0, makeBatch(batchOpts{n: 2, valSize: 10, ts: 1})); sp.ErrorCode != 0 {
			t.Fatal(kerr.ErrorForCode(sp.ErrorCode))
		}
	}
	ge.avail.Store(50 << 20)
	ge.waitState(diskguard.LowSpace)

	sp := ge.produce("t", 0, makeBatch(batchOpts{n: 2, valSize: 10, ts: 1}))
	if sp.ErrorCode != kerr.KafkaStorageError.Code || sp.ErrorMessage == nil || !strings.Contains(*sp.ErrorMessage, "free disk space") {
		t.Fatalf("produce while short of space: %v %v", kerr.ErrorForCode(sp.ErrorCode), sp.ErrorMessage)
	}
	if n := ge.g.Refused(diskguard.LowSpace, diskguard.Produce); n != 1 {
		t.Fatalf("refused produces counted: %d", n)
	}

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 5
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new", 1, 1
	ct.Topics = append(ct.Topics, rt)
	if r := ge.p.CreateTopics(ge.ctx, ct); r.Topics[0].ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("create topics: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	ct.ValidateOnly = true
	if r := ge.p.CreateTopics(ge.ctx, ct); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("validate-only create topics: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "t", 3
	cp.Topics = append(cp.Topics, cpt)
	if r := ge.p.CreatePartitions(ge.ctx, cp); r.Topics[0].ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("create partitions: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version, md.AllowAutoTopicCreation = 9, true
	mt := kmsg.NewMetadataRequestTopic()
	name := "auto"
	mt.Topic = &name
	md.Topics = append(md.Topics, mt)
	if r := ge.p.Metadata(ge.ctx, md); r.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("metadata auto-creation: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}

	if fp := ge.fetch("t", 0, 0); fp.ErrorCode != 0 || fp.HighWatermark != 6 || len(decodeBatches(t, fp.RecordBatches)) != 3 {
		t.Fatalf("fetch while short of space: %v hw %d", kerr.ErrorForCode(fp.ErrorCode), fp.HighWatermark)
	}
	ac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "retention.ms", kmsg.StringPtr("60000")
	res.Configs = append(res.Configs, c)
	ac.Resources = append(ac.Resources, res)
	if r := ge.p.IncrementalAlterConfigs(ge.ctx, ac); r.Resources[0].ErrorCode != 0 {
		t.Fatalf("lowering retention while short of space: %v", kerr.ErrorForCode(r.Resources[0].ErrorCode))
	}
	dr := kmsg.NewPtrDeleteRecordsRequest()
	drt := kmsg.NewDeleteRecordsRequestTopic()
	drt.Topic = "t"
	drp := kmsg.NewDeleteRecordsRequestTopicPartition()
	drp.Partition, drp.Offset = 0, 4
	drt.Partitions = append(drt.Partitions, drp)
	dr.Topics = append(dr.Topics, drt)
	if r := ge.p.DeleteRecords(ge.ctx, dr); r.Topics[0].Partitions[0].ErrorCode != 0 || r.Topics[0].Partitions[0].LowWatermark != 4 {
		t.Fatalf("delete records while short of space: %+v", r.Topics[0].Partitions[0])
	}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version = 5
	dt.TopicNames = []string{"gone"}
	if r := ge.p.DeleteTopics(ge.ctx, dt); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete topics while short of space: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}

	ge.avail.Store(1 << 30)
	ge.waitState(diskguard.OK)
	if sp := ge.produce("t", 0, makeBatch(batchOpts{n: 2, valSize: 10, ts: 1})); sp.ErrorCode != 0 || sp.BaseOffset != 6 {
		t.Fatalf("produce after space came back: %v at %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
}

// TestWALFaultStallsTheLog: Pebble's WAL writes fail under a produce. The produce answers
// KAFKA_STORAGE_ERROR (no panic), the store is failed, the high watermark stays before the
// failed batch (which Pebble's memtable may hold) so fetches never serve it, later produces and
// deletes are refused, and what was acknowledged is still fetched.
func TestWALFaultStallsTheLog(t *testing.T) {
	var on atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return errorfs.ErrInjected
		}
		return nil
	})
	ge := newGuardedEnv(t, errorfs.Wrap(vfs.Default, inj), 5*time.Millisecond)
	defer func() { ge.p.Close(); ge.g.Close() }() // the DB is abandoned: its WAL is broken
	ge.createTopic("t", 1, nil)
	if sp := ge.produce("t", 0, makeBatch(batchOpts{n: 3, valSize: 10, ts: 1})); sp.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(sp.ErrorCode))
	}
	on.Store(true)
	sp := ge.produce("t", 0, makeBatch(batchOpts{n: 3, valSize: 10, ts: 1}))
	if sp.ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("produce during a WAL fault: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	on.Store(false)
	if s := ge.g.Status(); s.State != diskguard.Failed {
		t.Fatalf("guard: %+v", s)
	}
	fp := ge.fetch("t", 0, 0)
	if fp.HighWatermark != 3 || len(decodeBatches(t, fp.RecordBatches)) != 1 {
		t.Fatalf("after the fault: hw %d, %d batches (want 3, 1: the failed batch is not served)", fp.HighWatermark, len(decodeBatches(t, fp.RecordBatches)))
	}
	if sp := ge.produce("t", 0, makeBatch(batchOpts{n: 1, valSize: 10, ts: 1})); sp.ErrorCode != kerr.KafkaStorageError.Code || sp.ErrorMessage == nil || !strings.Contains(*sp.ErrorMessage, "restarts") {
		t.Fatalf("produce on a failed store: %v %v", kerr.ErrorForCode(sp.ErrorCode), sp.ErrorMessage)
	}
	if n := ge.p.EnforceRetention(); n != 0 {
		t.Fatalf("retention ran on a failed store: %d", n)
	}
}
