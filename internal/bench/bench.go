package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options bound and shape a run. Zero values take the defaults of DefaultOptions.
type Options struct {
	// Duration is the timed length of each case (one workload, one target, one connection count).
	Duration time.Duration `json:"duration_ns"`
	// MaxRequests bounds the requests of each case (0 = no bound).
	MaxRequests int64 `json:"max_requests"`
	// WarmTimeout bounds the warm-up of each case (connections, shard loads).
	WarmTimeout time.Duration `json:"warm_timeout_ns"`
	// Conns are the connection counts of the request workloads.
	Conns []int `json:"connections"`
	// FetchConns are the connection counts of fetch-all.
	FetchConns []int `json:"fetch_connections"`
	// CommitBatch is the partitions per request of commit-batch.
	CommitBatch int `json:"commit_batch"`
	// FetchPartitions is the committed partitions of the group fetch-all reads.
	FetchPartitions int `json:"fetch_partitions"`
	// RecordBytes is the value size of produced records; ProduceBytes bounds each produce case
	// (0 = none); Producers are its producer counts (one partition each).
	RecordBytes  int   `json:"record_bytes"`
	ProduceBytes int64 `json:"produce_bytes"`
	Producers    []int `json:"producers"`
	// FsyncDir is where the raw fsync rate is measured (the muster data dir's filesystem).
	FsyncDir string `json:"fsync_dir"`
	// StormMembers are the member counts of the scaled join storms (cg-join-storm and
	// classic-join-storm) over a StormPartitions-partition topic; the KIP-848 storm multiplexes
	// its members over at most StormConns connections, the classic one uses a connection per
	// member. cg-join-storm also runs Conns members over 64 partitions (one connection each).
	StormMembers    []int `json:"storm_members"`
	StormPartitions int32 `json:"storm_partitions"`
	StormConns      int   `json:"storm_conns"`
	// ClassicHeartbeat is the heartbeat interval of classic-join-storm members that have their
	// assignment (they learn of a new rebalance from a heartbeat).
	ClassicHeartbeat time.Duration `json:"classic_heartbeat_ns"`
	// HBGroups are the group counts cg-heartbeat spreads its members over; HBMembers is its
	// member count (0 = one member per connection), multiplexed over the connections.
	HBGroups  []int `json:"hb_groups"`
	HBMembers int   `json:"hb_members"`
	// LoadOffsets, LoadMembers and LoadGroups size shard-load: committed offsets (1000
	// partitions per group, 50 per request), KIP-848 members (10 per group, each joined by one
	// heartbeat) and empty groups (one member joins and leaves). 0 skips a step.
	LoadOffsets int `json:"load_offsets"`
	LoadMembers int `json:"load_members"`
	LoadGroups  int `json:"load_groups"`
	// LoadSettle, when positive, is how long shard-load waits after seeding the offsets before
	// it reads the memory again (an offsets-settled result): what background work, such as the
	// lag monitor's samples (muster.lag.sample.interval.ms), keeps once it has run.
	LoadSettle time.Duration `json:"load_settle,omitempty"`
	// TxnConns are the connection (transactional client) counts of txn-1 and txn-10.
	TxnConns []int `json:"txn_connections"`
	// IsolationBytes is the size of the transactional log fetch-isolation reads back.
	IsolationBytes int64 `json:"isolation_bytes"`
	// RecoverTxns is the open transactions txn-recover leaves behind before SIGKILL, opened
	// over RecoverConns connections.
	RecoverTxns  int `json:"recover_txns"`
	RecoverConns int `json:"recover_conns"`
	// ShareRecords are the records the share workloads consume (one 1-partition topic per
	// case), ShareBatch the records a share consumer fetches at most per request, ShareConsumers
	// the consumer counts, ShareMemoryRecords the records share-memory holds in flight.
	ShareRecords       int   `json:"share_records"`
	ShareBatch         int   `json:"share_batch"`
	ShareConsumers     []int `json:"share_consumers"`
	ShareMemoryRecords int   `json:"share_memory_records"`
	// Client is the load generator of the request workloads: ClientRaw (default) or ClientKgo.
	// produce/consume always use franz-go clients.
	Client string `json:"client"`
	// Workloads to run (names from AllWorkloads); empty = all.
	Workloads []string `json:"workloads"`
	// Log receives progress lines (nil = none).
	Log io.Writer `json:"-"`
}

