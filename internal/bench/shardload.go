package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Shard-load steps (Result.Step of WShardLoad results).
const (
	StepOffsets     = "offsets"         // committed offsets seeded
	StepSettled     = "offsets-settled" // the offsets step's growth read again after Options.LoadSettle
	StepMembers     = "members"         // KIP-848 members joined
	StepEmptyGroups = "empty-groups"    // consumer groups whose only member joined and left
	StepRestart     = "restart"         // SIGTERM, start on the same data dir, wait for /readyz
)

// loadPartitions is the partitions per group of the seeded offsets (topic bench-load).
const loadPartitions = 1000

// seedConns is the connections the seeding steps use in parallel.
const seedConns = 8

// ShardLoadOverrides are the muster config overrides muster-bench passes when shard-load runs
// on a muster it starts: the seeded members join with one heartbeat each and never heartbeat
// again, so their sessions must outlive the seeding, the readings and the restart (the default
// 45 s session would expire the first members while the last ones join).
func ShardLoadOverrides() []string {
	return []string{"group.consumer.session.timeout.ms=3600000", "group.consumer.max.session.timeout.ms=3600000"}
}

// ClassicStormOverrides are the overrides muster-bench passes when classic-join-storm runs on
// a muster it starts: group.initial.rebalance.delay.ms=0, so the storm times the coordinator's
// work rather than Kafka's initial delay (3 s, extended while members keep joining), which kfake
// does not have.
func ClassicStormOverrides() []string {
	return []string{"group.initial.rebalance.delay.ms=0"}
}

// memReading is one memory reading of a broker process: heap in use after a forced GC (muster
// only: /debug/pprof/heap?gc=1 then go_memstats_heap_inuse_bytes) and resident set size
// (process_resident_memory_bytes, or VmRSS from /proc/<pid>/status).
type memReading struct {
	heap, rss float64
}

// shardLoad seeds o.LoadOffsets committed offsets, o.LoadMembers KIP-848 members (10 per
// group) and o.LoadGroups empty groups, reading the process's memory before and after each step
// (per-unit heap and RSS), then restarts muster on the same data dir and times /readyz and the
// replay. kfake gets the offsets step only (RSS from /proc, no heap, no restart).
func shardLoad(ctx context.Context, o *Options, t Target, run string) []Result {
	var out []Result
	skip := func(step, why string) {
		out = append(out, Result{Workload: WShardLoad, Target: t.Name, Step: step, Skipped: true, Note: why})
	}
	read := func() (memReading, error) { return readMemory(ctx, t) }
	if _, err := read(); err != nil {
		skip(StepOffsets, "memory not readable: "+err.Error())
		return out
	}
	isMuster := t.HTTP != ""
	if o.LoadOffsets > 0 {
		parts := min(loadPartitions, o.LoadOffsets)
		groups := (o.LoadOffsets + parts - 1) / parts
		if err := createTopic(ctx, t.Addr, "bench-load", int32(parts)); err != nil {
			skip(StepOffsets, err.Error())
		} else {
			type job struct{ g, start int }
			var jobs []job
			for g := 0; g < groups; g++ {
				for s := 0; s < parts && g*parts+s < o.LoadOffsets; s += 50 {
					jobs = append(jobs, job{g, s})
				}
			}
			prefix := "bench-load-" + run + "-"
			out = append(out, seedStep(ctx, o, t, StepOffsets, "committed offsets", read, len(jobs), func(c *conn, j int) (int64, error) {
				jb := jobs[j]
				end := min(jb.start+50, parts, o.LoadOffsets-jb.g*parts)
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation, req.RetentionTimeMillis = prefix+strconv.Itoa(jb.g), -1, -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = "bench-load"
				for p := jb.start; p < end; p++ {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch = int32(p), int64(p)*7, -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				r, err := c.do(ctx, req)
				if err != nil {
					return 0, err
				}
				return commitResult(r.(*kmsg.OffsetCommitResponse), end-jb.start)
			}))
			if o.LoadSettle > 0 {
				out = append(out, settleStep(ctx, o, t, out[len(out)-1], read))
			}
		}
	}
	if !isMuster {
		return out // kfake: only RSS per committed offset (no heap reading, no restart)
	}
	if o.LoadMembers > 0 {
		members := o.LoadMembers
		prefix := "bench-lm-" + run + "-"
		out = append(out, seedStep(ctx, o, t, StepMembers, "members", read, members, func(c *conn, i int) (int64, error) {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group = prefix + strconv.Itoa(i/10)
			req.MemberID, req.MemberEpoch = "lm-"+strconv.Itoa(i)+"-"+run, 0
			req.RebalanceTimeoutMillis = 60000
			req.SubscribedTopicNames = []string{"bench-cgh"}
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			r, err := c.do(ctx, req)
			if err != nil {
				return 0, err
			}
			return 1, kerr.ErrorForCode(r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode)
		}))
	}
	if o.LoadGroups > 0 {
		prefix := "bench-lg-" + run + "-"
		out = append(out, seedStep(ctx, o, t, StepEmptyGroups, "empty groups", read, o.LoadGroups, func(c *conn, i int) (int64, error) {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.MemberEpoch = prefix+strconv.Itoa(i), "lg-"+strconv.Itoa(i)+"-"+run, 0
			req.RebalanceTimeoutMillis = 60000
			req.SubscribedTopicNames = []string{"bench-cgh"}
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			r, err := c.do(ctx, req)
			if err != nil {
				return 0, err
			}
			resp := r.(*kmsg.ConsumerGroupHeartbeatResponse)
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return 0, err
			}
			leave := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			leave.Group, leave.MemberID, leave.MemberEpoch = req.Group, req.MemberID, -1
			if resp.MemberID != nil && *resp.MemberID != "" {
				leave.MemberID = *resp.MemberID
			}
			r, err = c.do(ctx, leave)
			if err != nil {
				return 0, err
			}
			return 1, kerr.ErrorForCode(r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode)
		}))
	}
	if t.proc == nil {
		skip(StepRestart, "muster not started by bench (--muster-addr): no restart")
		return out
	}
	out = append(out, restartStep(ctx, o, t))
	return out
}

