// Command copier is the read-process-write application of the transaction tests: it copies
// every record of one topic into another, exactly once, as a consumer group member with a
// transactional producer, using one of the Go clients that run against muster (franz-go's
// GroupTransactSession, IBM/sarama's transactional producer with a consumer group,
// confluent-kafka-go's SendOffsetsToTransaction). It runs until killed; the tests SIGKILL it
// at random moments and start it again. Any error it cannot handle ends the process (exit 1):
// a crashed EOS application is restarted, never resumed half-way.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

// hold is how long each transaction stays open after its records are produced.
var hold time.Duration

func main() {
	client := flag.String("client", "kgo", "kgo, sarama or confluent")
	brokers := flag.String("brokers", "", "bootstrap server host:port")
	group := flag.String("group", "copier", "consumer group")
	txnID := flag.String("txn-id", "copier", "transactional id")
	instance := flag.String("instance", "copier-1", "group.instance.id (static membership)")
	in := flag.String("in", "in", "input topic")
	out := flag.String("out", "out", "output topic")
	flag.DurationVar(&hold, "hold", 0, "how long each transaction stays open after its records are produced (so a kill lands mid-transaction)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var err error
	switch *client {
	case "kgo":
		err = runKgo(ctx, *brokers, *group, *txnID, *instance, *in, *out)
	case "sarama":
		err = runSarama(ctx, *brokers, *group, *txnID, *instance, *in, *out)
	case "confluent":
		err = runConfluent(ctx, *brokers, *group, *txnID, *instance, *in, *out)
	default:
		err = fmt.Errorf("unknown client %q", *client)
	}
	if err != nil && ctx.Err() == nil {
		log.Printf("copier (%s): %v", *client, err)
		os.Exit(1)
	}
}

// runKgo copies with franz-go's GroupTransactSession (it aborts when partitions are revoked
// and commits the group's offsets with TxnOffsetCommit v3+ and the member's generation).
func runKgo(ctx context.Context, brokers, group, txnID, instance, in, out string) error {
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(brokers), kgo.TransactionalID(txnID),
		kgo.ConsumerGroup(group), kgo.InstanceID(instance), kgo.ConsumeTopics(in), kgo.DefaultProduceTopic(out),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.TransactionTimeout(10*time.Second), kgo.SessionTimeout(6*time.Second), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RequireStableFetchOffsets(), kgo.RetryTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer sess.Close()
	for ctx.Err() == nil {
		fs := sess.PollRecords(ctx, 200)
		if ctx.Err() != nil {
			return nil
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Key: r.Key, Value: r.Value, Partition: r.Partition})
		})
		var perr error
		if len(recs) > 0 {
			perr = sess.ProduceSync(ctx, recs...).FirstErr()
			time.Sleep(hold)
		}
		if _, err := sess.End(ctx, kgo.TransactionEndTry(perr == nil)); err != nil {
			return fmt.Errorf("end: %w", err)
		}
	}
	return nil
}

// runSarama copies with an IBM/sarama consumer group and transactional async producer: each
// batch of a claim is one transaction with its offsets (AddOffsetsToTxnWithGroupMetadata,
// TxnOffsetCommit v3 with the member's generation). Transactions of the claims run one at a
// time on the shared producer.
func runSarama(ctx context.Context, brokers, group, txnID, instance, in, out string) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "sarama-copier"
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = txnID
	cfg.Producer.Transaction.Timeout = 10 * time.Second
	cfg.Producer.Retry.Max = 10
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.InstanceId = instance
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = time.Second
	prod, err := sarama.NewAsyncProducer([]string{brokers}, cfg)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	go func() {
		for range prod.Successes() {
		}
	}()
	go func() {
		for range prod.Errors() {
		}
	}()
	cg, err := sarama.NewConsumerGroup([]string{brokers}, group, cfg)
	if err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	defer cg.Close()
	h := &saramaHandler{prod: prod, group: group, instance: instance, out: out, fatal: make(chan error, 1)}
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, []string{in}, h); err != nil {
			return fmt.Errorf("consume: %w", err)
		}
		select {
		case err := <-h.fatal:
			return err
		default:
		}
	}
	return nil
}

