package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceConsume produces records of o.RecordBytes to a fresh 1-partition topic for o.Duration
// (or until o.ProduceBytes are acknowledged), then consumes them all back. The producer is
// franz-go's default: idempotent, several produce requests in flight per connection. Units are bytes of
// record values; latencies are per produced record (buffered in the client, acks=all).
func produceConsume(ctx context.Context, o *Options, t Target, topic string) (Result, Result) {
	pr := Result{Workload: WProduce, Target: t.Name, Conns: 1, UnitName: "bytes"}
	cr := Result{Workload: WConsume, Target: t.Name, Conns: 1, UnitName: "bytes"}
	if err := createTopic(ctx, t.Addr, topic, 1); err != nil {
		pr.Skipped, pr.Note = true, err.Error()
		cr.Skipped, cr.Note = true, err.Error()
		return pr, cr
	}
	p, err := dialKgo(t.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.RecordRetries(3))
	if err != nil {
		pr.Skipped, pr.Note = true, err.Error()
		return pr, cr
	}
	defer p.close()
	val := make([]byte, o.RecordBytes)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	// Warm-up: one acknowledged record (not counted, but consumed below).
	wctx, wcancel := context.WithTimeout(ctx, o.WarmTimeout)
	err = p.cl.ProduceSync(wctx, &kgo.Record{Value: val}).FirstErr()
	wcancel()
	if err != nil {
		pr.Skipped, pr.Note = true, "warm-up produce: "+err.Error()
		cr.Skipped, cr.Note = true, pr.Note
		return pr, cr
	}
	var (
		acked, failed atomic.Int64
		mu            sync.Mutex
		lat           []time.Duration
		firstErr      error
	)
	start := time.Now()
	stopAt := start.Add(o.Duration)
	for sent := int64(0); ctx.Err() == nil && (o.ProduceBytes <= 0 || sent < o.ProduceBytes); sent += int64(len(val)) {
		t0 := time.Now()
		if !t0.Before(stopAt) {
			break
		}
		p.cl.Produce(ctx, &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
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
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	_ = p.cl.Flush(fctx)
	fcancel()
	pr.Seconds = time.Since(start).Seconds()
	pr.Requests, pr.Errors = acked.Load(), failed.Load()
	pr.Units = pr.Requests * int64(len(val))
	pr.Note = "requests = records; latency per record incl. client batching"
	if firstErr != nil {
		pr.Note += "; first error: " + firstErr.Error()
	}
	fillRates(&pr, lat)

	want := pr.Requests + 1
	c, err := dialKgo(t.Addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
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
