package data

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceAt appends one batch of n records whose timestamps are ms.
func (e *env) produceAt(topic string, n int, ms int64) int64 {
	e.t.Helper()
	sp := e.produce(topic, 0, makeBatch(batchOpts{n: n, valSize: 10, ts: ms, tsOf: func(int) int64 { return 0 }}))
	if sp.ErrorCode != 0 {
		e.t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	return sp.BaseOffset
}

func (e *env) logStart(topic string) int64 {
	e.t.Helper()
	ls, _, ok := e.p.Offsets(topic, 0)
	if !ok {
		e.t.Fatalf("no partition %s/0", topic)
	}
	return ls
}

// TestRetentionTime: whole batches older than retention.ms go from the log
// start, stopping at the first younger batch; the log start offset advances
// (persisted), fetches below it are OFFSET_OUT_OF_RANGE.
func TestRetentionTime(t *testing.T) {
	e := newEnv(t)
	e.createTopic("rt", 1, map[string]string{cfgRetentionMs: "60000"})
	now := e.now.UnixMilli()
	e.produceAt("rt", 3, now-300_000) // 0-2: expired
	e.produceAt("rt", 3, now-120_000) // 3-5: expired
	e.produceAt("rt", 3, now-10_000)  // 6-8: young
	e.produceAt("rt", 3, now-500_000) // 9-11: old, but after a young batch
	e.produceAt("rt", 3, -1)          // 12-14: no timestamps: kept by time
	if n := e.p.EnforceRetention(); n != 2 {
		t.Fatalf("deleted %d batches, want 2", n)
	}
	if ls := e.logStart("rt"); ls != 6 {
		t.Fatalf("log start %d, want 6", ls)
	}
	if fp := e.fetch("rt", 0, 5); fp.ErrorCode != kerr.OffsetOutOfRange.Code || fp.LogStartOffset != 6 {
		t.Fatalf("fetch below log start: %v start %d", kerr.ErrorForCode(fp.ErrorCode), fp.LogStartOffset)
	}
	if bs := decodeBatches(t, e.fetch("rt", 0, 6).RecordBatches); len(bs) != 3 || bs[0].FirstOffset != 6 {
		t.Fatalf("fetch at log start: %d batches", len(bs))
	}
	if sp := listOffset(e, 8, "rt", 0, -2); sp.Offset != 6 {
		t.Fatalf("earliest %d", sp.Offset)
	}
	if n := e.p.EnforceRetention(); n != 0 {
		t.Fatalf("second pass deleted %d", n)
	}
	// Time passes: the young batch expires, then the old one behind it.
	e.now = e.now.Add(time.Minute)
	if n := e.p.EnforceRetention(); n != 2 {
		t.Fatalf("after a minute deleted %d, want 2", n)
	}
	e.restart()
	if ls, hw, _ := e.p.Offsets("rt", 0); ls != 12 || hw != 15 {
		t.Fatalf("after restart: start %d hw %d", ls, hw)
	}
	e.now = e.now.Add(1000 * time.Hour)
	if n := e.p.EnforceRetention(); n != 0 {
		t.Fatalf("deleted %d batches without timestamps", n)
	}
	// retention.bytes=0 (Kafka: keep nothing) empties the log; the end stays.
	e.createTopic("rt0", 1, map[string]string{cfgRetentionBytes: "0"})
	e.produceAt("rt0", 3, now)
	e.produceAt("rt0", 3, now)
	if n := e.p.EnforceRetention(); n != 2 {
		t.Fatalf("retention.bytes=0 deleted %d", n)
	}
	if sp := e.produce("rt0", 0, makeBatch(batchOpts{n: 1, ts: now})); sp.BaseOffset != 6 || sp.LogStartOffset != 6 {
		t.Fatalf("produce into an emptied log: base %d start %d", sp.BaseOffset, sp.LogStartOffset)
	}
}

// TestRetentionBytes: while the partition exceeds retention.bytes by at
// least the oldest batch's size, that batch goes.
func TestRetentionBytes(t *testing.T) {
	e := newEnv(t)
	now := e.now.UnixMilli()
	one := len(makeBatch(batchOpts{n: 2, valSize: 10, ts: now, tsOf: func(int) int64 { return 0 }}))
	e.createTopic("rb", 1, map[string]string{cfgRetentionBytes: itoa(2*one + 1)})
	for i := 0; i < 5; i++ {
		e.produceAt("rb", 2, now)
	}
	// 5 batches over a limit of 2 batches + 1 byte: Kafka deletes while the
	// excess covers the oldest batch, so 2 go and 3 stay.
	if n := e.p.EnforceRetention(); n != 2 {
		t.Fatalf("deleted %d batches, want 2", n)
	}
	if ls := e.logStart("rb"); ls != 4 {
		t.Fatalf("log start %d, want 4", ls)
	}
	// 3 batches over a limit of exactly 2: the oldest goes.
	e.createTopic("exact", 1, map[string]string{cfgRetentionBytes: itoa(2 * one)})
	for i := 0; i < 3; i++ {
		e.produceAt("exact", 2, now)
	}
	e.p.EnforceRetention()
	if ls := e.logStart("exact"); ls != 2 {
		t.Fatalf("exact: log start %d, want 2", ls)
	}
}

// TestRetentionPolicyAndDefaults: compact-only topics keep everything;
// "compact,delete" applies retention; the broker default applies to topics
// without an override and -1 disables it; DeleteRecords' mid-batch log
// start is only moved forward.
func TestRetentionPolicyAndDefaults(t *testing.T) {
	e := newEnv(t)
	e.cfg.LogRetentionMs = 1000
	e.restart()
	old := e.now.UnixMilli() - 5000
	for _, c := range []struct {
		name    string
		cfgs    map[string]string
		wantLS  int64
		wantDel bool
	}{
		{"default", nil, 4, true},
		{"compact", map[string]string{cfgCleanupPolicy: "compact"}, 0, false},
		{"both", map[string]string{cfgCleanupPolicy: "compact,delete"}, 4, true},
		{"unlimited", map[string]string{cfgRetentionMs: "-1"}, 0, false},
		{"long", map[string]string{cfgRetentionMs: "86400000"}, 0, false},
	} {
		e.createTopic(c.name, 1, c.cfgs)
		e.produceAt(c.name, 2, old)
		e.produceAt(c.name, 2, old)
	}
	if n := e.p.EnforceRetention(); n != 4 {
		t.Fatalf("deleted %d batches, want 4", n)
	}
	for _, name := range []string{"default", "compact", "both", "unlimited", "long"} {
		want := int64(0)
		if name == "default" || name == "both" {
			want = 4
		}
		if ls := e.logStart(name); ls != want {
			t.Errorf("%s: log start %d, want %d", name, ls, want)
		}
	}
	// DescribeConfigs shows the broker's default retention for the topic, from
	// the static broker config (log.retention.ms), as Kafka reports it.
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeTopic, "default", []string{cfgRetentionMs, cfgRetentionBytes}
	req.Resources = append(req.Resources, r)
	cs := e.p.DescribeConfigs(e.ctx, req).Resources[0].Configs
	if len(cs) != 2 || *cs[0].Value != "-1" || !cs[0].IsDefault || *cs[1].Value != "1000" ||
		cs[1].Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("describe: %+v", cs)
	}
	// A log start inside a batch (DeleteRecords) moves to the end of that
	// batch once it expires.
	e.createTopic("mid", 1, map[string]string{cfgRetentionMs: "60000"})
	e.produceAt("mid", 5, old-60_000)
	e.produceAt("mid", 5, e.now.UnixMilli())
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "mid", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 3}}}}
	if lw := e.p.DeleteRecords(e.ctx, dr).Topics[0].Partitions[0].LowWatermark; lw != 3 {
		t.Fatalf("delete records: low watermark %d", lw)
	}
	if n := e.p.EnforceRetention(); n != 1 || e.logStart("mid") != 5 {
		t.Fatalf("mid: deleted %d, log start %d, want 1, 5", n, e.logStart("mid"))
	}
	if err := validateTopicConfig(cfgRetentionMs, ptr("-2")); err == "" {
		t.Fatal("retention.ms=-2 accepted")
	}
	if err := validateTopicConfig(cfgRetentionBytes, ptr("-5")); err != "" {
		t.Fatalf("retention.bytes=-5 refused: %s", err)
	}
}

// TestRetentionBackgroundLoop: the loop runs every
// RetentionCheckInterval and stops on Close.
func TestRetentionBackgroundLoop(t *testing.T) {
	e := newEnv(t)
	e.cfg.RetentionCheckInterval = time.Millisecond
	e.restart()
	e.createTopic("bg", 1, map[string]string{cfgRetentionMs: "1000"})
	e.produceAt("bg", 2, e.now.UnixMilli()-5000)
	e.produceAt("bg", 2, e.now.UnixMilli())
	deadline := time.Now().Add(10 * time.Second)
	for e.logStart("bg") != 2 {
		if time.Now().After(deadline) {
			t.Fatal("retention loop never advanced the log start")
		}
		time.Sleep(time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func ptr(s string) *string { return &s }
