package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/muster-io/muster/internal/testutil"
)

// smokeOptions keep every case to a fraction of a second.
func smokeOptions(t *testing.T) Options {
	return Options{Duration: 150 * time.Millisecond, MaxRequests: 5000, WarmTimeout: 20 * time.Second,
		Conns: []int{1, 3}, FetchConns: []int{2}, CommitBatch: 10, FetchPartitions: 120,
		RecordBytes: 512, ProduceBytes: 256 << 10, Producers: []int{1, 2}, FsyncDir: t.TempDir(),
		StormMembers: []int{5}, StormPartitions: 100, StormConns: 2, HBGroups: []int{1, 2}, HBMembers: 6,
		LoadOffsets: 1500, LoadMembers: 30, LoadGroups: 20,
		TxnConns: []int{1, 2}, IsolationBytes: 256 << 10, RecoverTxns: 10, RecoverConns: 2,
		ShareRecords: 3000, ShareBatch: 100, ShareConsumers: []int{1, 3}, ShareMemoryRecords: 2000}
}

// TestSmokeAllWorkloads runs every workload against an in-process muster and an in-process
// kfake and checks that each completes with sane, non-zero numbers (never timings).
func TestSmokeAllWorkloads(t *testing.T) {
	m := testutil.Start(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	// In process, memory readings are the test process's own: shard-load only has to complete.
	targets := []Target{{Name: "muster", Addr: m.Addr(), HTTP: m.HTTPAddr()}, {Name: "kfake", Addr: kf.ListenAddrs()[0], Pid: os.Getpid()}}
	keys, err := apiKeys(context.Background(), m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	_, musterCGH := keys[68]

	rep, err := Run(context.Background(), smokeOptions(t), targets, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rep.Results {
		seen[r.Workload] = true
		if r.Skipped {
			if r.Workload == WHeartbeat && r.Target == "muster" && !musterCGH {
				continue // not served by this build: skipped with a note, as documented
			}
			if r.Workload == WShardLoad && r.Step == StepRestart || r.Workload == WTxnRecover {
				continue // in-process broker: nothing to restart (TestProcesses covers it)
			}
			t.Errorf("%s on %s (conns %d) skipped: %s", r.Workload, r.Target, r.Conns, r.Note)
			continue
		}
		if r.Workload == WShardLoad {
			checkShardLoad(t, r, false)
			continue
		}
		if r.Workload == WShareMemory {
			if r.Units <= 0 || r.Partitions <= 0 {
				t.Errorf("share-memory on %s: %d records held over %d partitions", r.Target, r.Units, r.Partitions)
			}
			continue
		}
		if r.Requests <= 0 || r.ReqPerSec <= 0 || r.Seconds <= 0 {
			t.Errorf("%s on %s (conns %d): no progress: %+v", r.Workload, r.Target, r.Conns, r)
		}
		if r.Errors != 0 {
			t.Errorf("%s on %s (conns %d): %d errors: %s", r.Workload, r.Target, r.Conns, r.Errors, r.Note)
		}
		if r.UnitName != "" && r.Units <= 0 {
			t.Errorf("%s on %s: no %s", r.Workload, r.Target, r.UnitName)
		}
		if r.Workload != WConsume && r.Workload != WClassicStorm && r.Workload != WShareKgo && r.Workload != WFetchCommitted && r.Workload != WFetchUncommitted &&
			(r.P50ms <= 0 || r.P99ms < r.P50ms || r.Maxms < r.P99ms) {
			t.Errorf("%s on %s: latency quantiles not ordered: p50 %v p99 %v max %v", r.Workload, r.Target, r.P50ms, r.P99ms, r.Maxms)
		}
		switch r.Workload {
		case WCommitN:
			if r.Units != r.Requests*10 {
				t.Errorf("commit-batch on %s: %d units for %d requests of 10", r.Target, r.Units, r.Requests)
			}
		case WFetchAll:
			if r.Units != r.Requests*120 {
				t.Errorf("fetch-all on %s: %d units for %d requests of 120", r.Target, r.Units, r.Requests)
			}
		case WJoinStorm, WClassicStorm:
			if r.Members <= 0 || r.Units != int64(r.Members) || r.Partitions <= 0 {
				t.Errorf("%s on %s: %d members converged, want %d (partitions %d)", r.Workload, r.Target, r.Units, r.Members, r.Partitions)
			}
		case WHeartbeat:
			if r.Members != max(6, r.Conns) || r.Groups < 1 {
				t.Errorf("cg-heartbeat on %s: %d members in %d groups", r.Target, r.Members, r.Groups)
			}
		case WConsume:
			if r.Units < 512 {
				t.Errorf("consume on %s: %d bytes", r.Target, r.Units)
			}
		}
	}
	for _, w := range AllWorkloads {
		if !seen[w] {
			t.Errorf("workload %s produced no result", w)
		}
	}
	if len(rep.Comparisons) == 0 {
		t.Fatal("no comparisons")
	}
	for _, c := range rep.Comparisons {
		if c.Workload == WHeartbeat && !musterCGH {
			continue
		}
		if c.Workload == WTxnRecover {
			continue
		}
		if c.Muster <= 0 || c.Kfake <= 0 || c.VsKfake <= 0 {
			t.Errorf("comparison %s/%d incomplete: %+v", c.Workload, c.Conns, c)
		}
		if c.Workload == WTxnRecover {
			continue // muster only
		}
		if c.Workload != WProduce && c.Workload != WConsume && c.Workload != WJoinStorm && c.Workload != WClassicStorm &&
			c.Workload != WShare && c.Workload != WShareKgo && c.Workload != WFetchCommitted && c.Workload != WFetchUncommitted &&
			!(c.Workload == WTxn1 || c.Workload == WTxn10) && c.VsAPIVersions <= 0 {
			t.Errorf("comparison %s/%d has no ApiVersions ratio", c.Workload, c.Conns)
		}
	}

	var table, js bytes.Buffer
	rep.WriteTable(&table)
	for _, want := range []string{"commit-1", "muster/kfake (kfake: in memory, no fsync)", "raw fsync:"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != len(rep.Results) || back.Machine.NumCPU <= 0 {
		t.Errorf("JSON round trip lost data: %d results, machine %+v", len(back.Results), back.Machine)
	}
}

// TestProcesses builds muster and kfake-serve, starts both as child processes the way
// muster-bench does, and runs one short workload on each.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	ctx := context.Background()
	kbin, err := BuildKfake(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mbin, err := BuildMuster(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := StartMuster(ctx, mbin, filepath.Join(dir, "data"), "--override", "offsets.topic.num.partitions=4")
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Stop()
	kp, err := StartKfake(ctx, kbin)
	if err != nil {
		t.Fatal(err)
	}
	defer kp.Stop()
	o := smokeOptions(t)
	o.Workloads = []string{WApiVersions, WCommit1, WClassicStorm, WShardLoad}
	o.Conns = []int{2}
	o.StormMembers = []int{3}
	rep, err := Run(ctx, o, []Target{mp.Target, kp.Target}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]bool{}
	for _, r := range rep.Results {
		if r.Workload == WShardLoad {
			checkShardLoad(t, r, true)
			steps[r.Target+"/"+r.Step] = true
			continue
		}
		if r.Skipped || r.Requests <= 0 || r.Errors != 0 {
			t.Errorf("%s on %s: %+v", r.Workload, r.Target, r)
		}
	}
	for _, want := range []string{"muster/offsets", "muster/members", "muster/empty-groups", "muster/restart", "kfake/offsets"} {
		if !steps[want] {
			t.Errorf("no shard-load result %s: %+v", want, rep.Results)
		}
	}
	// The restarted muster still serves.
	if _, err := apiKeys(ctx, mp.Addr); err != nil {
		t.Errorf("muster after restart: %v", err)
	}
	mp.Stop()
	kp.Stop()
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{
		{Workloads: []string{"nope"}},
		{Conns: []int{0}},
		{MaxRequests: -1},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", o)
		}
	}
	d := DefaultOptions()
	if err := d.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestQuantile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i))
	}
	if got := quantile(xs, 0.5); got != 50 {
		t.Errorf("p50 = %v", got)
	}
	if got := quantile(xs, 0.99); got != 99 {
		t.Errorf("p99 = %v", got)
	}
	if got := quantile(xs[:1], 0.99); got != 1 {
		t.Errorf("p99 of one = %v", got)
	}
}

// checkShardLoad checks one shard-load result for completion and sane numbers (no timings);
// own says whether the memory readings are the broker's own (child processes).
func checkShardLoad(t *testing.T, r Result, own bool) {
	t.Helper()
	if r.Skipped {
		t.Errorf("shard-load %s on %s skipped: %s", r.Step, r.Target, r.Note)
		return
	}
	if r.Units <= 0 || r.Seconds <= 0 {
		t.Errorf("shard-load %s on %s: no progress: %+v", r.Step, r.Target, r)
	}
	if r.Step == StepRestart {
		return
	}
	if r.Errors != 0 {
		t.Errorf("shard-load %s on %s: %d errors: %s", r.Step, r.Target, r.Errors, r.Note)
	}
	if r.RSSBefore <= 0 || r.RSSAfter <= 0 || (r.Target == "muster" && (r.HeapBefore <= 0 || r.HeapAfter <= 0)) {
		t.Errorf("shard-load %s on %s: memory not read: %+v", r.Step, r.Target, r)
	}
	if own && r.Target == "muster" && r.Step == StepOffsets && r.HeapAfter <= r.HeapBefore {
		t.Logf("shard-load offsets on muster: heap did not grow (%v → %v)", r.HeapBefore, r.HeapAfter)
	}
}
