package member_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/broker"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/streams/member"
)

// startBroker runs an in-process muster broker on loopback for the example
// (any Kafka 4.1+ broker with the streams protocol enabled works too).
func startBroker() (addr string, stop func()) {
	dir, _ := os.MkdirTemp("", "member-example")
	vals, err := config.Parse(nil, []string{"group.streams.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=1",
		"group.streams.min.heartbeat.interval.ms=100", "group.streams.heartbeat.interval.ms=100"})
	if err != nil {
		panic(err)
	}
	b, err := broker.Start(broker.Options{Listen: "127.0.0.1:0", DataDir: dir, Config: vals,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.WaitReady(ctx); err != nil {
		panic(err)
	}
	return b.Addr(), func() { b.Close(); os.RemoveAll(dir) }
}

// A word-count application with one subtopology reading "words" (three
// partitions, hence three tasks) joins its streams group, is given every
// task, commits an offset for one of them and leaves.
func Example() {
	addr, stop := startBroker()
	defer stop()
	cl, _ := kgo.NewClient(kgo.SeedBrokers(addr))
	defer cl.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "words"); err != nil {
		panic(err)
	}

	// The KIP-1331 description is pushed only when the broker asks for it.
	desc, err := member.NewTopologyBuilder().
		Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"words"}, "KSTREAM-AGGREGATE-0000000001").
		Processor("KSTREAM-AGGREGATE-0000000001", []string{"counts"}).
		Done().
		Build()
	if err != nil {
		panic(err)
	}

	assigned := make(chan member.TaskSet, 1)
	m, err := member.Start(member.Config{
		Brokers: []string{addr},
		GroupID: "word-count",
		Topology: member.Topology{Epoch: 0, Subtopologies: []member.Subtopology{{
			ID:                   "0",
			SourceTopics:         []string{"words"},
			StateChangelogTopics: []member.TopicInfo{{Name: "word-count-counts-changelog"}},
		}}},
		TopologyDescription: desc,
		OnAssigned:          func(active, standby, warmup member.TaskSet) { assigned <- active },
		OnRevoked: func(active, standby, warmup member.TaskSet) {
			fmt.Println("revoked:", active)
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("assigned:", <-assigned)

	err = m.CommitTaskOffsets(ctx, []member.Offset{{Topic: "words", Partition: 1, Offset: 42, LeaderEpoch: -1}})
	fmt.Println("commit:", err)

	fmt.Println("close:", m.Close(ctx))
	// Output:
	// assigned: 0:[0,1,2]
	// commit: <nil>
	// revoked: 0:[0,1,2]
	// close: <nil>
}