type saramaHandler struct {
	prod     sarama.AsyncProducer
	group    string
	instance string
	out      string
	mu       sync.Mutex // one transaction at a time on the shared producer
	fatal    chan error
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var batch []*sarama.ConsumerMessage
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := h.prod.BeginTxn(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		for _, m := range batch {
			h.prod.Input() <- &sarama.ProducerMessage{Topic: h.out, Key: sarama.ByteEncoder(m.Key), Value: sarama.ByteEncoder(m.Value), Partition: m.Partition}
		}
		last := batch[len(batch)-1]
		offsets := map[string][]*sarama.PartitionOffsetMetadata{
			last.Topic: {{Partition: last.Partition, Offset: last.Offset + 1}},
		}
		time.Sleep(hold)
		md := sarama.NewConsumerGroupMetadataFromSession(sess, h.group, &h.instance)
		if err := h.prod.AddOffsetsToTxnWithGroupMetadata(offsets, md); err != nil {
			_ = h.prod.AbortTxn()
			return fmt.Errorf("add offsets: %w", err)
		}
		if err := h.prod.CommitTxn(); err != nil {
			_ = h.prod.AbortTxn()
			return fmt.Errorf("commit: %w", err)
		}
		batch = batch[:0]
		return nil
	}
	fail := func(err error) error {
		select {
		case h.fatal <- err:
		default:
		}
		return err
	}
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			batch = append(batch, m)
			if len(batch) >= 100 {
				if err := flush(); err != nil {
					return fail(err)
				}
			}
		case <-tick.C:
			if err := flush(); err != nil {
				return fail(err)
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}

// runConfluent copies with confluent-kafka-go (bundled librdkafka): a read_committed consumer
// without auto commit and a transactional producer; each polled batch is one transaction whose
// offsets go with SendOffsetsToTransaction and the consumer's group metadata.
func runConfluent(ctx context.Context, brokers, group, txnID, instance, in, out string) error {
	cons, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": brokers, "group.id": group,
		"group.instance.id": instance, "enable.auto.commit": false, "isolation.level": "read_committed",
		"auto.offset.reset": "earliest", "session.timeout.ms": 6000, "go.logs.channel.enable": false})
	if err != nil {
		return err
	}
	defer cons.Close()
	prod, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": brokers, "transactional.id": txnID,
		"transaction.timeout.ms": 10000})
	if err != nil {
		return err
	}
	defer prod.Close()
	go func() {
		for range prod.Events() {
		}
	}()
	if err := prod.InitTransactions(ctx); err != nil {
		return fmt.Errorf("init transactions: %w", err)
	}
	if err := cons.SubscribeTopics([]string{in}, nil); err != nil {
		return err
	}
	for ctx.Err() == nil {
		var batch []*kafka.Message
		deadline := time.Now().Add(100 * time.Millisecond)
		for len(batch) < 200 && time.Now().Before(deadline) {
			ev := cons.Poll(20)
			switch e := ev.(type) {
			case *kafka.Message:
				if e.TopicPartition.Error != nil {
					return e.TopicPartition.Error
				}
				batch = append(batch, e)
			case kafka.Error:
				if e.IsFatal() {
					return e
				}
			}
		}
		if len(batch) == 0 {
			continue
		}
		if err := prod.BeginTransaction(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		next := map[int32]kafka.TopicPartition{}
		for _, m := range batch {
			if err := prod.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &out, Partition: m.TopicPartition.Partition},
				Key: m.Key, Value: m.Value}, nil); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			tp := m.TopicPartition
			tp.Offset++
			next[tp.Partition] = tp
		}
		var offsets []kafka.TopicPartition
		for _, tp := range next {
			offsets = append(offsets, tp)
		}
		time.Sleep(hold)
		md, err := cons.GetConsumerGroupMetadata()
		if err != nil {
			return err
		}
		if err := prod.SendOffsetsToTransaction(ctx, offsets, md); err != nil {
			return fmt.Errorf("send offsets: %w", err)
		}
		if err := prod.CommitTransaction(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}
