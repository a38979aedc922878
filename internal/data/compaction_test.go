package data

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
)

// newCompactEnv is an env whose background cleaner is off: the tests run CleanLogs themselves.
func newCompactEnv(t testing.TB, overrides ...string) *env {
	e := newEnv(t)
	e.cfg.Values = config.Defaults(append([]string{"node.id=1", "log.cleaner.enable=false"}, overrides...)...)
	e.restart()
	return e
}

// kv is one record of a test batch; a nil value is a tombstone, a nil key a keyless record.
type kv struct {
	key, value []byte
	ts         int64 // absolute timestamp
}

func rec(k, v string, ts int64) kv {
	r := kv{key: []byte(k), ts: ts}
	if v != "" {
		r.value = []byte(v)
	}
	return r
}

// kvBatch encodes records as one magic-2 batch with codec (0 = none); pid < 0 is not idempotent.
func kvBatch(t testing.TB, codec int16, pid int64, seq int32, recs ...kv) []byte {
	t.Helper()
	first, maxTs := recs[0].ts, recs[0].ts
	var body []byte
	for i, r := range recs {
		kr := kmsg.NewRecord()
		kr.TimestampDelta64 = r.ts - first
		kr.OffsetDelta = int32(i)
		kr.Key, kr.Value = r.key, r.value
		enc := kr.AppendTo(nil)
		kr.Length = int32(len(enc) - varintLen(kr.Length))
		body = kr.AppendTo(body)
		maxTs = max(maxTs, r.ts)
	}
	if codec != codecNone {
		var err error
		if body, err = compressForTest(codec, body); err != nil {
			t.Fatal(err)
		}
	}
	epoch := int16(-1)
	if pid >= 0 {
		epoch = 0
	} else {
		seq = -1
	}
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: codec, LastOffsetDelta: int32(len(recs) - 1),
		FirstTimestamp: first, MaxTimestamp: maxTs, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq,
		NumRecords: int32(len(recs)), Records: body}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func compressForTest(codec int16, b []byte) ([]byte, error) {
	switch codec {
	case codecSnappy:
		return snappy.Encode(nil, b), nil
	case codecZstd:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			return nil, err
		}
		defer enc.Close()
		return enc.EncodeAll(b, nil), nil
	}
	return compress(codec, b, false)
}

func (e *env) mustProduce(topic string, batch []byte) int64 {
	e.t.Helper()
	sp := e.produce(topic, 0, batch)
	if sp.ErrorCode != 0 {
		e.t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	return sp.BaseOffset
}

// logRecord is one record read back from the log.
type logRecord struct {
	offset int64
	key    string
	value  *string
	ts     int64
}

// readLog fetches the whole partition from offset 0 (or the log start) and decodes every
// batch (checking CRCs) and record.
func (e *env) readLog(topic string) ([]kmsg.RecordBatch, []logRecord) {
	e.t.Helper()
	ls := e.logStart(topic)
	fp := e.fetch(topic, 0, ls)
	if fp.ErrorCode != 0 {
		e.t.Fatalf("fetch: %v", kerr.ErrorForCode(fp.ErrorCode))
	}
	batches := decodeBatches(e.t, fp.RecordBatches)
	var out []logRecord
	for _, b := range batches {
		recs, err := decompress(b.Attributes&attrCompressionMask, b.Records, maxDecompressedBatch)
		if err != nil {
			e.t.Fatalf("batch %d: %v", b.FirstOffset, err)
		}
		n := 0
		if err := readRecords(recs, b.NumRecords, func(r *rawRecord) bool {
			lr := logRecord{offset: b.FirstOffset + int64(r.offsetDelta), key: string(r.key), ts: b.FirstTimestamp + r.tsDelta}
			if r.hasValue {
				var kr kmsg.Record
				_ = kr.ReadFrom(r.raw)
				v := string(kr.Value)
				lr.value = &v
			}
			out = append(out, lr)
			n++
			return true
		}); err != nil || n != int(b.NumRecords) {
			e.t.Fatalf("batch %d: %d records, err %v", b.FirstOffset, n, err)
		}
	}
	return batches, out
}

func (lr logRecord) String() string {
	v := "<null>"
	if lr.value != nil {
		v = *lr.value
	}
	return fmt.Sprintf("%d:%s=%s", lr.offset, lr.key, v)
}

func recordsString(rs []logRecord) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.String())
	}
	return strings.Join(s, " ")
}

