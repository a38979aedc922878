package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceConsume runs producers franz-go producers, each writing records of o.RecordBytes to its
// own partition of a fresh topic (one partition per producer) for o.Duration, or until
// o.ProduceBytes are acknowledged in all, then consumes them all back. Each producer is
// franz-go's default: idempotent, acks=all, several produce requests in flight per connection.
// Units are bytes of record values; latencies are per produced record (buffered in the client).
func produceConsume(ctx context.Context, o *Options, t Target, topic string, producers int) (Result, Result) {
	producers = max(producers, 1)
	pr := Result{Workload: WProduce, Target: t.Name, Conns: producers, UnitName: "bytes"}
	cr := Result{Workload: WConsume, Target: t.Name, Conns: producers, UnitName: "bytes"}
	if err := createTopic(ctx, t.Addr, topic, int32(producers)); err != nil {
		pr.Skipped, pr.Note = true, err.Error()
		cr.Skipped, cr.Note = true, err.Error()
		return pr, cr
	}
	ps := make([]*conn, 0, producers)
	defer func() {
		for _, p := range ps {
			p.close()
		}
	}()
	for i := 0; i < producers; i++ {
		p, err := dialKgo(t.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.RecordRetries(3),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			pr.Skipped, pr.Note = true, err.Error()
			return pr, cr
		}
		ps = append(ps, p)
	}
	val := make([]byte, o.RecordBytes)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	// Warm-up: one acknowledged record per producer (not counted, but consumed below).
	wctx, wcancel := context.WithTimeout(ctx, o.WarmTimeout)
	for i, p := range ps {
		if err := p.cl.ProduceSync(wctx, &kgo.Record{Value: val, Partition: int32(i)}).FirstErr(); err != nil {
			wcancel()
			pr.Skipped, pr.Note = true, "warm-up produce: "+err.Error()
			cr.Skipped, cr.Note = true, pr.Note
			return pr, cr
		}
	}
	wcancel()
	var (
		acked, failed, sent atomic.Int64
		mu                  sync.Mutex
		lat                 []time.Duration
		firstErr            error
		wg                  sync.WaitGroup
	)
	start := time.Now()
	stopAt := start.Add(o.Duration)
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && (o.ProduceBytes <= 0 || sent.Add(int64(len(val))) <= o.ProduceBytes) {
				t0 := time.Now()
				if !t0.Before(stopAt) {
					break
				}
				p.cl.Produce(ctx, &kgo.Record{Value: val, Partition: int32(i)}, func(_ *kgo.Record, err error) {
					if err != nil {
						failed.Add(1)
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						return
					}
					acked.Add(1)
					d := time.Since(t0)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				})
			}
		}()
	}
	wg.Wait()
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	for _, p := range ps {
		_ = p.cl.Flush(fctx)
	}
	fcancel()
	pr.Seconds = time.Since(start).Seconds()
	pr.Requests, pr.Errors = acked.Load(), failed.Load()
	pr.Units = pr.Requests * int64(len(val))
	pr.Note = "requests = records; latency per record incl. client batching"
	if producers > 1 {
		pr.Note += "; one partition per producer"
	}
	if firstErr != nil {
		pr.Note += "; first error: " + firstErr.Error()
	}
	fillRates(&pr, lat)

	want := pr.Requests + int64(producers)
	parts := map[int32]kgo.Offset{}
	for i := 0; i < producers; i++ {
		parts[int32(i)] = kgo.NewOffset().AtStart()
	}
	c, err := dialKgo(t.Addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		cr.Skipped, cr.Note = true, err.Error()
		return pr, cr
	}
	defer c.close()
	cctx, ccancel := context.WithTimeout(ctx, o.Duration+30*time.Second)
	defer ccancel()
	start = time.Now()
	var got, bytes, fetches int64
	for got < want && cctx.Err() == nil {
		fs := c.cl.PollFetches(cctx)
		fetches++
		fs.EachRecord(func(r *kgo.Record) {
			got++
			bytes += int64(len(r.Value))
		})
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded && e.Err != context.Canceled {
				cr.Errors++
			}
		}
	}
	cr.Seconds = time.Since(start).Seconds()
	cr.Requests, cr.Units = got, bytes
	cr.Note = "requests = records"
	if got < want {
		cr.Note += "; consumed only part of what was produced"
		cr.Errors++
	}
	fillRates(&cr, nil)
	return pr, cr
}
