//go:build cgo

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// cfDataLogs collects librdkafka protocol errors from a client's log
// channel (librdkafka only logs them) and fails the test on any.
func cfDataLogs(t *testing.T, logs chan kafka.LogEvent) {
	var mu sync.Mutex
	var errs []string
	go func() {
		for l := range logs {
			if l.Tag == "PROTOERR" || strings.Contains(l.Message, "Protocol parse failure") {
				mu.Lock()
				errs = append(errs, l.Message)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			t.Errorf("librdkafka protocol error: %s", e)
		}
	})
}

// TestConfluentDataPlaneAssign: a confluent-kafka-go (bundled librdkafka)
// plain producer (acks=all, lz4) writes records with explicit timestamps to
// three partitions; a consumer with assigned partitions (no group
// membership, no commits) reads them all back with dense offsets;
// librdkafka's QueryWatermarkOffsets and OffsetsForTimes (ListOffsets by
// timestamp, inside lz4 batches) agree with what was produced.
func TestConfluentDataPlaneAssign(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic, parts, n = "cf-data", 3, 150
	if r, err := kadm.NewClient(newClient(t, b.Addr())).CreateTopic(ctx, parts, 1, nil, topic); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}

	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":      b.Addr(),
		"acks":                   "all",
		"enable.idempotence":     false,
		"compression.type":       "lz4",
		"linger.ms":              5,
		"broker.address.family":  "v4",
		"log_level":              3,
		"go.logs.channel.enable": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfDataLogs(t, p.Logs())
	base := time.UnixMilli(1_700_000_000_000)
	tp := topic
	deliveries := make(chan kafka.Event, n)
	for i := 0; i < n; i++ {
		err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &tp, Partition: int32(i % parts)},
			Value:          []byte(fmt.Sprint(i)),
			Key:            []byte(strings.Repeat("key-", 8)), // compressible
			Timestamp:      base.Add(time.Duration(i) * time.Second),
		}, deliveries)
		if err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	for i := 0; i < n; i++ {
		select {
		case ev := <-deliveries:
			m := ev.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
			// Records of one partition are delivered in order: i%parts
			// lands at offset i/parts.
			var v int
			fmt.Sscan(string(m.Value), &v)
			if int64(m.TopicPartition.Offset) != int64(v/parts) {
				t.Fatalf("record %d at offset %d, want %d", v, m.TopicPartition.Offset, v/parts)
			}
		case <-ctx.Done():
			t.Fatalf("timed out waiting for deliveries (%d/%d)", i, n)
		}
	}

	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers":      b.Addr(),
		"group.id":               "cf-data-unused", // required by the Go binding; never joined
		"enable.auto.commit":     false,
		"fetch.wait.max.ms":      100,
		"broker.address.family":  "v4",
		"log_level":              3,
		"go.logs.channel.enable": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfDataLogs(t, c.Logs())
	var assign []kafka.TopicPartition
	for i := int32(0); i < parts; i++ {
		assign = append(assign, kafka.TopicPartition{Topic: &tp, Partition: i, Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(assign); err != nil {
		t.Fatal(err)
	}
	next := make([]int64, parts)
	for got := 0; got < n; {
		if ctx.Err() != nil {
			t.Fatalf("timed out with %d/%d records", got, n)
		}
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				t.Fatalf("message error: %v", e.TopicPartition.Error)
			}
			part, off := e.TopicPartition.Partition, int64(e.TopicPartition.Offset)
			want := fmt.Sprint(off*parts + int64(part))
			if off != next[part] || string(e.Value) != want || !e.Timestamp.Equal(base.Add(time.Duration(off*parts+int64(part))*time.Second)) {
				t.Fatalf("p%d: offset %d value %q ts %v, want offset %d value %s", part, off, e.Value, e.Timestamp, next[part], want)
			}
			next[part]++
			got++
		case kafka.Error:
			if e.IsFatal() {
				t.Fatalf("fatal: %v", e)
			}
			t.Logf("librdkafka: %v", e)
		}
	}

	for i := int32(0); i < parts; i++ {
		lo, hi, err := c.QueryWatermarkOffsets(topic, i, 10000)
		if err != nil || lo != 0 || hi != n/parts {
			t.Errorf("watermarks p%d: %d..%d %v", i, lo, hi, err)
		}
	}
	// librdkafka compressed what it sent: the stored batches carry lz4.
	fr := kmsg.NewPtrFetchRequest()
	fr.Version, fr.MaxBytes, fr.SessionEpoch = 12, 10<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 1, 10<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	raw := b.Plane().Fetch(ctx, fr).Topics[0].Partitions[0].RecordBatches
	lz4Batches := 0
	for len(raw) > 0 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		if rb.Attributes&7 == 3 {
			lz4Batches++
		}
		raw = raw[rb.Length+12:]
	}
	if lz4Batches == 0 {
		t.Fatal("no lz4 batch stored")
	}
	// Record 100 (partition 1, offset 33) is the first of partition 1 at or
	// after base+99.5 s; it sits inside an lz4 batch.
	times := []kafka.TopicPartition{{Topic: &tp, Partition: 1, Offset: kafka.Offset(base.Add(99500 * time.Millisecond).UnixMilli())}}
	got, err := c.OffsetsForTimes(times, 10000)
	if err != nil || len(got) != 1 || got[0].Error != nil || got[0].Offset != 33 {
		t.Fatalf("offsets for times: %v %+v", err, got)
	}
}
