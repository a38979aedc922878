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

// TestRetentionEndToEnd: with log.retention.hours=1 and a fast check
// interval, a batch kgo produced with two-hour-old timestamps is deleted,
// the log start offset advances, a fetch below it is OFFSET_OUT_OF_RANGE and
// a consumer from the start sees only the young records. The broker reports
// its retention and producer.id.expiration.ms settings.
func TestRetentionEndToEnd(t *testing.T) {
	b := testutil.Start(t, "log.retention.hours=1", "log.retention.check.interval.ms=10",
		"producer.id.expiration.ms=3600000")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))

	bc, err := adm.DescribeBrokerConfigs(ctx, 0) // this broker (node.id 0); "" is the dynamic cluster defaults
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"log.retention.hours": "1", "producer.id.expiration.ms": "3600000", "log.retention.check.interval.ms": "10"}
	for _, rc := range bc {
		for _, c := range rc.Configs {
			if w, ok := want[c.Key]; ok {
				if c.MaybeValue() != w {
					t.Errorf("broker %s = %q, want %q", c.Key, c.MaybeValue(), w)
				}
				delete(want, c.Key)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("broker configs missing: %v", want)
	}

	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "aging"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("aging"), kgo.ManualFlushing())
	send := func(from int, ts time.Time) {
		for i := from; i < from+10; i++ {
			prod.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i)), Timestamp: ts}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := prod.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	send(0, time.Now().Add(-2*time.Hour)) // offsets 0-9, one batch
	send(10, time.Now())                  // offsets 10-19

	waitFor(t, "log start to pass the old batch", 10*time.Second, func() bool {
		so, err := adm.ListStartOffsets(ctx, "aging")
		if err != nil {
			return false
		}
		o, _ := so.Lookup("aging", 0)
		return o.Offset == 10
	})

	// A fetch below the log start is OFFSET_OUT_OF_RANGE on the wire.
	rc, err := testutil.DialRaw(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	fr := kmsg.NewPtrFetchRequest()
	fr.Version, fr.MaxBytes, fr.SessionEpoch = 12, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "aging"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 3, 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	resp, err := rc.Do(fr)
	if err != nil {
		t.Fatal(err)
	}
	sp := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.OffsetOutOfRange.Code || sp.LogStartOffset != 10 {
		t.Fatalf("fetch below log start: %v, log start %d", kerr.ErrorForCode(sp.ErrorCode), sp.LogStartOffset)
	}

	cons := newClient(t, b.Addr(), kgo.ConsumeTopics("aging"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	for got := 0; got < 10; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("timed out after %d records", got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(10+got) || string(r.Value) != fmt.Sprint(10+got) {
				t.Fatalf("record %d: offset %d value %q", got, r.Offset, r.Value)
			}
			got++
		})
	}
}