// Every batch of a topic with internal.segment.bytes=1 is its own segment.
var tinySegments = map[string]string{
	"cleanup.policy": "compact", "internal.segment.bytes": "14", "min.cleanable.dirty.ratio": "0.01",
}

func cfgWith(base map[string]string, kvs ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		out[kvs[i]] = kvs[i+1]
	}
	return out
}

// The cleaner keeps the latest record of each key below the active segment, offsets intact;
// the active segment is never cleaned.
func TestCleanerKeepsLatestPerKey(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, tinySegments)
	now := e.now.UnixMilli()
	for b := 0; b < 4; b++ {
		e.mustProduce("c", kvBatch(t, 0, -1, 0,
			rec("a", fmt.Sprintf("a%d", b), now), rec("b", fmt.Sprintf("b%d", b), now), rec(fmt.Sprintf("u%d", b), "u", now)))
	}
	if n := e.p.CleanLogs(); n != 1 {
		t.Fatalf("cleaned %d logs, want 1", n)
	}
	// Segments 0..2 (offsets 0-8) are cleanable; 9-11 are the active segment.
	_, got := e.readLog("c")
	want := "2:u0=u 5:u1=u 6:a=a2 7:b=b2 8:u2=u 9:a=a3 10:b=b3 11:u3=u"
	if s := recordsString(got); s != want {
		t.Fatalf("after cleaning:\n got %s\nwant %s", s, want)
	}
	if fp := e.fetch("c", 0, 0); fp.HighWatermark != 12 || fp.LogStartOffset != 0 {
		t.Fatalf("hw %d log start %d", fp.HighWatermark, fp.LogStartOffset)
	}
	// Nothing new is dirty: nothing to clean.
	if n := e.p.CleanLogs(); n != 0 {
		t.Fatalf("second pass cleaned %d", n)
	}
	// A new segment makes 9-11 cleanable: a2/b2 go.
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("z", "z", now)))
	if n := e.p.CleanLogs(); n != 1 {
		t.Fatal("third pass")
	}
	_, got = e.readLog("c")
	if s := recordsString(got); s != "2:u0=u 5:u1=u 8:u2=u 9:a=a3 10:b=b3 11:u3=u 12:z=z" {
		t.Fatalf("after second cleaning: %s", s)
	}
	// A fetch at an offset removed by compaction returns the next batch; the log survives a
	// restart unchanged.
	if bs := decodeBatches(t, e.fetch("c", 0, 6).RecordBatches); len(bs) == 0 || bs[0].FirstOffset+int64(bs[0].LastOffsetDelta) < 6 {
		t.Fatalf("fetch at a compacted offset: %+v", bs)
	}
	e.restart()
	_, again := e.readLog("c")
	if recordsString(again) != recordsString(got) {
		t.Fatalf("after restart: %s", recordsString(again))
	}
	if sp := listOffset(e, 8, "c", 0, -1); sp.Offset != 13 {
		t.Fatalf("latest %d", sp.Offset)
	}
}

