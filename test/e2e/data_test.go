package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

// consumeAll reads every record of topic from the start with a group-less
// kgo consumer until want records arrived, checking offsets are dense.
func consumeAll(t *testing.T, ctx context.Context, addr, topic string, want int) map[string]bool {
	t.Helper()
	cl := newClient(t, addr, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	seen := map[string]bool{}
	next := map[int32]int64{}
	for len(seen) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("timed out with %d/%d records", len(seen), want)
		}
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch %s/%d: %v", tp, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			seen[string(r.Value)] = true
		})
	}
	cl.Close()
	return seen
}

// TestDataPlaneKgoRestart: an idempotent kgo producer writes to three
// partitions, the broker restarts, the producer keeps writing, and a consumer
// reads every record once with dense offsets; the topic ID survives.
func TestDataPlaneKgoRestart(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	created, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, "events")
	if err != nil || created.Err != nil {
		t.Fatal(err, created.Err)
	}
	produce := func(addr string, from, to int) {
		prod := newClient(t, addr, kgo.DefaultProduceTopic("events"))
		for i := from; i < to; i++ {
			prod.Produce(ctx, kgo.StringRecord(fmt.Sprint(i)), func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := prod.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		prod.Close()
	}
	produce(b.Addr(), 0, 500)
	b = b.Restart()
	adm = kadm.NewClient(newClient(t, b.Addr()))
	td, err := adm.ListTopics(ctx, "events")
	if err != nil || td["events"].ID != created.ID || len(td["events"].Partitions) != 3 {
		t.Fatalf("topic after restart: %v %+v", err, td["events"])
	}
	produce(b.Addr(), 500, 1000)
	if seen := consumeAll(t, ctx, b.Addr(), "events", 1000); len(seen) != 1000 {
		t.Fatalf("seen %d", len(seen))
	}
	ends, err := adm.ListEndOffsets(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 1000 {
		t.Fatalf("end offsets sum to %d", total)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rc.On("events", nil); err != nil || c.Err != nil {
		t.Fatalf("describe configs: %v", err)
	} else {
		for _, kv := range c.Configs {
			if kv.Key == "retention.ms" && (kv.Value == nil || *kv.Value != "3600000") {
				t.Fatalf("retention.ms = %v", kv.MaybeValue())
			}
		}
	}
}

// TestDataPlaneAdminErrors: kadm sees Kafka's error codes.
func TestDataPlaneAdminErrors(t *testing.T) {
	b := testutil.Start(t, "auto.create.topics.enable=false")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "a"); err != nil {
		t.Fatal(err)
	}
	if r, _ := adm.CreateTopic(ctx, 2, 1, nil, "a"); !errors.Is(r.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("duplicate create: %v", r.Err)
	}
	if r, _ := adm.UpdatePartitions(ctx, 1, "a"); !errors.Is(r["a"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrink: %v", r["a"].Err)
	}
	if r, err := adm.UpdatePartitions(ctx, 4, "a"); err != nil || r["a"].Err != nil {
		t.Fatalf("grow: %v %v", err, r["a"].Err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("missing"), kgo.RecordDeliveryTimeout(2*time.Second))
	if err := prod.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err == nil {
		t.Fatal("produce to a missing topic succeeded with auto-create off")
	}
	if r, err := adm.DeleteTopics(ctx, "a"); err != nil || r["a"].Err != nil {
		t.Fatalf("delete: %v %v", err, r["a"].Err)
	}
	td, _ := adm.ListTopics(ctx)
	if len(td) != 0 {
		t.Fatalf("topics after delete: %v", td.Names())
	}
}

// TestDataPlaneSarama: IBM/sarama at protocol 4.0 with an idempotent producer.
func TestDataPlaneSarama(t *testing.T) {
	b := testutil.Start(t)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	prod, err := sarama.NewSyncProducer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := 0; i < 20; i++ {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "sarama", Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	cons, err := sarama.NewConsumer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition("sarama", 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i := 0; i < 20; i++ {
		select {
		case m := <-pc.Messages():
			if m.Offset != int64(i) || string(m.Value) != fmt.Sprint(i) {
				t.Fatalf("message %d: offset %d value %q", i, m.Offset, m.Value)
			}
		case err := <-pc.Errors():
			t.Fatal(err)
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out at %d", i)
		}
	}
}

// TestDataPlaneKafkaGo: segmentio/kafka-go Writer and partition Reader.
func TestDataPlaneKafkaGo(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "kgo"); err != nil {
		t.Fatal(err)
	}
	w := &kafkago.Writer{Addr: kafkago.TCP(b.Addr()), Topic: "kgo", RequiredAcks: kafkago.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	var msgs []kafkago.Message
	for i := 0; i < 10; i++ {
		msgs = append(msgs, kafkago.Message{Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{b.Addr()}, Topic: "kgo", Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for i := 0; i < 10; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprint(i) {
			t.Fatalf("message %d: offset %d value %q", i, m.Offset, m.Value)
		}
	}
}

// TestDataPlaneKcat: librdkafka 2.0.2 through kcat (skipped when not installed).
func TestDataPlaneKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := "one\ntwo\nthree\n"
	p := exec.CommandContext(ctx, kcat, "-b", b.Addr(), "-t", "kcat", "-P", "-X", "acks=all")
	p.Stdin = strings.NewReader(in)
	if out, err := p.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v: %s", err, out)
	}
	c := exec.CommandContext(ctx, kcat, "-b", b.Addr(), "-t", "kcat", "-C", "-e", "-o", "beginning", "-f", "%o:%s\n")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("kcat -C: %v: %s", err, stderr.String())
	}
	if got := stdout.String(); got != "0:one\n1:two\n2:three\n" {
		t.Fatalf("kcat consumed %q", got)
	}
	l := exec.CommandContext(ctx, kcat, "-b", b.Addr(), "-L", "-t", "kcat")
	if out, err := l.CombinedOutput(); err != nil || !strings.Contains(string(out), `topic "kcat" with 1 partitions`) {
		t.Fatalf("kcat -L: %v: %s", err, out)
	}
}
