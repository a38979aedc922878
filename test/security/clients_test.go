package security

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	kgoplain "github.com/segmentio/kafka-go/sasl/plain"
	kgoscram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/xdg-go/scram"
)

// saramaSCRAM adapts xdg-go/scram to sarama's SCRAMClient (sarama needs a generator).
type saramaSCRAM struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (s *saramaSCRAM) Begin(user, pass, authz string) error {
	c, err := s.hash.NewClient(user, pass, authz)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}
func (s *saramaSCRAM) Step(challenge string) (string, error) { return s.conv.Step(challenge) }
func (s *saramaSCRAM) Done() bool                            { return s.conv.Done() }

// TestSaramaMechanisms: IBM/sarama produces and consumes with PLAIN and SCRAM-SHA-256/512,
// with SaslHandshake v0 (raw tokens) and v1 (SaslAuthenticate).
func TestSaramaMechanisms(t *testing.T) {
	sb := startSecure(t)
	sb.createTopic(t, "sarama", 1)
	sb.allow(t, kadm.NewACLs().Allow("User:bob").Topics("sarama").Operations(kadm.OpWrite, kadm.OpRead))
	for _, mech := range []sarama.SASLMechanism{sarama.SASLTypePlaintext, sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512} {
		for _, version := range []int16{sarama.SASLHandshakeV0, sarama.SASLHandshakeV1} {
			name := fmt.Sprintf("%s-v%d", mech, version)
			t.Run(name, func(t *testing.T) {
				cfg := sarama.NewConfig()
				cfg.Version = sarama.V4_0_0_0
				cfg.Net.SASL.Enable = true
				cfg.Net.SASL.Mechanism = mech
				cfg.Net.SASL.Version = version
				if version == sarama.SASLHandshakeV0 {
					cfg.ApiVersionsRequest = false // sarama's rule for the raw-token flow
				}
				cfg.Net.SASL.User, cfg.Net.SASL.Password = "bob", "bob-secret"
				switch mech {
				case sarama.SASLTypeSCRAMSHA256:
					cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaSCRAM{hash: scram.SHA256} }
				case sarama.SASLTypeSCRAMSHA512:
					cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaSCRAM{hash: scram.SHA512} }
				}
				cfg.Producer.Return.Successes = true
				cfg.Producer.RequiredAcks = sarama.WaitForAll
				cfg.Metadata.AllowAutoTopicCreation = false
				p, err := sarama.NewSyncProducer([]string{sb.SASLPlaintext}, cfg)
				if err != nil {
					t.Fatalf("producer: %v", err)
				}
				defer p.Close()
				_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sarama", Value: sarama.StringEncoder(name)})
				if err != nil {
					t.Fatalf("send: %v", err)
				}
				c, err := sarama.NewConsumer([]string{sb.SASLPlaintext}, cfg)
				if err != nil {
					t.Fatalf("consumer: %v", err)
				}
				defer c.Close()
				pc, err := c.ConsumePartition("sarama", 0, off)
				if err != nil {
					t.Fatalf("consume: %v", err)
				}
				defer pc.Close()
				select {
				case m := <-pc.Messages():
					if string(m.Value) != name {
						t.Fatalf("read %q", m.Value)
					}
				case err := <-pc.Errors():
					t.Fatalf("consume: %v", err)
				case <-time.After(10 * time.Second):
					t.Fatal("no message")
				}
			})
		}
	}
	// A wrong password fails cleanly and the broker keeps serving.
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Net.SASL.Enable, cfg.Net.SASL.Mechanism = true, sarama.SASLTypePlaintext
	cfg.Net.SASL.User, cfg.Net.SASL.Password = "bob", "wrong"
	cfg.Metadata.Retry.Max = 0
	if _, err := sarama.NewClient([]string{sb.SASLPlaintext}, cfg); err == nil {
		t.Fatal("sarama authenticated with a wrong password")
	}
}

// TestKafkaGoMechanisms: segmentio/kafka-go writes and reads with PLAIN and SCRAM-SHA-256/512.
func TestKafkaGoMechanisms(t *testing.T) {
	sb := startSecure(t)
	sb.createTopic(t, "kafkago", 1)
	sb.allow(t, kadm.NewACLs().Allow("User:alice").Topics("kafkago").Operations(kadm.OpWrite, kadm.OpRead))
	s256, _ := kgoscram.Mechanism(kgoscram.SHA256, "alice", "alice-secret")
	s512, _ := kgoscram.Mechanism(kgoscram.SHA512, "alice", "alice-secret")
	for i, m := range []struct {
		name string
		mech interface {
			Name() string
		}
	}{{"plain", kgoplain.Mechanism{Username: "alice", Password: "alice-secret"}}, {"scram256", s256}, {"scram512", s512}} {
		t.Run(m.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var dialer *kafkago.Dialer
			var tr *kafkago.Transport
			switch x := m.mech.(type) {
			case kgoplain.Mechanism:
				dialer, tr = &kafkago.Dialer{Timeout: 10 * time.Second, SASLMechanism: x}, &kafkago.Transport{SASL: x}
			default:
				sm := s256
				if m.name == "scram512" {
					sm = s512
				}
				dialer, tr = &kafkago.Dialer{Timeout: 10 * time.Second, SASLMechanism: sm}, &kafkago.Transport{SASL: sm}
			}
			w := &kafkago.Writer{Addr: kafkago.TCP(sb.SASLPlaintext), Topic: "kafkago", Transport: tr, RequiredAcks: kafkago.RequireAll}
			defer w.Close()
			val := fmt.Sprintf("kafka-go %d", i)
			if err := w.WriteMessages(ctx, kafkago.Message{Value: []byte(val)}); err != nil {
				t.Fatalf("write: %v", err)
			}
			r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{sb.SASLPlaintext}, Topic: "kafkago", Partition: 0, Dialer: dialer, MaxWait: 100 * time.Millisecond})
			defer r.Close()
			r.SetOffset(kafkago.FirstOffset)
			for {
				msg, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if string(msg.Value) == val {
					return
				}
			}
		})
	}
}
