package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// readAll consumes topic partition 0 from its start up to its high watermark with a fresh
// franz-go consumer and returns the records in offset order.
func readAll(t *testing.T, ctx context.Context, addr, topic string) []*kgo.Record {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	eo, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := eo.Lookup(topic, 0)
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var out []*kgo.Record
	for len(out) == 0 || out[len(out)-1].Offset < end.Offset-1 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records up to %v, end %d: %v", len(out), out, end.Offset, ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// TestCompactedTopicConsumedFromStart: a topic with cleanup.policy=compact rolls a segment per
// round of writes (segment.ms=100), and the broker's cleaner, run every 500 ms
// (--override log.cleaner.backoff.ms=500, as with Kafka), compacts the sealed segments. A
// franz-go consumer reading from the start gets, below the active segment, only the latest
// record of each key, at its original offset (offsets are preserved, with gaps); the active
// segment is untouched; a tombstone survives its first cleaning (delete.retention.ms).
func TestCompactedTopicConsumedFromStart(t *testing.T) {
	b := testutil.Start(t, "log.cleaner.backoff.ms=500")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	cfg := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.ms": kadm.StringPtr("100"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01")}
	if r, err := adm.CreateTopic(ctx, 1, 1, cfg, "changelog"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("changelog"), kgo.ManualFlushing())
	round := func(recs ...*kgo.Record) {
		for _, rec := range recs {
			prod.Produce(ctx, rec, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := prod.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // the next round's batch rolls a new segment
	}
	keyed := func(r int) []*kgo.Record {
		var out []*kgo.Record
		for k := 0; k < 10; k++ {
			out = append(out, &kgo.Record{Key: []byte(fmt.Sprint("k", k)), Value: []byte(fmt.Sprintf("k%d@r%d", k, r))})
		}
		return out
	}
	for r := 0; r < 4; r++ {
		round(keyed(r)...) // offsets 10r .. 10r+9
	}
	round(&kgo.Record{Key: []byte("k3")}) // 40: tombstone for k3
	round(keyed(5)[5:]...)                // 41-45: k5..k9, the active segment

	var recs []*kgo.Record
	waitFor(t, "the cleaner to compact the sealed segments", 20*time.Second, func() bool {
		recs = readAll(t, ctx, b.Addr(), "changelog")
		return len(recs) == 15
	})
	got := func(r *kgo.Record) string {
		v := "<null>"
		if r.Value != nil {
			v = string(r.Value)
		}
		return fmt.Sprintf("%d:%s=%s", r.Offset-30, r.Key, v)
	}
	for i, w := range []string{
		"0:k0=k0@r3", "1:k1=k1@r3", "2:k2=k2@r3", "4:k4=k4@r3", "5:k5=k5@r3", "6:k6=k6@r3", "7:k7=k7@r3",
		"8:k8=k8@r3", "9:k9=k9@r3", "10:k3=<null>",
		"11:k5=k5@r5", "12:k6=k6@r5", "13:k7=k7@r5", "14:k8=k8@r5", "15:k9=k9@r5",
	} {
		if g := got(recs[i]); g != w {
			t.Fatalf("record %d: %s, want %s (all: %v)", i, g, w, recs)
		}
	}
	// The log start and end are unchanged; a fetch at an offset the cleaner removed returns
	// the next batch.
	so, _ := adm.ListStartOffsets(ctx, "changelog")
	eo, _ := adm.ListEndOffsets(ctx, "changelog")
	if s, _ := so.Lookup("changelog", 0); s.Offset != 0 {
		t.Fatalf("log start %d", s.Offset)
	}
	if e, _ := eo.Lookup("changelog", 0); e.Offset != 46 {
		t.Fatalf("log end %d", e.Offset)
	}
	rc, err := testutil.DialRaw(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxBytes, req.SessionEpoch = 12, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "changelog"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 12, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := rc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch at a compacted offset: %v, %d bytes", kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}
	var first kmsg.RecordBatch
	if err := first.ReadFrom(p.RecordBatches); err != nil || first.FirstOffset+int64(first.LastOffsetDelta) < 12 {
		t.Fatalf("first batch %+v err %v", first, err)
	}
}