// Batches keep their base offset and last offset delta; a batch emptied by the cleaner goes,
// except the last batch of the cleaning round, which stays empty.
func TestCleanerBatchShape(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, tinySegments)
	now := e.now.UnixMilli()
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "1", now), rec("b", "1", now))) // 0-1
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("b", "2", now), rec("a", "2", now))) // 2-3
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "3", now), rec("b", "3", now))) // 4-5
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("c", "4", now)))                     // 6, active
	e.p.CleanLogs()
	bs, got := e.readLog("c")
	if s := recordsString(got); s != "4:a=3 5:b=3 6:c=4" {
		t.Fatalf("records %s", s)
	}
	if len(bs) != 2 || bs[0].FirstOffset != 4 || bs[0].LastOffsetDelta != 1 {
		t.Fatalf("batches %+v", bs)
	}
	// Now only "b" supersedes the middle record of the first kept batch: the rewritten batch
	// keeps base 4 and last offset delta 1 although offset 5 is gone.
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("b", "5", now))) // 7
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("d", "6", now))) // 8, active
	e.p.CleanLogs()
	bs, got = e.readLog("c")
	if s := recordsString(got); s != "4:a=3 6:c=4 7:b=5 8:d=6" {
		t.Fatalf("records %s", s)
	}
	if bs[0].FirstOffset != 4 || bs[0].LastOffsetDelta != 1 || bs[0].NumRecords != 1 {
		t.Fatalf("rewritten batch %+v", bs[0])
	}
	// A batch emptied by the cleaner goes (offset 7, superseded by a newer "b").
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("b", "7", now))) // 9
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("e", "8", now))) // 10, active
	e.p.CleanLogs()
	bs, got = e.readLog("c")
	if s := recordsString(got); s != "4:a=3 6:c=4 8:d=6 9:b=7 10:e=8" {
		t.Fatalf("records %s", s)
	}
	for _, b := range bs {
		if b.FirstOffset == 7 {
			t.Fatalf("batch 7 should be gone: %+v", b)
		}
	}
}

// Tombstones stay through the cleaning that first reaches them (which stamps their batch's
// delete horizon) and for delete.retention.ms after it; a later cleaning removes them.
func TestCleanerTombstones(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, cfgWith(tinySegments, "delete.retention.ms", "60000"))
	now := e.now.UnixMilli()
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "1", now), rec("b", "1", now))) // 0-1
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "", now+1)))                    // 2: tombstone
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("c", "1", now)))                     // 3, active
	e.p.CleanLogs()
	bs, got := e.readLog("c")
	if s := recordsString(got); s != "1:b=1 2:a=<null> 3:c=1" {
		t.Fatalf("records %s", s)
	}
	var tomb kmsg.RecordBatch
	for _, b := range bs {
		if b.FirstOffset == 2 {
			tomb = b
		}
	}
	if tomb.Attributes&attrDeleteHorizon == 0 || tomb.FirstTimestamp != now+60000 {
		t.Fatalf("tombstone batch: attrs %#x first ts %d, want horizon %d", tomb.Attributes, tomb.FirstTimestamp, now+60000)
	}
	if got[1].ts != now+1 {
		t.Fatalf("the tombstone keeps its timestamp: %d", got[1].ts)
	}
	// Before the horizon a new cleaning keeps it; after it, the tombstone goes.
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("d", "1", now))) // 4
	e.now = e.now.Add(59 * time.Second)
	e.p.CleanLogs()
	if _, got = e.readLog("c"); !strings.Contains(recordsString(got), "2:a=<null>") {
		t.Fatalf("tombstone removed before its horizon: %s", recordsString(got))
	}
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("e", "1", now))) // 5
	e.now = e.now.Add(2 * time.Second)
	e.p.CleanLogs()
	if _, got = e.readLog("c"); recordsString(got) != "1:b=1 3:c=1 4:d=1 5:e=1" {
		t.Fatalf("after the horizon: %s", recordsString(got))
	}
}

