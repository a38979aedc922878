package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Comparison is one row of the summary: a workload at a connection count on muster and kfake.
type Comparison struct {
	Workload string `json:"workload"`
	Conns    int    `json:"connections"`
	// Members, Groups and Partitions size the group workloads (0 when not applicable).
	Members    int   `json:"members,omitempty"`
	Groups     int   `json:"groups,omitempty"`
	Partitions int32 `json:"partitions,omitempty"`
	// Metric names the rate compared: "requests/s", "partition offsets/s" or "MB/s".
	Metric    string  `json:"metric"`
	Muster    float64 `json:"muster"`
	MusterP50 float64 `json:"muster_p50_ms"`
	MusterP99 float64 `json:"muster_p99_ms"`
	Kfake     float64 `json:"kfake"`
	KfakeP50  float64 `json:"kfake_p50_ms"`
	KfakeP99  float64 `json:"kfake_p99_ms"`
	// VsKfake is Muster/Kfake (0 when either is missing). kfake is in memory and never fsyncs.
	VsKfake float64 `json:"muster_vs_kfake"`
	// VsAPIVersions is muster's requests/s over its ApiVersions requests/s at the same
	// connection count: the share of the per-request machine limit reached.
	VsAPIVersions float64 `json:"muster_vs_apiversions"`
	// VsFsync is muster's durable requests/s over the raw 1-thread fsync rate (commit workloads):
	// above 1 means group commit shares fsyncs between requests.
	VsFsync float64 `json:"muster_vs_fsync,omitempty"`
	// VsPebble is muster's requests/s over concurrent 1-record Pebble Sync commits at the same
	// concurrency (commit-1 only): the share of the store's durable-commit limit reached.
	VsPebble float64 `json:"muster_vs_pebble_sync,omitempty"`
	// MusterCPUus is muster's process CPU per request (µs) and RecordsPerFsync its records per
	// WAL fsync during the case (Result.ServerCPUus, Result.RecordsPerFsync); 0 = not measured.
	MusterCPUus float64 `json:"muster_cpu_us_per_request,omitempty"`
	// KfakeCPUus is kfake's process CPU per request (µs, from /proc when it runs as its own
	// process; 0 = not measured).
	KfakeCPUus      float64 `json:"kfake_cpu_us_per_request,omitempty"`
	RecordsPerFsync float64 `json:"muster_records_per_fsync,omitempty"`
	// Baseline is a second muster with other config (--baseline-override), measured case by
	// case next to muster; VsBaseline is Muster/Baseline (higher-is-better metrics).
	Baseline      float64 `json:"baseline,omitempty"`
	BaselineP50   float64 `json:"baseline_p50_ms,omitempty"`
	BaselineP99   float64 `json:"baseline_p99_ms,omitempty"`
	BaselineCPUus float64 `json:"baseline_cpu_us_per_request,omitempty"`
	VsBaseline    float64 `json:"muster_vs_baseline,omitempty"`
}

// BaselineTarget is the name of the second muster target (--baseline-override).
const BaselineTarget = "baseline"

