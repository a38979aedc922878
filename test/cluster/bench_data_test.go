package cluster_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/pgtest"
)

// BenchmarkClusterProduceConsume measures the data plane: produce MB/s (acks=all, idempotent
// franz-go producers, 1 KiB uncompressed values, one producer per node) for a fixed time, then
// consume MB/s (one franz-go consumer reading every partition from the start to the end), for
// the embedded Pebble store (one node) and PostgreSQL with one and three nodes, side by side in
// one run:
//
//	go test ./test/cluster -run '^$' -bench ClusterProduceConsume -benchtime 1x
func BenchmarkClusterProduceConsume(b *testing.B) {
	modes := []struct {
		name  string
		nodes int
		pg    bool
	}{{"pebble-1", 1, false}, {"postgres-1", 1, true}, {"postgres-3", 3, true}}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			url := ""
			if m.pg {
				url = pgtest.NewDatabase(b)
			}
			ns := benchNodes(b, url, m.nodes)
			ns[0].createTopic("bench", 12)
			for deadline := time.Now().Add(30 * time.Second); !allLed(ns[0], "bench"); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatal("partitions of bench not led")
				}
			}
			var seeds []string
			for _, n := range ns {
				seeds = append(seeds, n.addr)
			}
			produced, records, pd := produceLoad(b, seeds, len(ns), 6*time.Second)
			consumed, cd := consumeAll(b, seeds, records)
			pmb := float64(produced) / pd.Seconds() / 1e6
			cmb := float64(consumed) / cd.Seconds() / 1e6
			b.ReportMetric(pmb, "produce-MB/s")
			b.ReportMetric(cmb, "consume-MB/s")
			b.Logf("%s: produce %.1f MB/s (%d records in %v), consume %.1f MB/s (%v)", m.name, pmb, records, pd.Round(time.Millisecond), cmb, cd.Round(time.Millisecond))
		})
	}
}

// allLed reports whether node n's Metadata names a leader for every partition of topic.
func allLed(n *node, topic string) bool {
	ls := leadersOf(n, topic)
	for _, l := range ls {
		if l.code != 0 || l.leader < 0 {
			return false
		}
	}
	return len(ls) > 0
}

// produceLoad produces 1 KiB records to topic bench with producers clients for d and returns
// the acknowledged value bytes, records and the time until the last acknowledgement.
func produceLoad(b *testing.B, seeds []string, producers int, d time.Duration) (int64, int64, time.Duration) {
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var bytes, records atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < producers; i++ {
		cl, err := kgo.NewClient(append(clientOpts(seeds), kgo.DefaultProduceTopic("bench"), kgo.ProducerLinger(5*time.Millisecond),
			kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedRecords(20000), kgo.ProducerBatchMaxBytes(1<<20))...)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for n := 0; time.Since(start) < d; n++ {
				cl.Produce(context.Background(), &kgo.Record{Key: []byte(strconv.Itoa(n)), Value: value}, func(r *kgo.Record, err error) {
					if err == nil {
						bytes.Add(int64(len(r.Value)))
						records.Add(1)
					}
				})
			}
			cl.Flush(context.Background())
		}()
	}
	wg.Wait()
	return bytes.Load(), records.Load(), time.Since(start)
}

// consumeAll reads topic bench from the start until it has read records records and returns
// the value bytes and the time taken.
func consumeAll(b *testing.B, seeds []string, records int64) (int64, time.Duration) {
	cl, err := kgo.NewClient(append(clientOpts(seeds), kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(8<<20))...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var bytes, n int64
	start := time.Now()
	for n < records && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			bytes += int64(len(r.Value))
			n++
		})
	}
	if n < records {
		b.Fatalf("consumed %d of %d records", n, records)
	}
	return bytes, time.Since(start)
}
