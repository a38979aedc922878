package data

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func listOffset(e *env, version int16, topic string, part int32, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	e.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = version
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.MaxNumOffsets = part, ts, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return e.p.ListOffsets(e.ctx, req).Topics[0].Partitions[0]
}

func TestListOffsets(t *testing.T) {
	e := newEnv(t)
	e.createTopic("lo", 1, nil)
	e.produce("lo", 0, makeBatch(batchOpts{n: 3, ts: 100})) // offsets 0-2, ts 100-102
	e.produce("lo", 0, makeBatch(batchOpts{n: 3, ts: 500})) // offsets 3-5, ts 500-502
	e.produce("lo", 0, makeBatch(batchOpts{n: 2, ts: 200})) // offsets 6-7, ts 200-201
	cases := []struct {
		ts, off, gotTS int64
	}{
		{-2, 0, -1},
		{-1, 8, -1},
		{-3, 5, 502},
		{-4, 0, -1},
		{0, 0, 100},
		{101, 1, 101},
		{103, 3, 500},
		{501, 4, 501},
		{9999, -1, -1},
	}
	for _, c := range cases {
		sp := listOffset(e, 8, "lo", 0, c.ts)
		if sp.ErrorCode != 0 || sp.Offset != c.off || sp.Timestamp != c.gotTS {
			t.Errorf("ts %d: offset %d ts %d err %v, want %d %d", c.ts, sp.Offset, sp.Timestamp, kerr.ErrorForCode(sp.ErrorCode), c.off, c.gotTS)
		}
	}
	// Special timestamps need the version that defines them (Kafka's
	// ReplicaManager.isListOffsetsTimestampUnsupported); an undefined negative
	// value is never valid. Without tiered storage -5 and -6 answer offset -1.
	gates := []struct {
		ts       int64
		version  int16
		ok       bool
		off, got int64
	}{
		{-1, 1, true, 8, -1}, {-2, 1, true, 0, -1},
		{-3, 6, false, 0, 0}, {-3, 7, true, 5, 502},
		{-4, 7, false, 0, 0}, {-4, 8, true, 0, -1},
		{-5, 8, false, 0, 0}, {-5, 9, true, -1, -1},
		{-6, 10, false, 0, 0}, {-6, 11, true, -1, -1},
		{-7, 11, false, 0, 0}, {-100, 11, false, 0, 0},
	}
	for _, g := range gates {
		sp := listOffset(e, g.version, "lo", 0, g.ts)
		switch {
		case !g.ok && sp.ErrorCode != kerr.UnsupportedVersion.Code:
			t.Errorf("ts %d at v%d: %v, want UNSUPPORTED_VERSION", g.ts, g.version, kerr.ErrorForCode(sp.ErrorCode))
		case g.ok && (sp.ErrorCode != 0 || sp.Offset != g.off || sp.Timestamp != g.got):
			t.Errorf("ts %d at v%d: %+v, want offset %d ts %d", g.ts, g.version, sp, g.off, g.got)
		}
	}
	if sp := listOffset(e, 6, "missing", 0, -3); sp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("undefined timestamp on a missing topic: %v, want UNSUPPORTED_VERSION first", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := listOffset(e, 8, "lo", 3, -1); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("bad partition: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := listOffset(e, 8, "missing", 0, -1); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("missing topic: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	// Empty partition: max timestamp has no record.
	e.createTopic("empty", 1, nil)
	if sp := listOffset(e, 8, "empty", 0, -3); sp.Offset != -1 || sp.Timestamp != -1 {
		t.Errorf("empty max ts: %+v", sp)
	}
}

func TestDeleteRecordsAdvancesLogStart(t *testing.T) {
	e := newEnv(t)
	e.createTopic("dr", 1, nil)
	for i := 0; i < 4; i++ {
		e.produce("dr", 0, makeBatch(batchOpts{n: 5})) // 0-4, 5-9, 10-14, 15-19
	}
	del := func(off int64) kmsg.DeleteRecordsResponseTopicPartition {
		req := kmsg.NewPtrDeleteRecordsRequest()
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = "dr"
		rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: off}}
		req.Topics = []kmsg.DeleteRecordsRequestTopic{rt}
		return e.p.DeleteRecords(e.ctx, req).Topics[0].Partitions[0]
	}
	if sp := del(7); sp.ErrorCode != 0 || sp.LowWatermark != 7 {
		t.Fatalf("delete to 7: %+v", sp)
	}
	if sp := del(99); sp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("past hw: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if fp := e.fetch("dr", 0, 3); fp.ErrorCode != kerr.OffsetOutOfRange.Code || fp.LogStartOffset != 7 {
		t.Fatalf("fetch below start: %+v", fp)
	}
	fp := e.fetch("dr", 0, 7)
	if bs := decodeBatches(t, fp.RecordBatches); len(bs) != 3 || bs[0].FirstOffset != 5 {
		t.Fatalf("fetch at start: %d batches", len(bs))
	}
	e.restart()
	if ls, hw, _ := e.p.Offsets("dr", 0); ls != 7 || hw != 20 {
		t.Fatalf("after restart: start %d hw %d", ls, hw)
	}
	if sp := listOffset(e, 8, "dr", 0, -2); sp.Offset != 7 {
		t.Fatalf("earliest %d", sp.Offset)
	}
	// A timestamp lookup skips the records DeleteRecords cut off: batch
	// 5-9 holds offsets 5 and 6 below the log start.
	if sp := listOffset(e, 8, "dr", 0, 0); sp.Offset != 7 {
		t.Fatalf("timestamp 0 after delete: offset %d, want 7", sp.Offset)
	}
	if sp := del(-1); sp.LowWatermark != 20 {
		t.Fatalf("delete all: %+v", sp)
	}
	e.restart()
	if ls, hw, _ := e.p.Offsets("dr", 0); ls != 20 || hw != 20 {
		t.Fatalf("after delete all + restart: start %d hw %d", ls, hw)
	}
	if sp := e.produce("dr", 0, makeBatch(batchOpts{n: 1})); sp.BaseOffset != 20 {
		t.Fatalf("produce after delete all: %d", sp.BaseOffset)
	}
}