// compare derives the summary rows from the measured results.
func compare(rs []Result) []Comparison {
	type key struct {
		w          string
		n, m, g    int
		partitions int32
	}
	byKey := map[key]map[string]Result{}
	var order []key
	var fsync float64
	pebbleAt := map[int]float64{}
	for _, r := range rs {
		if r.Workload == WFsync {
			if !r.Skipped {
				fsync = r.ReqPerSec
			}
			continue
		}
		if r.Workload == WShardLoad || r.Workload == WShareMemory {
			continue
		}
		if r.Workload == WPebble {
			if !r.Skipped {
				pebbleAt[r.Conns] = r.ReqPerSec
			}
			continue
		}
		k := key{r.Workload, r.Conns, r.Members, r.Groups, r.Partitions}
		if byKey[k] == nil {
			byKey[k] = map[string]Result{}
			order = append(order, k)
		}
		byKey[k][r.Target] = r
	}
	var out []Comparison
	for _, k := range order {
		m, mok := byKey[k]["muster"]
		f, fok := byKey[k]["kfake"]
		c := Comparison{Workload: k.w, Conns: k.n, Members: k.m, Groups: k.g, Partitions: k.partitions, Metric: "requests/s"}
		storm := k.w == WJoinStorm || k.w == WClassicStorm
		rate := func(r Result) float64 {
			switch k.w {
			case WCommitN, WFetchAll:
				return r.UnitsPerSec
			case WProduce, WConsume, WFetchCommitted, WFetchUncommitted:
				return r.UnitsPerSec / 1e6
			case WTxnRecover:
				return r.Seconds
			case WShare, WShareKgo:
				return r.UnitsPerSec
			}
			if storm {
				return r.Seconds * 1000
			}
			return r.ReqPerSec
		}
		switch k.w {
		case WCommitN, WFetchAll:
			c.Metric = "partition offsets/s"
		case WProduce, WConsume, WFetchCommitted, WFetchUncommitted:
			c.Metric = "MB/s"
		case WTxn1, WTxn10:
			c.Metric = "transactions/s"
		case WTxnRecover:
			c.Metric = "s from SIGKILL restart to ready"
		case WShare, WShareKgo:
			c.Metric = "records/s"
		}
		if storm {
			c.Metric = "ms to settle"
		}
		if mok && !m.Skipped {
			c.Muster, c.MusterP50, c.MusterP99 = rate(m), m.P50ms, m.P99ms
			c.MusterCPUus, c.RecordsPerFsync = m.ServerCPUus, m.RecordsPerFsync
		}
		if fok && !f.Skipped {
			c.Kfake, c.KfakeP50, c.KfakeP99 = rate(f), f.P50ms, f.P99ms
			c.KfakeCPUus = f.ServerCPUus
		}
		if bl, ok := byKey[k][BaselineTarget]; ok && !bl.Skipped {
			c.Baseline, c.BaselineP50, c.BaselineP99, c.BaselineCPUus = rate(bl), bl.P50ms, bl.P99ms, bl.ServerCPUus
			if c.Muster > 0 && c.Baseline > 0 {
				c.VsBaseline = c.Muster / c.Baseline
				if storm {
					c.VsBaseline = c.Baseline / c.Muster
				}
			}
		}
		if c.Muster > 0 && c.Kfake > 0 {
			c.VsKfake = c.Muster / c.Kfake
			if storm { // a time: higher is worse, report speed
				c.VsKfake = c.Kfake / c.Muster
			}
		}
		if av, ok := byKey[key{w: WApiVersions, n: k.n}]["muster"]; ok && !av.Skipped && av.ReqPerSec > 0 && mok && !m.Skipped &&
			k.w != WProduce && k.w != WConsume && k.w != WShare && k.w != WShareKgo && !storm {
			c.VsAPIVersions = m.ReqPerSec / av.ReqPerSec
		}
		if fsync > 0 && mok && !m.Skipped && (k.w == WCommit1 || k.w == WCommitN) {
			c.VsFsync = m.ReqPerSec / fsync
		}
		if p := pebbleAt[k.n]; p > 0 && mok && !m.Skipped && k.w == WCommit1 {
			c.VsPebble = m.ReqPerSec / p
		}
		out = append(out, c)
	}
	return out
}

// WriteTable prints the summary table, the fsync reference and the notes.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "muster-bench  %s  %d CPUs  %s %s/%s  %v per case  loadavg %s\n", r.Date, r.Machine.NumCPU,
		r.Machine.GoVersion, r.Machine.OS, r.Machine.Arch, r.Options.Duration, r.Machine.LoadAvg)
	fmt.Fprintf(w, "load generator: %s\n\n", generatorLine(r.Options.Client))
	if len(r.Comparisons) > 0 {
		r.writeComparisons(w)
	}
	r.writeRest(w)
}