// min.cleanable.dirty.ratio gates cleaning on the share of uncleaned bytes; min.compaction.lag.ms
// keeps recent segments uncleaned; max.compaction.lag.ms forces cleaning whatever the ratio.
func TestCleanerRatioAndLags(t *testing.T) {
	e := newCompactEnv(t)
	now := e.now.UnixMilli()
	count := func(topic string) int { _, r := e.readLog(topic); return len(r) }

	e.createTopic("ratio", 1, cfgWith(tinySegments, "min.cleanable.dirty.ratio", "0.5"))
	for b := 0; b < 6; b++ {
		e.mustProduce("ratio", kvBatch(t, 0, -1, 0, rec(fmt.Sprint("k", b), "v", now)))
	}
	if n := e.p.CleanLogs(); n != 1 { // never cleaned: all of it is dirty
		t.Fatalf("first cleaning: %d", n)
	}
	for b := 0; b < 3; b++ { // 1, 2, then 3 dirty segments against 5 clean ones
		e.mustProduce("ratio", kvBatch(t, 0, -1, 0, rec("k0", fmt.Sprint(b), now)))
		if n := e.p.CleanLogs(); n != 0 {
			t.Fatalf("cleaned below the ratio after %d batches", b+1)
		}
	}
	for b := 0; ; b++ {
		e.mustProduce("ratio", kvBatch(t, 0, -1, 0, rec("k1", fmt.Sprint(b), now)))
		if e.p.CleanLogs() == 1 {
			break
		}
		if b > 5 {
			t.Fatal("never cleaned above the ratio")
		}
	}

	fill := func(topic string, ts int64) {
		for b := 0; b < 4; b++ {
			e.mustProduce(topic, kvBatch(t, 0, -1, 0, rec("k", fmt.Sprint(b), ts)))
		}
	}
	e.createTopic("minlag", 1, cfgWith(tinySegments, "min.compaction.lag.ms", "60000"))
	fill("minlag", now-30_000)
	e.createTopic("maxlag", 1, cfgWith(tinySegments, "min.cleanable.dirty.ratio", "1", "max.compaction.lag.ms", "1000"))
	fill("maxlag", now-5_000)
	e.createTopic("never", 1, cfgWith(tinySegments, "min.cleanable.dirty.ratio", "1"))
	fill("never", now-5_000)
	if n := e.p.CleanLogs(); n != 1 {
		t.Fatalf("cleaned %d, want only maxlag", n)
	}
	if count("minlag") != 4 || count("maxlag") != 2 || count("never") != 4 {
		t.Fatalf("records: minlag %d maxlag %d never %d", count("minlag"), count("maxlag"), count("never"))
	}
	e.now = e.now.Add(31 * time.Second)
	if n := e.p.CleanLogs(); n != 1 || count("minlag") != 2 {
		t.Fatalf("after the min lag: cleaned %d, minlag has %d records", n, count("minlag"))
	}
}

// A batch the cleaner empties stays as an empty batch when it is the last of the cleaning
// round (keyless records, left from before the topic became compacted, are dropped).
func TestCleanerKeepsRoundsLastBatch(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, map[string]string{"internal.segment.bytes": "14"})
	now := e.now.UnixMilli()
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "1", now)))              // 0
	e.mustProduce("c", kvBatch(t, 0, -1, 0, kv{value: []byte("x"), ts: now})) // 1: keyless
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("z", "z", now)))              // 2, active
	e.alterTopic("c", "cleanup.policy", "compact", "min.cleanable.dirty.ratio", "0.01")
	e.p.CleanLogs()
	bs, got := e.readLog("c")
	if s := recordsString(got); s != "0:a=1 2:z=z" {
		t.Fatalf("records %s", s)
	}
	if len(bs) != 3 || bs[1].FirstOffset != 1 || bs[1].NumRecords != 0 {
		t.Fatalf("batches %+v", bs)
	}
}

// alterTopic sets topic configs with IncrementalAlterConfigs.
func (e *env) alterTopic(topic string, kvs ...string) {
	e.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for i := 0; i+1 < len(kvs); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := kvs[i+1]
		c.Name, c.Value, c.Op = kvs[i], &v, kmsg.IncrementalAlterConfigOpSet
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	if sr := e.p.IncrementalAlterConfigs(e.ctx, req).Resources[0]; sr.ErrorCode != 0 {
		e.t.Fatalf("alter %s: %v %v", topic, kerr.ErrorForCode(sr.ErrorCode), sr.ErrorMessage)
	}
}

