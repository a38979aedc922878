package data

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkProduce measures Produce throughput through the handler with
// acks=all (Pebble Sync), 1 KiB records in batches of 100, with 1 and with
// several concurrent producers (RunParallel: parallelism × GOMAXPROCS
// goroutines, each producing to one partition of 8).
func BenchmarkProduce(b *testing.B) { benchmarkProduce(b, newEnv) }

// BenchmarkProduceGuarded is BenchmarkProduce with every write going through a disk guard
// (diskguard: Pebble's logger, FS and commit wrapper, the refusal check and Spend), as the
// broker runs it: the difference is the guard's cost on the fast path.
func BenchmarkProduceGuarded(b *testing.B) {
	benchmarkProduce(b, func(tb testing.TB) *env {
		ge := newGuardedEnv(tb, nil, 250*time.Millisecond)
		tb.Cleanup(func() { ge.p.Close(); ge.g.Close(); ge.db.Close() })
		return ge.env
	})
}

func benchmarkProduce(b *testing.B, newEnv func(testing.TB) *env) {
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

// BenchmarkClean measures the log cleaner: each iteration compacts a fresh topic of 400
// batches × 100 records (100-byte values, 2000 distinct keys, so most records are superseded)
// in 64 KiB segments, per codec. Bytes are the log's stored bytes before cleaning.
func BenchmarkClean(b *testing.B) {
	for _, codec := range []struct {
		name  string
		codec int16
	}{{"none", codecNone}, {"lz4", codecLz4}, {"zstd", codecZstd}} {
		b.Run(codec.name, func(b *testing.B) {
			e := newCompactEnv(b)
			now := e.now.UnixMilli()
			val := string(make([]byte, 100))
			var batches [][]byte
			for i := 0; i < 400; i++ {
				recs := make([]kv, 100)
				for j := range recs {
					recs[j] = rec(fmt.Sprintf("key-%04d", (i*100+j)*7%2000), val, now)
				}
				batches = append(batches, kvBatch(b, codec.codec, -1, 0, recs...))
			}
			var size int64
			for _, bt := range batches {
				size += int64(len(bt))
			}
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				topic := fmt.Sprint("clean-", i)
				e.createTopic(topic, 1, map[string]string{"cleanup.policy": "compact", "internal.segment.bytes": "65536"})
				for _, bt := range batches {
					req := kmsg.NewPtrProduceRequest()
					req.Version, req.Acks = 11, 0 // no fsync per batch: setup only
					rt := kmsg.NewProduceRequestTopic()
					rt.Topic = topic
					rt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: bt}}
					req.Topics = []kmsg.ProduceRequestTopic{rt}
					e.p.Produce(context.Background(), req)
				}
				b.StartTimer()
				if n := e.p.CleanLogs(); n != 1 {
					b.Fatalf("cleaned %d logs", n)
				}
				b.StopTimer()
				e.p.DeleteTopics(context.Background(), &kmsg.DeleteTopicsRequest{Version: 6,
					Topics: []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr(topic)}}})
				b.StartTimer()
			}
			b.ReportMetric(float64(400*100*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkFetch measures a Fetch of ~10 MiB from the start of a partition holding 100 batches
// of 100 × 1 KiB records (the store read and the response's assembly, no network).
func BenchmarkFetch(b *testing.B) {
	e := newEnv(b)
	e.createTopic("bench", 1, nil)
	batch := makeBatch(batchOpts{n: 100, valSize: 1024})
	for i := 0; i < 100; i++ {
		e.produce("bench", 0, batch)
	}
	req := fetchReq(11, "bench", 0, 0)
	req.Topics[0].Partitions[0].PartitionMaxBytes = 50 << 20
	b.SetBytes(int64(100 * len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp := e.p.Fetch(context.Background(), req)
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) < 100*len(batch) {
			b.Fatalf("fetch: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
		}
	}
}