func (r *Report) writeComparisons(w io.Writer) {
	if r.Baseline != "" {
		r.writeBaseline(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tconns\tsize\tmetric\tmuster\tp50 ms\tp99 ms\tkfake\tp50 ms\tp99 ms\tmuster/kfake (kfake: in memory, no fsync)\tmuster/ApiVersions\tmuster/fsync\tmuster/pebble-sync\tmuster CPU µs/req\tkfake CPU µs/req\trecords/fsync\t")
	for _, c := range r.Comparisons {
		size := strings.TrimSpace(sizeOf(c.Members, c.Groups, c.Partitions))
		if size == "" {
			size = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Workload, c.Conns, size, c.Metric,
			num(c.Muster), lat(c.MusterP50), lat(c.MusterP99), num(c.Kfake), lat(c.KfakeP50), lat(c.KfakeP99),
			ratio(c.VsKfake), ratio(c.VsAPIVersions), ratio(c.VsFsync), ratio(c.VsPebble), optNum(c.MusterCPUus, 1), optNum(c.KfakeCPUus, 1), optNum(c.RecordsPerFsync, 2))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// writeBaseline prints muster next to the baseline muster (same binary, other config).
func (r *Report) writeBaseline(w io.Writer) {
	fmt.Fprintf(w, "muster vs baseline (%s), case by case in this run:\n", r.Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tconns\tsize\tmetric\tmuster\tp50 ms\tp99 ms\tCPU µs/req\tbaseline\tp50 ms\tp99 ms\tCPU µs/req\tmuster/baseline\t")
	for _, c := range r.Comparisons {
		if c.Baseline == 0 {
			continue
		}
		size := strings.TrimSpace(sizeOf(c.Members, c.Groups, c.Partitions))
		if size == "" {
			size = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Workload, c.Conns, size, c.Metric,
			num(c.Muster), lat(c.MusterP50), lat(c.MusterP99), optNum(c.MusterCPUus, 1),
			num(c.Baseline), lat(c.BaselineP50), lat(c.BaselineP99), optNum(c.BaselineCPUus, 1), ratio(c.VsBaseline))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func (r *Report) writeRest(w io.Writer) {
	for _, res := range r.Results {
		if res.Workload == WFsync && !res.Skipped {
			fmt.Fprintf(w, "raw fsync: %.0f fsyncs/s, p50 %.3f ms, p99 %.3f ms (%s)\n", res.ReqPerSec, res.P50ms, res.P99ms, res.Note)
		}
		if res.Workload == WPebble && !res.Skipped {
			fmt.Fprintf(w, "pebble Sync commits, %d committers: %.0f commits/s, p50 %.3f ms, p99 %.3f ms\n", res.Conns, res.ReqPerSec, res.P50ms, res.P99ms)
		}
	}
	var loads []Result
	for _, res := range r.Results {
		if res.Workload == WShardLoad && !res.Skipped {
			loads = append(loads, res)
		}
	}
	for _, res := range r.Results {
		if res.Workload == WShareMemory && !res.Skipped {
			loads = append(loads, res)
		}
	}
	if len(loads) > 0 {
		fmt.Fprintln(w, "\nshard load and memory (heap in use after a forced GC; RSS; growth per unit over the step):")
		for _, res := range loads {
			fmt.Fprintf(w, "  %-7s %-13s %s\n", res.Target, res.Step, shardLine(res))
		}
	}
	var skipped []Result
	for _, res := range r.Results {
		if res.Skipped || res.Errors > 0 {
			skipped = append(skipped, res)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w)
		for _, res := range skipped {
			if res.Skipped {
				fmt.Fprintf(w, "skipped %s on %s (conns %d): %s\n", res.Workload, res.Target, res.Conns, res.Note)
			} else {
				fmt.Fprintf(w, "%s on %s (conns %d): %d failed requests (%s)\n", res.Workload, res.Target, res.Conns, res.Errors, res.Note)
			}
		}
	}
	fmt.Fprintln(w)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// WriteJSON writes the whole report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func num(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

func lat(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}

// generatorLine describes the load generator of the request workloads for the report header.
func generatorLine(client string) string {
	switch client {
	case ClientKgo:
		return "kgo (one franz-go client per connection, kgo.Broker.Request); produce/consume: franz-go"
	default:
		return "raw (one synchronous TCP connection per connection, kmsg framing); produce/consume: franz-go"
	}
}

// shardLine describes one shard-load result.
func shardLine(r Result) string {
	if r.Step == StepRestart {
		return fmt.Sprintf("%.3f s to /readyz 200, %d records replayed (%.0f records/s); %s", r.Seconds, r.Units, r.UnitsPerSec, r.Note)
	}
	heap := "heap -"
	if r.HeapPerUnit != 0 || r.HeapAfter != 0 {
		heap = fmt.Sprintf("heap %.0f B/%s (%.1f → %.1f MiB)", r.HeapPerUnit, unitSingular(r.UnitName), r.HeapBefore/(1<<20), r.HeapAfter/(1<<20))
	}
	return fmt.Sprintf("%d %s: %s, RSS %.0f B/%s (%.1f → %.1f MiB); seeded at %.0f/s, %d errors; %s",
		r.Units, r.UnitName, heap, r.RSSPerUnit, unitSingular(r.UnitName), r.RSSBefore/(1<<20), r.RSSAfter/(1<<20), r.UnitsPerSec, r.Errors, r.Note)
}

func unitSingular(u string) string {
	switch u {
	case "committed offsets":
		return "offset"
	case "members":
		return "member"
	case "empty groups":
		return "group"
	case "in-flight records":
		return "in-flight record"
	}
	return u
}

// optNum formats v with prec decimals, or "-" when it was not measured (0).
func optNum(v float64, prec int) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
