package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Workload names, in the order they run.
const (
	WApiVersions = "apiversions"   // ApiVersions round trip: the per-request machine limit
	WCommit1     = "commit-1"      // durable OffsetCommit, 1 partition per request
	WCommitN     = "commit-batch"  // OffsetCommit, Options.CommitBatch partitions per request
	WFetchAll    = "fetch-all"     // OffsetFetch of all offsets of a group with Options.FetchPartitions
	WProduce     = "produce"       // produce MB/s
	WConsume     = "consume"       // consume MB/s (reads what produce wrote)
	WHeartbeat   = "cg-heartbeat"  // KIP-848 ConsumerGroupHeartbeat saturation
	WJoinStorm   = "cg-join-storm" // KIP-848: n members join one group at once, time until the group has settled (settle.go)
	// WClassicStorm: n members join one classic consumer group at once (JoinGroup+SyncGroup).
	WClassicStorm = "classic-join-storm"
	// WShardLoad: memory per committed offset / member / empty group, restart-to-ready time and
	// replay rate (muster; kfake: RSS per offset only).
	WShardLoad   = "shard-load"
	WShare       = "share"        // KIP-932: raw share members fetch and acknowledge (share.go)
	WShareKgo    = "share-kgo"    // KIP-932: franz-go share consumers
	WShareMemory = "share-memory" // KIP-932: broker memory per in-flight (acquired) record
	WFsync       = "fsync"        // raw write+fsync rate of the data dir's filesystem
	WPebble      = "pebble-sync"  // concurrent 1-record Pebble Sync commits: the store's limit
)

// AllWorkloads lists every workload in run order.
var AllWorkloads = []string{WApiVersions, WCommit1, WCommitN, WFetchAll, WProduce, WConsume, WHeartbeat, WJoinStorm, WClassicStorm,
	WShare, WShareKgo, WShareMemory, WTxn1, WTxn10, WFetchUncommitted, WFetchCommitted, WFsync, WPebble, WTxnRecover, WShardLoad}

// runSpec measures one closed-loop workload on one target: it opens conns connections, warms
// each up with one successful request, then runs the timed loop.
func runSpec(ctx context.Context, o *Options, t Target, workload string, conns int, unit string,
	mk func(cs []*conn) op) Result {
	res := Result{Workload: workload, Target: t.Name, Conns: conns, UnitName: unit}
	cs, err := dialAll(t.Addr, o.Client, conns)
	if err != nil {
		res.Skipped, res.Note = true, "connect: "+err.Error()
		return res
	}
	defer closeAll(cs)
	fn := mk(cs)
	if err := warm(ctx, conns, o.WarmTimeout, fn); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	var m0 map[string]float64
	if t.HTTP != "" {
		m0, _ = scrape(ctx, t.HTTP)
	}
	// A broker without /metrics (kfake) that is a process of its own: its CPU from /proc.
	ownProc := t.HTTP == "" && t.Pid > 0 && t.Pid != os.Getpid()
	var srv0 time.Duration
	if ownProc {
		srv0 = procCPU(t.Pid)
	}
	cpu0 := selfCPU()
	r := closedLoop(ctx, conns, o.Duration, o.MaxRequests, fn)
	if cpu := selfCPU() - cpu0; cpu0 > 0 && r.Requests > 0 {
		r.ClientCPUus = float64(cpu.Microseconds()) / float64(r.Requests)
	}
	if ownProc && srv0 > 0 && r.Requests > 0 {
		r.ServerCPUus = float64((procCPU(t.Pid) - srv0).Microseconds()) / float64(r.Requests)
	}
	r.Workload, r.Target, r.UnitName = workload, t.Name, unit
	if m0 != nil && r.Requests > 0 {
		if m1, err := scrape(ctx, t.HTTP); err == nil {
			serverCounters(&r, m0, m1)
		}
	}
	return r
}

