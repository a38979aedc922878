//go:build cgo

package security

import (
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestConfluentSASLSSLScram: confluent-kafka-go (bundled librdkafka, OpenSSL) produces and
// consumes over SASL_SSL with SCRAM-SHA-512, verifying the server certificate against the test
// CA (host name checked: the certificate names 127.0.0.1).
func TestConfluentSASLSSLScram(t *testing.T) {
	sb := startSecure(t)
	sb.createTopic(t, "confluent", 1)
	sb.allow(t, kadm.NewACLs().Allow("User:bob").Topics("confluent").Operations(kadm.OpWrite, kadm.OpRead))
	sb.allow(t, kadm.NewACLs().Allow("User:bob").Groups("confluent-g").Operations(kadm.OpRead))
	common := kafka.ConfigMap{
		"bootstrap.servers": sb.SASLSSL, "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512",
		"sasl.username": "bob", "sasl.password": "bob-secret", "ssl.ca.location": sb.PKI.CAFile,
		"broker.address.family": "v4", "log_level": 3,
	}
	pc := kafka.ConfigMap{"acks": "all"}
	for k, v := range common {
		pc[k] = v
	}
	p, err := kafka.NewProducer(&pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	topic := "confluent"
	dr := make(chan kafka.Event, 1)
	if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte("over SASL_SSL")}, dr); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-dr:
		if m := e.(*kafka.Message); m.TopicPartition.Error != nil {
			t.Fatalf("delivery: %v", m.TopicPartition.Error)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery report")
	}
	cc := kafka.ConfigMap{"group.id": "confluent-g", "auto.offset.reset": "earliest", "enable.auto.commit": false}
	for k, v := range common {
		cc[k] = v
	}
	c, err := kafka.NewConsumer(&cc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		m, err := c.ReadMessage(time.Second)
		if err != nil {
			if ke, ok := err.(kafka.Error); ok && ke.IsTimeout() {
				continue
			}
			t.Fatalf("read: %v", err)
		}
		if string(m.Value) == "over SASL_SSL" {
			return
		}
	}
	t.Fatal("no message")
}
