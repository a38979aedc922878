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