func apiVersionsOp(cs []*conn) op {
	return func(ctx context.Context, w int, _ int64) (int64, error) {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "muster-bench", "1.0"
		r, err := cs[w].do(ctx, req)
		if err != nil {
			return 0, err
		}
		return 1, kerr.ErrorForCode(r.(*kmsg.ApiVersionsResponse).ErrorCode)
	}
}

// commitOp commits perReq partitions of topic per request; connection w uses its own group
// (groups spread over the coordinator shards as independent consumers would), offsets grow
// with seq.
func commitOp(cs []*conn, prefix, topic string, perReq int) op {
	return func(ctx context.Context, w int, seq int64) (int64, error) {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group = prefix + "-" + strconv.Itoa(w)
		req.Generation = -1
		req.RetentionTimeMillis = -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for p := 0; p < perReq; p++ {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition = int32((int(seq) + p) % max(perReq, 64))
			if perReq > 1 {
				rp.Partition = int32(p)
			}
			rp.Offset = seq
			rp.LeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		r, err := cs[w].do(ctx, req)
		if err != nil {
			return 0, err
		}
		return commitResult(r.(*kmsg.OffsetCommitResponse), perReq)
	}
}

// fetchAllOp fetches every committed offset of group; it succeeds when want partitions come
// back without errors.
func fetchAllOp(cs []*conn, group string, want int) op {
	return func(ctx context.Context, w int, _ int64) (int64, error) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = group // v0–v7
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group // v8+; nil Topics = all
		req.Groups = append(req.Groups, rg)
		r, err := cs[w].do(ctx, req)
		if err != nil {
			return 0, err
		}
		resp := r.(*kmsg.OffsetFetchResponse)
		n := int64(0)
		if resp.Version >= 8 {
			for _, g := range resp.Groups {
				if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
					return 0, err
				}
				for _, t := range g.Topics {
					n += int64(len(t.Partitions))
				}
			}
		} else {
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return 0, err
			}
			for _, t := range resp.Topics {
				n += int64(len(t.Partitions))
			}
		}
		if n != int64(want) {
			return 0, fmt.Errorf("fetched %d partition offsets, want %d", n, want)
		}
		return n, nil
	}
}

// seedOffsets commits partitions offsets of topic for group, 50 per request.
func seedOffsets(ctx context.Context, addr, group, topic string, partitions int) error {
	c, err := dial(addr, ClientRaw)
	if err != nil {
		return err
	}
	defer c.close()
	deadline := time.Now().Add(30 * time.Second)
	for start := 0; start < partitions; {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation, req.RetentionTimeMillis = group, -1, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		end := min(start+50, partitions)
		for p := start; p < end; p++ {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = int32(p), int64(p)*10, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		r, err := c.do(ctx, req)
		if err == nil {
			_, err = commitResult(r.(*kmsg.OffsetCommitResponse), end-start)
		}
		if err != nil {
			if time.Now().After(deadline) {
				return fmt.Errorf("seeding %d offsets of %s: %v", partitions, group, err)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		start = end
	}
	return nil
}

// commitResult counts the committed partitions of resp, or returns the first error code.
func commitResult(resp *kmsg.OffsetCommitResponse, want int) (int64, error) {
	n := int64(0)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, fmt.Errorf("partition %s/%d: %w", t.Topic, p.Partition, err)
			}
			n++
		}
	}
	if n != int64(want) {
		return 0, fmt.Errorf("%d partitions in the response, want %d", n, want)
	}
	return n, nil
}

// serverCounters fills the server-side figures of r from two /metrics scrapes of muster taken
// around its timed loop.
func serverCounters(r *Result, m0, m1 map[string]float64) {
	d := func(name string) float64 { return m1[name] - m0[name] }
	if cpu := d("process_cpu_seconds_total"); cpu > 0 {
		r.ServerCPUus = cpu * 1e6 / float64(r.Requests)
	}
	if r.Workload != WCommit1 && r.Workload != WCommitN {
		return
	}
	if syncs, recs := d("muster_store_wal_syncs_total"), d("muster_coordinator_batch_records_sum"); syncs > 0 && recs > 0 {
		r.RecordsPerFsync = recs / syncs
	}
}