// offsetForLeaderEpochOf3 asks OffsetForLeaderEpoch (v4) for parts of topic "ep", one partition
// holding 3 records, and returns the answer's partitions.
func offsetForLeaderEpochOf3(t *testing.T, parts []kmsg.OffsetForLeaderEpochRequestTopicPartition) []kmsg.OffsetForLeaderEpochResponseTopicPartition {
	t.Helper()
	e := newEnv(t)
	e.createTopic("ep", 1, nil)
	e.produce("ep", 0, makeBatch(batchOpts{n: 3}))
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = 4
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic, rt.Partitions = "ep", parts
	req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{rt}
	return e.p.OffsetForLeaderEpoch(e.ctx, req).Topics[0].Partitions
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	ps := offsetForLeaderEpochOf3(t, []kmsg.OffsetForLeaderEpochRequestTopicPartition{
		{Partition: 0, CurrentLeaderEpoch: 0, LeaderEpoch: 0},
		{Partition: 0, CurrentLeaderEpoch: 5, LeaderEpoch: 0},
		{Partition: 9, CurrentLeaderEpoch: -1, LeaderEpoch: 0},
	})
	if ps[0].ErrorCode != 0 || ps[0].EndOffset != 3 || ps[0].LeaderEpoch != 0 {
		t.Errorf("epoch 0: %+v", ps[0])
	}
	if ps[1].ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("future epoch: %v", kerr.ErrorForCode(ps[1].ErrorCode))
	}
	if ps[2].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("bad partition: %v", kerr.ErrorForCode(ps[2].ErrorCode))
	}
}

// TestOffsetForLeaderEpochUndefined: the undefined leader epoch -1 has no end offset, so the
// answer is epoch -1 and offset -1 without error (Kafka's LeaderEpochFileCache.endOffsetFor),
// while epoch 0 ends at the log end.
func TestOffsetForLeaderEpochUndefined(t *testing.T) {
	ps := offsetForLeaderEpochOf3(t, []kmsg.OffsetForLeaderEpochRequestTopicPartition{
		{Partition: 0, CurrentLeaderEpoch: -1, LeaderEpoch: -1},
		{Partition: 0, CurrentLeaderEpoch: -1, LeaderEpoch: 0},
	})
	if ps[0].ErrorCode != 0 || ps[0].LeaderEpoch != -1 || ps[0].EndOffset != -1 {
		t.Errorf("epoch -1: %+v", ps[0])
	}
	if ps[1].ErrorCode != 0 || ps[1].LeaderEpoch != 0 || ps[1].EndOffset != 3 {
		t.Errorf("epoch 0: %+v", ps[1])
	}
}
