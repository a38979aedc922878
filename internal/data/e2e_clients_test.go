package data

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
)

func loopbackEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	addr := serveLoopback(t, e.p)
	host, port, _ := net.SplitHostPort(addr)
	var portN int32
	fmt.Sscan(port, &portN)
	e.p.cfg.AdvertisedHost, e.p.cfg.AdvertisedPort = host, portN
	return e, addr
}

// TestSaramaProduceConsume: IBM/sarama (Kafka 2.8 and 4.0 protocol
// versions) produces with an idempotent sync producer and consumes a partition.
func TestSaramaProduceConsume(t *testing.T) {
	for _, v := range []sarama.KafkaVersion{sarama.V2_8_0_0, sarama.V4_0_0_0} {
		t.Run(v.String(), func(t *testing.T) {
			e, addr := loopbackEnv(t)
			e.createTopic("s", 1, nil)
			cfg := sarama.NewConfig()
			cfg.Version = v
			cfg.Producer.Return.Successes = true
			cfg.Producer.RequiredAcks = sarama.WaitForAll
			cfg.Producer.Idempotent = true
			cfg.Net.MaxOpenRequests = 1
			cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
			prod, err := sarama.NewSyncProducer([]string{addr}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()
			for i := 0; i < 20; i++ {
				_, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "s", Value: sarama.StringEncoder(fmt.Sprint(i))})
				if err != nil || off != int64(i) {
					t.Fatalf("send %d: offset %d err %v", i, off, err)
				}
			}
			cons, err := sarama.NewConsumer([]string{addr}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer cons.Close()
			pc, err := cons.ConsumePartition("s", 0, sarama.OffsetOldest)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			timeout := time.After(10 * time.Second)
			for i := 0; i < 20; i++ {
				select {
				case m := <-pc.Messages():
					if m.Offset != int64(i) || string(m.Value) != fmt.Sprint(i) {
						t.Fatalf("message %d: offset %d value %q", i, m.Offset, m.Value)
					}
				case err := <-pc.Errors():
					t.Fatal(err)
				case <-timeout:
					t.Fatalf("timed out at %d", i)
				}
			}
		})
	}
}

// TestKafkaGoProduceConsume: segmentio/kafka-go Writer and partition Reader.
func TestKafkaGoProduceConsume(t *testing.T) {
	e, addr := loopbackEnv(t)
	e.createTopic("k", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "k", RequiredAcks: kafkago.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	var msgs []kafkago.Message
	for i := 0; i < 10; i++ {
		msgs = append(msgs, kafkago.Message{Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "k", Partition: 0, MaxWait: 100 * time.Millisecond})
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