// Compressed batches are decompressed, filtered and written back with the same codec.
func TestCleanerCompressedBatches(t *testing.T) {
	for _, codec := range []int16{codecGzip, codecSnappy, codecLz4, codecZstd} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			e := newCompactEnv(t)
			e.createTopic("c", 1, tinySegments)
			now := e.now.UnixMilli()
			e.mustProduce("c", kvBatch(t, codec, -1, 0, rec("a", "1", now), rec("b", "1", now+1), rec("c", "1", now+2)))
			e.mustProduce("c", kvBatch(t, codec, -1, 0, rec("b", "2", now+3)))
			e.mustProduce("c", kvBatch(t, codec, -1, 0, rec("x", "3", now+4)))
			e.p.CleanLogs()
			bs, got := e.readLog("c")
			if s := recordsString(got); s != "0:a=1 2:c=1 3:b=2 4:x=3" {
				t.Fatalf("records %s", s)
			}
			if bs[0].Attributes&attrCompressionMask != codec || bs[0].NumRecords != 2 || bs[0].LastOffsetDelta != 2 {
				t.Fatalf("rewritten batch %+v", bs[0])
			}
			if got[1].ts != now+2 {
				t.Fatalf("timestamps: %+v", got)
			}
		})
	}
}

// An idempotent producer's last batch stays (empty) so its sequence survives; its earlier
// batches go. Producing again continues the sequence.
func TestCleanerKeepsProducerLastBatch(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, tinySegments)
	now := e.now.UnixMilli()
	e.mustProduce("c", kvBatch(t, 0, 7, 0, rec("a", "1", now)))  // 0
	e.mustProduce("c", kvBatch(t, 0, 7, 1, rec("a", "2", now)))  // 1: producer 7's last batch
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "3", now))) // 2
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("z", "z", now))) // 3, active
	e.p.CleanLogs()
	bs, got := e.readLog("c")
	if s := recordsString(got); s != "2:a=3 3:z=z" {
		t.Fatalf("records %s", s)
	}
	if len(bs) != 3 || bs[0].FirstOffset != 1 || bs[0].NumRecords != 0 || bs[0].ProducerID != 7 || bs[0].FirstSequence != 1 {
		t.Fatalf("batches %+v", bs)
	}
	if sp := e.produce("c", 0, kvBatch(t, 0, 7, 2, rec("b", "1", now))); sp.ErrorCode != 0 || sp.BaseOffset != 4 {
		t.Fatalf("next sequence: %v at %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
}

// A compacted topic refuses records without a key (INVALID_RECORD with Kafka's record error);
// DeleteRecords on a compact-only topic is POLICY_VIOLATION.
func TestCompactedTopicRules(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, map[string]string{"cleanup.policy": "compact"})
	now := e.now.UnixMilli()
	sp := e.produce("c", 0, kvBatch(t, 0, -1, 0, rec("a", "1", now), kv{value: []byte("x"), ts: now}))
	if sp.ErrorCode != kerr.InvalidRecord.Code || len(sp.ErrorRecords) != 1 || sp.ErrorRecords[0].RelativeOffset != 1 ||
		sp.ErrorMessage == nil || !strings.Contains(*sp.ErrorMessage, "Compacted topic cannot accept message without key in topic partition c-0.") {
		t.Fatalf("keyless record: %+v", sp)
	}
	e.mustProduce("c", kvBatch(t, 0, -1, 0, rec("a", "1", now)))
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "c"
	rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 1}}
	req.Topics = append(req.Topics, rt)
	if r := e.p.DeleteRecords(e.ctx, req).Topics[0].Partitions[0]; r.ErrorCode != kerr.PolicyViolation.Code {
		t.Fatalf("delete records on a compacted topic: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// Segments roll at segment.bytes and segment.ms (counted from the first batch's timestamp) and
// survive a restart; retention removes the sealed segments it passes.
func TestSegmentRolls(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("s", 1, map[string]string{"segment.ms": "1000", "internal.segment.bytes": "500"})
	now := e.now.UnixMilli()
	big := strings.Repeat("x", 150)
	e.mustProduce("s", kvBatch(t, 0, -1, 0, rec("a", big, now)))      // 0
	e.mustProduce("s", kvBatch(t, 0, -1, 0, rec("a", big, now+10)))   // 1: same segment
	e.mustProduce("s", kvBatch(t, 0, -1, 0, rec("a", big, now+20)))   // 2: > 500 bytes: rolls
	e.mustProduce("s", kvBatch(t, 0, -1, 0, rec("a", "1", now+500)))  // 3
	e.mustProduce("s", kvBatch(t, 0, -1, 0, rec("a", "1", now+1100))) // 4: 1090 ms after 2: rolls
	bases := func() []int64 {
		_, parts := e.p.lookup("s")
		parts[0].mu.Lock()
		defer parts[0].mu.Unlock()
		var out []int64
		for _, s := range parts[0].segs {
			out = append(out, s.base)
		}
		return out
	}
	if got := fmt.Sprint(bases()); got != "[0 2 4]" {
		t.Fatalf("segments %s", got)
	}
	e.restart()
	if got := fmt.Sprint(bases()); got != "[0 2 4]" {
		t.Fatalf("segments after restart %s", got)
	}
	e.mustProduce("s", kvBatch(t, 0, -1, 0, rec("a", "1", now+1200))) // 5: joins the active segment
	if got := fmt.Sprint(bases()); got != "[0 2 4]" {
		t.Fatalf("segments %s", got)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "s"
	rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 3}}
	req.Topics = append(req.Topics, rt)
	e.p.DeleteRecords(e.ctx, req)
	if got := fmt.Sprint(bases()); got != "[2 4]" {
		t.Fatalf("segments after DeleteRecords %s", got)
	}
}

// A cleaning cut short after some of its commits (a crash, modelled by aborting after the
// first chunk and reopening the store) leaves every retained record exactly once, and the next
// cleaning finishes the job.
func TestCleanerInterruptedKeepsEveryRecord(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("c", 1, tinySegments)
	now := e.now.UnixMilli()
	latest := map[string]string{}
	for b := 0; b < 40; b++ {
		var recs []kv
		for k := 0; k < 10; k++ {
			key := fmt.Sprintf("k%02d", (b*7+k)%25)
			v := fmt.Sprintf("%s@%d", key, b)
			recs = append(recs, rec(key, v, now))
			latest[key] = v
		}
		e.mustProduce("c", kvBatch(t, codecGzip, -1, 0, recs...))
	}
	check := func(stage string) {
		_, got := e.readLog("c")
		seen := map[int64]bool{}
		last := map[string]string{}
		for _, r := range got {
			if seen[r.offset] {
				t.Fatalf("%s: offset %d twice", stage, r.offset)
			}
			seen[r.offset] = true
			last[r.key] = *r.value
		}
		for k, v := range latest {
			if last[k] != v {
				t.Fatalf("%s: key %s ends at %q, want %q", stage, k, last[k], v)
			}
		}
	}
	old := cleanChunkBytes
	cleanChunkBytes = 1 // one batch per commit
	defer func() { cleanChunkBytes = old }()
	commits := 0
	testHookCleanCommit = func() error {
		if commits++; commits > 5 {
			return errCleaningAborted
		}
		return nil
	}
	e.p.CleanLogs()
	testHookCleanCommit = nil
	check("interrupted")
	e.restart()
	check("reopened")
	if n := e.p.CleanLogs(); n != 1 {
		t.Fatalf("resumed cleaning: %d", n)
	}
	check("resumed")
	_, got := e.readLog("c")
	keys := map[string]int{}
	for _, r := range got {
		if r.offset < 390 {
			keys[r.key]++
		}
	}
	var dup []string
	for k, n := range keys {
		if n > 1 {
			dup = append(dup, k)
		}
	}
	sort.Strings(dup)
	if len(dup) > 0 {
		t.Fatalf("keys left duplicated below the active segment: %v", dup)
	}
}