// seedStep runs n seeding requests over seedConns connections, with memory readings before and
// after; the result's per-unit heap and RSS are the growth divided by the units seeded.
func seedStep(ctx context.Context, o *Options, t Target, step, unit string, read func() (memReading, error),
	n int, fn func(c *conn, i int) (int64, error)) Result {
	res := Result{Workload: WShardLoad, Target: t.Name, Step: step, UnitName: unit, Conns: seedConns}
	before, err := read()
	if err != nil {
		res.Skipped, res.Note = true, "memory before: "+err.Error()
		return res
	}
	cs, err := dialAll(t.Addr, ClientRaw, seedConns)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer closeAll(cs)
	var (
		next, units, reqs, fails atomic.Int64
		firstErr                 atomic.Value
		wg                       sync.WaitGroup
	)
	bound := max(o.Duration+o.WarmTimeout, 10*time.Minute)
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	for w := range cs {
		wg.Add(1)
		go func(c *conn) {
			defer wg.Done()
			for sctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				for try := 0; ; try++ {
					u, err := fn(c, i)
					reqs.Add(1)
					if err == nil {
						units.Add(u)
						break
					}
					fails.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					if try >= 20 || sctx.Err() != nil {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}(cs[w])
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Requests, res.Errors, res.Units = reqs.Load(), fails.Load(), units.Load()
	fillRatesKeep(&res)
	if s, ok := firstErr.Load().(string); ok {
		res.Note = "first error: " + s + "; "
	}
	after, err := read()
	if err != nil {
		res.Skipped, res.Note = true, res.Note+"memory after: "+err.Error()
		return res
	}
	res.HeapBefore, res.HeapAfter, res.RSSBefore, res.RSSAfter = before.heap, after.heap, before.rss, after.rss
	if res.Units > 0 {
		if before.heap > 0 {
			res.HeapPerUnit = (after.heap - before.heap) / float64(res.Units)
		}
		res.RSSPerUnit = (after.rss - before.rss) / float64(res.Units)
	}
	res.Note += fmt.Sprintf("%d %s seeded in %.1f s", res.Units, unit, res.Seconds)
	if t.HTTP != "" {
		res.Note += groupGauges(ctx, t.HTTP)
	}
	return res
}

// settleStep waits o.LoadSettle after the offsets step seeded and reads the memory again: the
// growth per offset since before the seeding, once background work (the lag monitor's samples)
// has run. For muster the note gives the process CPU spent while waiting (an idle broker's
// background work: against a baseline without lag monitoring, the samples' cost).
func settleStep(ctx context.Context, o *Options, t Target, seeded Result, read func() (memReading, error)) Result {
	res := seeded
	res.Step = StepSettled
	if seeded.Skipped {
		return res
	}
	cpu := func() float64 { // muster's process CPU (-1 when not readable)
		if t.HTTP == "" {
			return -1
		}
		ms, err := scrape(ctx, t.HTTP)
		if err != nil {
			return -1
		}
		if v, ok := ms["process_cpu_seconds_total"]; ok {
			return v
		}
		return -1
	}
	cpu0 := cpu()
	select {
	case <-ctx.Done():
		res.Skipped, res.Note = true, ctx.Err().Error()
		return res
	case <-time.After(o.LoadSettle):
	}
	cpu1 := cpu()
	after, err := read()
	if err != nil {
		res.Skipped, res.Note = true, "memory after settling: "+err.Error()
		return res
	}
	res.HeapAfter, res.RSSAfter = after.heap, after.rss
	res.HeapPerUnit = 0
	if res.Units > 0 {
		if res.HeapBefore > 0 {
			res.HeapPerUnit = (res.HeapAfter - res.HeapBefore) / float64(res.Units)
		}
		res.RSSPerUnit = (res.RSSAfter - res.RSSBefore) / float64(res.Units)
	}
	res.Note = fmt.Sprintf("read again %v after the seeding", o.LoadSettle)
	if cpu0 >= 0 && cpu1 >= 0 {
		res.Note += fmt.Sprintf(", process CPU while waiting %.2f s", cpu1-cpu0)
	}
	res.Note += "; " + seeded.Note
	return res
}

// restartStep sends muster SIGTERM, starts it again on the same data dir and times /readyz
// answering 200 (all shards loaded); the replay rate is the records the shards replayed
// (muster_coordinator_shard_load_records) over that time.
func restartStep(ctx context.Context, o *Options, t Target) Result {
	res := Result{Workload: WShardLoad, Target: t.Name, Step: StepRestart, UnitName: "records replayed"}
	stopAt := time.Now()
	t.proc.Stop()
	stopped := time.Since(stopAt)
	start := time.Now()
	if err := t.proc.spawn(); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	bound := max(o.Duration+o.WarmTimeout, 5*time.Minute)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := hc.Get("http://" + t.HTTP + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-t.proc.Exited():
			res.Skipped, res.Note = true, "muster exited during restart: "+t.proc.Output()
			return res
		case <-ctx.Done():
			res.Skipped, res.Note = true, ctx.Err().Error()
			return res
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > bound {
			res.Skipped, res.Note = true, fmt.Sprintf("/readyz not 200 within %v", bound)
			return res
		}
	}
	res.Seconds = time.Since(start).Seconds()
	ms, err := scrape(ctx, t.HTTP)
	if err != nil {
		res.Note = "metrics: " + err.Error()
		return res
	}
	var records, maxLoad float64
	for k, v := range ms {
		switch {
		case strings.HasPrefix(k, "muster_coordinator_shard_load_records{"):
			records += v
		case strings.HasPrefix(k, "muster_coordinator_shard_load_seconds{"):
			maxLoad = max(maxLoad, v)
		}
	}
	res.Units, res.Requests = int64(records), 1
	fillRatesKeep(&res)
	res.Note = fmt.Sprintf("SIGTERM stop took %.2f s; slowest shard load %.3f s", stopped.Seconds(), maxLoad)
	if maxLoad > 0 {
		res.Note += fmt.Sprintf(" (%.0f records/s over it)", records/maxLoad)
	}
	// Later workloads need the Kafka listener too.
	if err := t.proc.waitAPI(ctx); err != nil {
		res.Note += "; after restart: " + err.Error()
	}
	return res
}

// groupGauges summarises muster's group gauges after a step (members whose session expired
// during a long step leave their group Empty: the consumer group states show it).
func groupGauges(ctx context.Context, addr string) string {
	ms, err := scrape(ctx, addr)
	if err != nil {
		return ""
	}
	g := func(k string) int64 { return int64(ms[k]) }
	return fmt.Sprintf("; after: %d offsets, %d classic + %d consumer groups (consumer: %d Stable, %d Reconciling, %d Assigning, %d Empty)",
		g("muster_group_coordinator_offset_count"),
		g(`muster_group_coordinator_group_count{protocol="classic"}`), g(`muster_group_coordinator_group_count{protocol="consumer"}`),
		g(`muster_group_coordinator_consumer_group_count{state="Stable"}`), g(`muster_group_coordinator_consumer_group_count{state="Reconciling"}`),
		g(`muster_group_coordinator_consumer_group_count{state="Assigning"}`), g(`muster_group_coordinator_consumer_group_count{state="Empty"}`))
}

// readMemory reads t's memory: via muster's HTTP endpoints when known, else VmRSS of its pid.
func readMemory(ctx context.Context, t Target) (memReading, error) {
	if t.HTTP != "" {
		hc := &http.Client{Timeout: 60 * time.Second}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+t.HTTP+"/debug/pprof/heap?gc=1", nil)
		if err != nil {
			return memReading{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return memReading{}, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ms, err := scrape(ctx, t.HTTP)
		if err != nil {
			return memReading{}, err
		}
		heap, ok1 := ms["go_memstats_heap_inuse_bytes"]
		rss, ok2 := ms["process_resident_memory_bytes"]
		if !ok1 || !ok2 {
			return memReading{}, fmt.Errorf("/metrics lacks go_memstats_heap_inuse_bytes or process_resident_memory_bytes")
		}
		return memReading{heap: heap, rss: rss}, nil
	}
	if t.Pid == 0 {
		return memReading{}, fmt.Errorf("no pid and no HTTP address")
	}
	rss, err := vmRSS(t.Pid)
	return memReading{rss: rss}, err
}

// scrape reads every sample of muster's /metrics as "name{labels}" → value.
func scrape(ctx context.Context, addr string) (map[string]float64, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// vmRSS reads a process's resident set size in bytes from /proc/<pid>/status (Linux).
func vmRSS(pid int) (float64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fs := strings.Fields(rest)
			if len(fs) >= 1 {
				kb, err := strconv.ParseFloat(fs[0], 64)
				if err != nil {
					return 0, err
				}
				return kb * 1024, nil
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
