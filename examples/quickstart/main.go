// Command quickstart is the README's "Try it", as a program you can run: it creates the topic
// "orders", produces one record to it, consumes that record as a member of the consumer group
// "g1" and commits its offset, so that the describe which follows shows the committed offset.
//
//	go run ./cmd/muster serve                         # in one terminal
//	go run ./examples/quickstart                      # in another: broker on 127.0.0.1:9092
//	go run ./cmd/muster consumer-groups --bootstrap-server 127.0.0.1:9092 --describe --group g1
//
// It works against any Kafka broker (-brokers host:port,...) and can be run again: each run
// produces, consumes and commits one more record.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated bootstrap brokers")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, strings.Split(*brokers, ","), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, out io.Writer) error {
	// A plain client: creates the topic and produces.
	producer, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer producer.Close()

	// Three partitions, replication factor 1 (a single broker). The topic stays from an earlier
	// run. (muster also creates topics a client asks for, as Kafka's auto.create.topics.enable.)
	created, err := kadm.NewClient(producer).CreateTopic(ctx, 3, 1, nil, "orders")
	if err == nil {
		err = created.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating topic orders: %w", err)
	}

	// Produce one record; ProduceSync returns once the broker has acknowledged it (muster: once
	// it is on disk).
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("hello")}).FirstErr(); err != nil {
		return fmt.Errorf("producing: %w", err)
	}

	// A consumer in group g1, committing by hand. Without a committed offset it starts at the
	// beginning of each partition; with one (an earlier run), after it.
	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumerGroup("g1"),
		kgo.ConsumeTopics("orders"),
		kgo.DisableAutoCommit(),
	)
	if err != nil {
		return err
	}
	defer consumer.Close() // leaves the group

	for {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("no record consumed: %w", err)
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetching from %s/%d: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		if fetches.NumRecords() == 0 {
			continue
		}
		fetches.EachRecord(func(r *kgo.Record) {
			fmt.Fprintf(out, "consumed %q from %s/%d at offset %d\n", r.Value, r.Topic, r.Partition, r.Offset)
		})
		// Commit the offsets of what was consumed (the next offset to read, per partition).
		if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
			return fmt.Errorf("committing: %w", err)
		}
		fmt.Fprintln(out, "committed the offsets of group g1")
		return nil
	}
}