// DefaultOptions are the values muster-bench uses when a flag is not given.
func DefaultOptions() Options {
	return Options{Duration: 5 * time.Second, MaxRequests: 2_000_000, WarmTimeout: 30 * time.Second,
		Conns: []int{1, 8, 64}, FetchConns: []int{1, 8}, CommitBatch: 50, FetchPartitions: 1000,
		RecordBytes: 1024, ProduceBytes: 512 << 20, Producers: []int{1, 8}, Client: ClientRaw, Workloads: AllWorkloads,
		StormMembers: []int{100, 1000, 3000}, StormPartitions: 10000, StormConns: 64, ClassicHeartbeat: 100 * time.Millisecond,
		HBGroups: []int{1}, LoadOffsets: 1_000_000, LoadMembers: 100_000, LoadGroups: 10_000,
		TxnConns: []int{1, 16}, IsolationBytes: 64 << 20, RecoverTxns: 10_000, RecoverConns: 64,
		ShareRecords: 200_000, ShareBatch: 500, ShareConsumers: []int{1, 4, 16}, ShareMemoryRecords: 200_000}
}

func (o *Options) fill() {
	d := DefaultOptions()
	if o.Duration <= 0 {
		o.Duration = d.Duration
	}
	if o.WarmTimeout <= 0 {
		o.WarmTimeout = d.WarmTimeout
	}
	if len(o.Conns) == 0 {
		o.Conns = d.Conns
	}
	if len(o.FetchConns) == 0 {
		o.FetchConns = d.FetchConns
	}
	if o.CommitBatch <= 0 {
		o.CommitBatch = d.CommitBatch
	}
	if o.FetchPartitions <= 0 {
		o.FetchPartitions = d.FetchPartitions
	}
	if o.RecordBytes <= 0 {
		o.RecordBytes = d.RecordBytes
	}
	if len(o.Workloads) == 0 {
		o.Workloads = d.Workloads
	}
	if len(o.TxnConns) == 0 {
		o.TxnConns = d.TxnConns
	}
	if o.IsolationBytes <= 0 {
		o.IsolationBytes = d.IsolationBytes
	}
	if o.RecoverTxns <= 0 {
		o.RecoverTxns = d.RecoverTxns
	}
	if o.RecoverConns <= 0 {
		o.RecoverConns = d.RecoverConns
	}
	if o.Client == "" {
		o.Client = d.Client
	}
	if o.StormMembers == nil {
		o.StormMembers = d.StormMembers
	}
	if o.StormPartitions <= 0 {
		o.StormPartitions = d.StormPartitions
	}
	if o.StormConns <= 0 {
		o.StormConns = d.StormConns
	}
	if o.ClassicHeartbeat <= 0 {
		o.ClassicHeartbeat = d.ClassicHeartbeat
	}
	if len(o.HBGroups) == 0 {
		o.HBGroups = d.HBGroups
	}
	if o.ShareRecords <= 0 {
		o.ShareRecords = d.ShareRecords
	}
	if o.ShareBatch <= 0 {
		o.ShareBatch = d.ShareBatch
	}
	if len(o.ShareConsumers) == 0 {
		o.ShareConsumers = d.ShareConsumers
	}
	if o.ShareMemoryRecords <= 0 {
		o.ShareMemoryRecords = d.ShareMemoryRecords
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Validate reports unknown workload names and bad bounds.
func (o *Options) Validate() error {
	for _, w := range o.Workloads {
		if !slices.Contains(AllWorkloads, w) {
			return fmt.Errorf("unknown workload %q (known: %v)", w, AllWorkloads)
		}
	}
	for _, c := range append(slices.Clone(o.Conns), o.FetchConns...) {
		if c < 1 || c > 4096 {
			return fmt.Errorf("connection count %d out of range [1,4096]", c)
		}
	}
	for _, n := range o.StormMembers {
		if n < 1 || n > 20000 {
			return fmt.Errorf("storm member count %d out of range [1,20000]", n)
		}
	}
	for _, n := range o.HBGroups {
		if n < 1 {
			return fmt.Errorf("heartbeat group count %d < 1", n)
		}
	}
	if o.LoadOffsets < 0 || o.LoadMembers < 0 || o.LoadGroups < 0 || o.LoadSettle < 0 {
		return fmt.Errorf("negative shard-load size")
	}
	if o.StormConns < 0 || o.StormConns > 4096 || o.HBMembers < 0 || o.StormPartitions < 0 {
		return fmt.Errorf("storm/heartbeat sizes out of range")
	}
	if o.Client != "" && !slices.Contains(Clients, o.Client) {
		return fmt.Errorf("unknown load generator %q (known: %v)", o.Client, Clients)
	}
	if o.MaxRequests < 0 || o.Duration < 0 || o.ProduceBytes < 0 {
		return fmt.Errorf("negative bound")
	}
	return nil
}

// Machine describes where a run happened.
type Machine struct {
	NumCPU    int    `json:"num_cpu"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// LoadAvg is /proc/loadavg at the start of the run (other work on the machine skews results).
	LoadAvg string `json:"loadavg,omitempty"`
}

// Report is a whole run: every measured case and the derived comparisons.
type Report struct {
	Date        string       `json:"date"`
	Machine     Machine      `json:"machine"`
	Options     Options      `json:"options"`
	Results     []Result     `json:"results"`
	Comparisons []Comparison `json:"comparisons"`
	Notes       []string     `json:"notes"`
	// Baseline describes the baseline muster's config overrides ("" without one).
	Baseline string `json:"baseline,omitempty"`
}

// Run measures every selected workload on every target (interleaved case by case, so drift hits
// both alike) and the raw fsync rate of o.FsyncDir. now is the report's timestamp.
func Run(ctx context.Context, o Options, targets []Target, now time.Time) (*Report, error) {
	o.fill()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	rep := &Report{Date: now.UTC().Format(time.RFC3339), Options: o,
		Machine: Machine{NumCPU: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadAvg: loadAvg()}}
	want := func(w string) bool { return slices.Contains(o.Workloads, w) }
	add := func(r Result) {
		rep.Results = append(rep.Results, r)
		fmt.Fprintf(o.Log, "  %-18s %-7s conns=%-4d %s%s\n", r.Workload, r.Target, r.Conns, sizeOf(r.Members, r.Groups, r.Partitions), brief(r))
	}
	each := func(fn func(t Target) Result) {
		for _, t := range targets {
			if ctx.Err() != nil {
				return
			}
			add(fn(t))
		}
	}
	run := strconv.FormatInt(now.UnixNano(), 36)
	// The disk's limit first, while nothing else of ours touches it.
	if want(WFsync) && o.FsyncDir != "" {
		add(rawFsync(ctx, o.FsyncDir, o.Duration, o.MaxRequests, 4096))
	}
	if want(WPebble) && o.FsyncDir != "" {
		for _, n := range o.Conns {
			add(pebbleSync(ctx, &o, o.FsyncDir, n))
		}
	}
	// kfake checks that committed topics exist (Kafka does too from v10 on): create them everywhere.
	if want(WCommit1) || want(WCommitN) || want(WFetchAll) {
		for _, t := range targets {
			for topic, n := range map[string]int32{"bench-commit": int32(max(64, o.CommitBatch)), "bench-fetch": int32(o.FetchPartitions)} {
				if err := createTopic(ctx, t.Addr, topic, n); err != nil {
					return nil, fmt.Errorf("%s: %w", t.Name, err)
				}
			}
		}
	}
	if want(WApiVersions) {
		refConns := slices.Clone(o.Conns)
		if want(WFetchAll) {
			refConns = append(refConns, o.FetchConns...)
		}
		slices.Sort(refConns)
		for _, n := range slices.Compact(refConns) {
			each(func(t Target) Result {
				return runSpec(ctx, &o, t, WApiVersions, n, "", apiVersionsOp)
			})
		}
	}
	if want(WCommit1) {
		for _, n := range o.Conns {
			each(func(t Target) Result {
				prefix := "bench-c1-" + run + "-" + strconv.Itoa(n)
				return runSpec(ctx, &o, t, WCommit1, n, "partition offsets", func(cs []*conn) op {
					return commitOp(cs, prefix, "bench-commit", 1)
				})
			})
		}
	}
	if want(WCommitN) {
		for _, n := range o.Conns {
			each(func(t Target) Result {
				prefix := "bench-cn-" + run + "-" + strconv.Itoa(n)
				return runSpec(ctx, &o, t, WCommitN, n, "partition offsets", func(cs []*conn) op {
					return commitOp(cs, prefix, "bench-commit", o.CommitBatch)
				})
			})
		}
	}
	if want(WFetchAll) {
		group := "bench-fetch-" + run
		seeded := map[string]error{}
		for _, t := range targets {
			seeded[t.Name] = seedOffsets(ctx, t.Addr, group, "bench-fetch", o.FetchPartitions)
		}
		for _, n := range o.FetchConns {
			each(func(t Target) Result {
				if err := seeded[t.Name]; err != nil {
					return Result{Workload: WFetchAll, Target: t.Name, Conns: n, Skipped: true, Note: err.Error()}
				}
				return runSpec(ctx, &o, t, WFetchAll, n, "partition offsets", func(cs []*conn) op {
					return fetchAllOp(cs, group, o.FetchPartitions)
				})
			})
		}
	}
	if want(WProduce) || want(WConsume) {
		for _, n := range o.Producers {
			for _, t := range targets {
				pr, cr := produceConsume(ctx, &o, t, fmt.Sprintf("bench-pc-%s-%d", run, n), n)
				if want(WProduce) {
					add(pr)
				}
				if want(WConsume) {
					add(cr)
				}
			}
		}
	}
	if want(WHeartbeat) || want(WJoinStorm) || want(WClassicStorm) {
		for _, t := range targets {
			if err := createTopic(ctx, t.Addr, "bench-cgh", 64); err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			if (want(WJoinStorm) || want(WClassicStorm)) && len(o.StormMembers) > 0 {
				if err := createTopic(ctx, t.Addr, stormTopic, o.StormPartitions); err != nil {
					return nil, fmt.Errorf("%s: %w", t.Name, err)
				}
			}
		}
		served := map[string]error{}
		for _, t := range targets {
			keys, err := apiKeys(ctx, t.Addr)
			if err == nil {
				if _, ok := keys[68]; !ok {
					err = errors.New("ConsumerGroupHeartbeat (key 68) not in this server's ApiVersions: skipped")
				}
			}
			served[t.Name] = err
		}
		if want(WHeartbeat) {
			for _, n := range o.Conns {
				for _, g := range o.HBGroups {
					members := max(n, o.HBMembers)
					groups := min(g, members)
					each(func(t Target) Result {
						if err := served[t.Name]; err != nil {
							return Result{Workload: WHeartbeat, Target: t.Name, Conns: n, Members: members, Groups: groups, Skipped: true, Note: err.Error()}
						}
						prefix := "bench-hb-" + run + "-" + strconv.Itoa(n) + "-" + strconv.Itoa(members) + "-" + strconv.Itoa(groups)
						r := runSpec(ctx, &o, t, WHeartbeat, n, "heartbeats", func(cs []*conn) op {
							return heartbeatOp(cs, prefix, "bench-cgh", members, groups)
						})
						r.Members, r.Groups = members, groups
						if r.Note == "" {
							r.Note = fmt.Sprintf("%d members in %d groups over %d connections heartbeating back to back (no interval); errors = fenced/rejoined", members, groups, n)
						}
						return r
					})
				}
			}
		}
		if want(WJoinStorm) {
			storm := func(members, partitions, conns int, topic string) {
				each(func(t Target) Result {
					if err := served[t.Name]; err != nil {
						return Result{Workload: WJoinStorm, Target: t.Name, Conns: conns, Members: members, Partitions: int32(partitions), Skipped: true, Note: err.Error()}
					}
					group := "bench-" + WJoinStorm + "-" + run + "-" + strconv.Itoa(members) + "-" + strconv.Itoa(partitions)
					return joinStorm(ctx, &o, t, group, topic, int32(partitions), members, conns)
				})
			}
			for _, n := range o.Conns {
				storm(n, 64, n, "bench-cgh")
			}
			for _, n := range o.StormMembers {
				storm(n, int(o.StormPartitions), min(n, o.StormConns), stormTopic)
			}
		}
		if want(WClassicStorm) {
			for _, n := range o.StormMembers {
				each(func(t Target) Result {
					group := "bench-" + WClassicStorm + "-" + run + "-" + strconv.Itoa(n)
					return classicStorm(ctx, &o, t, group, stormTopic, o.StormPartitions, n)
				})
			}
		}
	}
	if want(WTxn1) || want(WTxn10) {
		for _, w := range []struct {
			name  string
			parts int
		}{{WTxn1, 1}, {WTxn10, 10}} {
			if !want(w.name) {
				continue
			}
			for _, n := range o.TxnConns {
				each(func(t Target) Result { return txnWorkload(ctx, &o, t, w.name, run, w.parts, n) })
			}
		}
		rep.Notes = append(rep.Notes, "txn-1/txn-10: franz-go transactional clients running transaction version 1 against both brokers (TxnOffsetCommit capped at v4); muster verifies each transactional produce with its transaction coordinator (KIP-890 part 1) and writes the markers before EndTxn answers, durably.")
	}
	if want(WFetchCommitted) || want(WFetchUncommitted) {
		for _, t := range targets {
			for _, r := range fetchIsolation(ctx, &o, t, run) {
				add(r)
			}
		}
	}
	if want(WShare) || want(WShareKgo) || want(WShareMemory) {
		served := map[string]error{}
		for _, t := range targets {
			served[t.Name] = shareServed(ctx, t)
		}
		skip := func(w string, n int, t Target) (Result, bool) {
			if err := served[t.Name]; err != nil {
				return Result{Workload: w, Target: t.Name, Conns: n, Skipped: true, Note: err.Error()}, true
			}
			return Result{}, false
		}
		for _, w := range []string{WShare, WShareKgo} {
			if !want(w) {
				continue
			}
			for _, n := range o.ShareConsumers {
				each(func(t Target) Result {
					if r, skipped := skip(w, n, t); skipped {
						return r
					}
					if w == WShare {
						return shareRaw(ctx, &o, t, run, n)
					}
					return shareKgo(ctx, &o, t, run, n)
				})
			}
		}
		if want(WShareMemory) {
			each(func(t Target) Result {
				if r, skipped := skip(WShareMemory, 1, t); skipped {
					return r
				}
				return shareMemory(ctx, &o, t, run)
			})
		}
	}
	// Last: they restart muster.
	if want(WTxnRecover) {
		for _, t := range targets {
			if ctx.Err() != nil {
				break
			}
			if t.Name == "kfake" {
				add(Result{Workload: WTxnRecover, Target: t.Name, Skipped: true, Note: "kfake keeps transactions in memory: nothing to recover"})
				continue
			}
			add(txnRecover(ctx, &o, t, run, o.RecoverTxns))
		}
	}
	if want(WShardLoad) {
		for _, t := range targets {
			if ctx.Err() != nil {
				break
			}
			if err := createTopic(ctx, t.Addr, "bench-cgh", 64); err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			for _, r := range shardLoad(ctx, &o, t, run) {
				add(r)
			}
		}
	}
	rep.Comparisons = compare(rep.Results)
	if want(WClassicStorm) && len(o.StormMembers) > 0 {
		rep.Notes = append(rep.Notes, "classic-join-storm: a muster started by muster-bench runs with group.initial.rebalance.delay.ms=0 (Kafka's default is 3 s, extended while members keep joining; kfake has no such delay), so the storm times the coordinator's own work; --override group.initial.rebalance.delay.ms=3000 restores Kafka's default.")
	}
	if want(WShardLoad) {
		rep.Notes = append(rep.Notes, "shard-load: the seeded members join with one heartbeat and never heartbeat again; a muster started by muster-bench gets group.consumer.session.timeout.ms=3600000 (and the max) when shard-load runs, so they outlive the step. The after-step group gauges in each note show whether members expired (consumer groups turning Empty).")
	}
	rep.Notes = append(rep.Notes,
		"kfake keeps all state in memory and never fsyncs; muster acknowledges commits only after fsync. Ratios to kfake compare a durable broker with an in-memory one.",
		"Machine limit: ApiVersions round trips on the same server and connection count (no coordinator, no disk), and the raw append+fsync rate of the data dir's filesystem.")
	return rep, ctx.Err()
}

func brief(r Result) string {
	if r.Skipped {
		return "skipped: " + r.Note
	}
	if r.Workload == WShardLoad {
		return r.Step + ": " + shardLine(r)
	}
	s := fmt.Sprintf("%.0f req/s p50=%.3fms p99=%.3fms errors=%d", r.ReqPerSec, r.P50ms, r.P99ms, r.Errors)
	if r.UnitName != "" {
		s += fmt.Sprintf(" %.0f %s/s", r.UnitsPerSec, r.UnitName)
	}
	if r.ClientCPUus > 0 {
		s += fmt.Sprintf(" generator-cpu=%.1fus/req", r.ClientCPUus)
	}
	if r.ServerCPUus > 0 {
		s += fmt.Sprintf(" server-cpu=%.1fus/req", r.ServerCPUus)
	}
	if r.RecordsPerFsync > 0 {
		s += fmt.Sprintf(" records/fsync=%.2f", r.RecordsPerFsync)
	}
	return s
}

// stormTopic is the topic the scaled join storms subscribe to (Options.StormPartitions).
const stormTopic = "bench-storm"

// sizeOf describes a group workload's size for the log and the table ("" when not sized).
func sizeOf(members, groups int, partitions int32) string {
	s := ""
	if members > 0 {
		s = strconv.Itoa(members) + " members"
	}
	if groups > 0 {
		s += " in " + strconv.Itoa(groups) + " groups"
	}
	if partitions > 0 {
		s += ", " + strconv.Itoa(int(partitions)) + " partitions"
	}
	if s != "" && !strings.HasSuffix(s, " ") {
		s += " "
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
