package bench

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Result is one workload measured on one target.
type Result struct {
	Workload string `json:"workload"`
	Target   string `json:"target"`
	Conns    int    `json:"connections"`
	// Members and Groups size the group workloads (0 when not applicable): Members consumers
	// spread over Groups groups, multiplexed over Conns connections; Partitions is the
	// subscribed topic's partition count of the join storms.
	Members    int   `json:"members,omitempty"`
	Groups     int   `json:"groups,omitempty"`
	Partitions int32 `json:"partitions,omitempty"`
	// Requests completed without error; Errors are requests that failed or whose response
	// carried an error code.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// Units is the work done (partition offsets, bytes, ...), UnitName says which.
	Units    int64   `json:"units"`
	UnitName string  `json:"unit_name,omitempty"`
	Seconds  float64 `json:"seconds"`
	// ReqPerSec and UnitsPerSec are rates over Seconds.
	ReqPerSec   float64 `json:"requests_per_sec"`
	UnitsPerSec float64 `json:"units_per_sec,omitempty"`
	// Latencies in milliseconds.
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
	Maxms float64 `json:"max_ms"`
	Note  string  `json:"note,omitempty"`
	// ClientCPUus is the load generator's CPU time (the bench process, user + system) per
	// completed request in microseconds (request workloads, Linux; 0 = not measured): CPU the
	// broker under test could not use.
	ClientCPUus float64 `json:"client_cpu_us_per_request,omitempty"`
	// ServerCPUus is the broker process's CPU time per completed request in microseconds, from
	// muster's process_cpu_seconds_total (10 ms resolution) around the timed loop; 0 = not
	// measured (kfake, or a muster without a known HTTP address). Steadier than requests/s on a
	// shared machine.
	ServerCPUus float64 `json:"server_cpu_us_per_request,omitempty"`
	// RecordsPerFsync is the coordinator records made durable per WAL fsync during the timed
	// loop (muster's muster_coordinator_batch_records_sum ÷ muster_store_wal_syncs_total; commit
	// workloads): group commit shares one fsync between requests.
	RecordsPerFsync float64 `json:"records_per_fsync,omitempty"`
	// Step, for shard-load results, names the step (offsets, members, empty-groups, restart).
	Step string `json:"step,omitempty"`
	// Memory of the broker process around a shard-load seeding step, in bytes: heap in use
	// after a forced GC (muster only) and resident set size; per unit = growth / units.
	HeapBefore  float64 `json:"heap_before_bytes,omitempty"`
	HeapAfter   float64 `json:"heap_after_bytes,omitempty"`
	RSSBefore   float64 `json:"rss_before_bytes,omitempty"`
	RSSAfter    float64 `json:"rss_after_bytes,omitempty"`
	HeapPerUnit float64 `json:"heap_bytes_per_unit,omitempty"`
	RSSPerUnit  float64 `json:"rss_bytes_per_unit,omitempty"`
	// Skipped is set (with Note) when the workload could not run on this target.
	Skipped bool `json:"skipped,omitempty"`
}

// op is one request of a workload on connection conn; it returns the units of work done, or why
// the request failed (a transport error or an error code in the response).
type op func(ctx context.Context, conn int, seq int64) (units int64, err error)

// closedLoop runs conns workers, each calling fn back to back, until d has passed or maxReq
// requests were sent in total (0 = no request bound). It returns a Result without names.
func closedLoop(ctx context.Context, conns int, d time.Duration, maxReq int64, fn op) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type local struct {
		lat          []time.Duration
		units, fails int64
		firstErr     error
	}
	locals := make([]local, conns)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sent int64
	)
	take := func() (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if maxReq > 0 && sent >= maxReq {
			return 0, false
		}
		sent++
		return sent, true
	}
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			l := &locals[w]
			for ctx.Err() == nil {
				seq, ok := take()
				if !ok {
					return
				}
				t0 := time.Now()
				u, err := fn(ctx, w, seq)
				el := time.Since(t0)
				if ctx.Err() != nil && err != nil {
					return // cut off by the deadline: not counted
				}
				if err != nil {
					l.fails++
					if l.firstErr == nil {
						l.firstErr = err
					}
					continue
				}
				l.lat = append(l.lat, el)
				l.units += u
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	r := Result{Conns: conns, Seconds: elapsed.Seconds()}
	for _, l := range locals {
		all = append(all, l.lat...)
		r.Units += l.units
		r.Errors += l.fails
		if l.firstErr != nil && r.Note == "" {
			r.Note = "first error: " + l.firstErr.Error()
		}
	}
	r.Requests = int64(len(all))
	fillRates(&r, all)
	return r
}

func fillRates(r *Result, lat []time.Duration) {
	if r.Seconds > 0 {
		r.ReqPerSec = float64(r.Requests) / r.Seconds
		r.UnitsPerSec = float64(r.Units) / r.Seconds
	}
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.P50ms = ms(quantile(lat, 0.50))
	r.P99ms = ms(quantile(lat, 0.99))
	r.Maxms = ms(lat[len(lat)-1])
}

// quantile returns the nearest-rank q-quantile of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
