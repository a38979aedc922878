package data

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkProduce measures Produce throughput through the handler with
// acks=all (Pebble Sync), 1 KiB records in batches of 100, with 1 and with
// several concurrent producers (RunParallel: parallelism × GOMAXPROCS
// goroutines, each producing to one partition of 8).
func BenchmarkProduce(b *testing.B) {
	for _, producers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("parallelism=%d", producers), func(b *testing.B) {
			e := newEnv(b)
			e.createTopic("bench", 8, nil)
			batch := makeBatch(batchOpts{n: 100, valSize: 1024})
			b.SetBytes(int64(len(batch)))
			b.SetParallelism(producers) // × GOMAXPROCS goroutines
			b.ResetTimer()
			next := make(chan int32, 1)
			next <- 0
			b.RunParallel(func(pb *testing.PB) {
				part := <-next
				next <- (part + 1) % 8
				req := kmsg.NewPtrProduceRequest()
				req.Version, req.Acks = 11, -1
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic = "bench"
				rt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: part, Records: batch}}
				req.Topics = []kmsg.ProduceRequestTopic{rt}
				for pb.Next() {
					resp := e.p.Produce(context.Background(), req)
					if resp.Topics[0].Partitions[0].ErrorCode != 0 {
						b.Errorf("produce error %d", resp.Topics[0].Partitions[0].ErrorCode)
						return
					}
				}
			})
		})
	}
}

// BenchmarkListOffsetsByTimestamp measures a ListOffsets by timestamp whose
// answer sits in the last of 100 batches of 100 × 1 KiB records, per codec
// (the compressed cases decompress that one batch).
func BenchmarkListOffsetsByTimestamp(b *testing.B) {
	codecs := append([]struct {
		name  string
		codec int16
		fn    func([]byte) []byte
	}{{"none", codecNone, nil}}, testCodecs...)
	for _, c := range codecs {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			e.createTopic("lo", 1, nil)
			for i := 0; i < 100; i++ {
				e.produce("lo", 0, makeBatch(batchOpts{n: 100, valSize: 1024, ts: int64(i * 1000), attrs: c.codec, compress: c.fn}))
			}
			target := int64(99*1000 + 50)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if sp := listOffset(e, 8, "lo", 0, target); sp.Offset != 99*100+50 {
					b.Fatalf("offset %d", sp.Offset)
				}
			}
		})
	}
}

// BenchmarkEnforceRetention measures one retention pass over 100
// single-partition topics of 50 batches each where nothing is due (the
// steady state between deletions): time retention stops at the first batch.
func BenchmarkEnforceRetention(b *testing.B) {
	e := newEnv(b)
	batch := makeBatch(batchOpts{n: 10, valSize: 100, ts: e.now.UnixMilli()})
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("t%03d", i)
		e.createTopic(name, 1, nil)
		for j := 0; j < 50; j++ {
			e.produce(name, 0, batch)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := e.p.EnforceRetention(); n != 0 {
			b.Fatalf("deleted %d", n)
		}
	}
}
